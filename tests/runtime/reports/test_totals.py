"""The total of a step is known early (a counting pass) and done never exceeds it: the bar,
``job show``, ``job stream`` and the overview, on real steps of 3,000 one-file mini-batches."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from mlpipe.data.batches import count_mini_batches, iter_mini_batches
from mlpipe.frozen import freeze
from mlpipe.plan import PlanInput
from mlpipe.runtime import run_parallel_step
from mlpipe.runtime.reports.progress_bar import ProgressDisplay
from mlpipe.sizes import parse_mini_batch_size
from tests.conftest import REPO, run_cli
from tests.runtime.support import make_step

FILES = 3000
GATED = """\
import os, time

def init():
    pass

def run(mini_batch):
    while not os.path.exists(os.environ["GATE"]):  # nothing finishes before the test's gate
        time.sleep(0.05)
    return [os.path.basename(p) for p in mini_batch]
"""


def wait_for(predicate, timeout: float = 180.0, what: object = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what() if callable(what) else what}"
        time.sleep(0.05)


def many_files(folder: Path, count: int = FILES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (folder / f"f{i:04d}.txt").write_text(f"{i}\n")
    return folder


def fractions(text: str) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in re.findall(r"(\d+)/(\d+) mini-batches", text)]


def test_counting_pass_matches_the_stream(tmp_path: Path) -> None:
    data = many_files(tmp_path / "data", 25)
    table = tmp_path / "table"
    table.mkdir()
    pd.DataFrame({"a": range(5000), "k": [i % 7 for i in range(5000)]}).to_csv(
        table / "t.csv", index=False)
    (table / "MLTable").write_text("paths:\n  - file: ./t.csv\ntransformations:\n"
                                   "  - read_delimited:\n      delimiter: ','\n")
    cases = [
        make_step(tmp_path / "a", GATED, inputs=freeze({"d": PlanInput("d", "uri_folder",
                  path=str(data))}), input_data="d", mini_batch_size=parse_mini_batch_size("4")),
        make_step(tmp_path / "b", GATED, inputs=freeze({"t": PlanInput("t", "mltable",
                  path=str(table))}), input_data="t", mini_batch_size=parse_mini_batch_size("4kb")),
        make_step(tmp_path / "c", GATED, inputs=freeze({"t": PlanInput("t", "mltable",
                  path=str(table))}), input_data="t", partition_keys=["k"]),
    ]
    for step in cases:
        assert count_mini_batches(step) == len(list(iter_mini_batches(step))) > 1


def test_bar_shows_the_total_early_and_done_never_exceeds_it(tmp_path: Path,
                                                             monkeypatch) -> None:
    data = many_files(tmp_path / "data")
    gate = tmp_path / "gate"
    monkeypatch.setenv("GATE", str(gate))
    step = make_step(tmp_path, GATED, inputs=freeze({"d": PlanInput("d", "uri_folder",
                     path=str(data))}), input_data="d", mini_batch_size=parse_mini_batch_size("1"),
                     environment_variables=freeze({"GATE": str(gate)}))
    console = Console(file=io.StringIO(), record=True, force_terminal=True, width=200,
                      color_system=None)
    display = ProgressDisplay(step, console=console)
    cancel = threading.Event()
    runner = threading.Thread(target=run_parallel_step, args=(step,),
                              kwargs={"progress": False, "observers": [display], "cancel": cancel})
    runner.start()
    try:
        seen: list[str] = []

        def total_shown() -> bool:
            line = display.status_line()
            seen.append(line)
            return f"0/{FILES} mini-batches (0%" in line

        wait_for(total_shown, what="the total in the bar")  # counted while nothing finished
        assert not display.counters.listing_done
        gate.touch()
        wait_for(lambda: display.counters.done >= 100, what="100 mini-batches")
        line = display.status_line()
        assert f"/{FILES} mini-batches (" in line and "%" in line and "ETA ?" not in line
        assert display.counters.done < FILES  # the total came from counting, not the listing
        for text in seen + [line]:
            assert all(done <= total for done, total in fractions(text)), text
    finally:
        cancel.set()
        gate.touch()
        runner.join(120)
    rendered = console.export_text()
    assert all(done <= total for done, total in fractions(rendered))
    overview = next((Path(step.logs_dir)).glob("job_progress_overview.*.txt")).read_text()
    scheduled = int(re.search(r"Mini-batches scheduled: (\d+)", overview).group(1))
    final = re.search(r"Mini-batches: (\d+) total, (\d+) succeeded, (\d+) failed, (\d+) not "
                      r"processed", overview)
    assert final is not None, overview  # the canceled step's totals: the input's, counted
    total, succeeded, failed, rest = map(int, final.groups())
    assert total == FILES and succeeded + failed + rest == FILES
    assert succeeded + failed <= scheduled


@pytest.mark.slow  # runs whole jobs: CI's second stage
def test_job_show_and_stream_know_the_total_while_running(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    many_files(folder / "data")
    (folder / "src").mkdir()
    (folder / "src" / "score.py").write_text(GATED)
    gate = tmp_path / "gate"
    (folder / "pipeline.yml").write_text(textwrap.dedent(f"""\
        type: pipeline
        jobs:
          score:
            type: parallel
            inputs:
              files: {{type: uri_folder, path: ./data}}
            outputs:
              rows: {{type: uri_file}}
            input_data: ${{{{inputs.files}}}}
            mini_batch_size: "1"
            max_concurrency_per_instance: 2
            environment_variables:
              GATE: {gate}
            task:
              type: run_function
              code: ./src
              entry_script: score.py
              environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest
              append_row_to: ${{{{outputs.rows}}}}
        """))
    runs = tmp_path / "runs"
    env = {"PYTHONPATH": str(REPO), "MLPIPE_RUNS_DIR": str(runs)}
    import os

    job = subprocess.Popen([sys.executable, "-m", "mlpipe", "job", "create", "--file",
                            str(folder / "pipeline.yml"), "--name", "counted", "--runs-dir",
                            str(runs)], env={**os.environ, **env}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    stream = None
    try:
        wait_for(lambda: (runs / "counted" / "job.json").exists(), what="job.json")
        streamed_file = tmp_path / "stream.txt"
        stream = subprocess.Popen([sys.executable, "-m", "mlpipe", "job", "stream", "counted"],
                                  env={**os.environ, **env},
                                  stdout=streamed_file.open("w", encoding="utf-8"),
                                  stderr=subprocess.PIPE, text=True)
        shown: list[str] = []

        def show_has(pattern: str) -> bool:
            out = run_cli("job", "show", "counted", "--runs-dir", str(runs)).stdout
            shown.append(out)
            return re.search(pattern, out) is not None

        wait_for(lambda: show_has(rf"\b0/{FILES} \(0%\) mini-batches"),
                 what=lambda: "job show with the total: " + (shown[-1] if shown else ""))
        wait_for(lambda: re.search(rf"\b0/{FILES} \(0%\) mini-batches",
                                   streamed_file.read_text(encoding="utf-8")) is not None,
                 what=lambda: "job stream with the total: "
                 + streamed_file.read_text(encoding="utf-8"))
        gate.touch()
        # running ("734/3000 (24%) mini-batches") or, on a busy machine, already completed
        # between two polls ("3000 of 3000 mini-batches succeeded")
        wait_for(lambda: show_has(rf"\b[1-9]\d\d+(/| of ){FILES} (\(\d+%\) )?mini-batches"),
                 what=lambda: "100 done: " + shown[-1])
        for out in shown:
            for done, total in re.findall(r"(\d+)/(\d+) \(\d+%\) mini-batches", out):
                assert int(done) <= int(total) == FILES
    finally:
        gate.touch()
        run_cli("job", "cancel", "counted", "--runs-dir", str(runs))
        job.wait(180)
    assert stream is not None
    stream.communicate(timeout=180)
    streamed = streamed_file.read_text(encoding="utf-8")
    totals = re.findall(r"(\d+)/(\d+) \(\d+%\) mini-batches", streamed)
    assert totals, streamed
    assert all(int(done) <= int(total) == FILES for done, total in totals), streamed


def test_job_views_fraction_counts_reused_and_never_exceeds_the_total() -> None:
    from mlpipe.cli.job_views import progress_fraction as shown
    from mlpipe.jobs.record import ProgressRecord

    def progress_fraction(progress: dict[str, object]) -> str:
        return shown(ProgressRecord.model_validate(progress))

    assert progress_fraction({"mini_batches_done": 607, "mini_batches_known": 700}) == "607/?"
    assert progress_fraction({"mini_batches_done": 864, "mini_batches_known": 773,
                              "mini_batches_total": 773}) == "773/773 (100%)"
    assert progress_fraction({"mini_batches_done": 600, "mini_batches_reused": 933,
                              "mini_batches_known": 1600, "mini_batches_total": 3000}) == (
        "1533/3000 (51%) (933 reused)")
    assert progress_fraction({"mini_batches_done": 5, "mini_batches_known": 5,
                              "listing_done": True}) == "5/5 (100%)"
