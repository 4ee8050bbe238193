"""The icicle chart of report.html, drawn from real ``pstats`` files."""

from __future__ import annotations

import cProfile
import re
import time
from pathlib import Path

from mlpipe.runtime.reports.icicle import icicle


def _leaf(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _middle() -> None:
    _leaf(0.06)
    _leaf(0.02)


def run(mini_batch: list[str]) -> list[str]:
    _middle()
    _leaf(0.04)
    return mini_batch


def test_boxes_are_as_wide_as_their_time_below_their_callers(tmp_path: Path) -> None:
    files = []
    for n in range(2):  # two workers' profiles are added up
        profiler = cProfile.Profile()
        profiler.runcall(run, ["a"])
        path = tmp_path / "sys" / "profile" / "0" / f"process00{n}.prof"
        path.parent.mkdir(parents=True, exist_ok=True)
        profiler.dump_stats(str(path))
        files.append(path)
    chart = icicle(files)
    boxes = {title.split(" (")[0]: (float(x), float(width), int(y)) for x, y, width, title in
             re.findall(r'<rect x="([\d.]+)" y="(\d+)" width="([\d.]+)" height="\d+" '
                        r'fill="#\w+"><title>([^<]*)</title>', chart)}
    assert {"run", "_middle", "_leaf"} <= set(boxes)
    run_x, run_w, run_y = boxes["run"]
    middle_x, middle_w, middle_y = boxes["_middle"]
    assert run_y == 0 and middle_y > run_y  # callees below their caller
    assert middle_w < run_w and run_x <= middle_x < run_x + run_w
    assert 0.55 < middle_w / run_w < 0.8  # 80 of 120 ms in _middle
    assert icicle([tmp_path / "missing.prof"]) == ""
