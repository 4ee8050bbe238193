"""The task stream's timeline: bounded whatever the number of attempts, exact totals and run
starts, and at a step's end the page the CSV would give."""

from __future__ import annotations

import random
import re
import sys
from datetime import timedelta
from pathlib import Path

from mlpipe.runtime.reports.charts import BUCKETS
from mlpipe.runtime.reports.observer import StepReports
from mlpipe.runtime.reports.task_stream import write_task_stream
from mlpipe.runtime.reports.timeline import FINE, KEPT, Timeline
from tests.runtime.reports.support import T0, W0, W1, attempt, make_step, summary


def brute_run_starts(spans: list[tuple[float, float]], gap: float, share: float) -> list[float]:
    first, last = min(s for s, _ in spans), max(e for _, e in spans)
    starts, busy_until = [], first
    for start, end in sorted(spans):
        if start - busy_until > gap and start - busy_until > share * (last - first):
            starts.append(start)
        busy_until = max(busy_until, end)
    return starts


def synthetic(count: int, seed: int = 7) -> list[tuple[str, float, float, str]]:
    """Attempts finishing roughly in time order (some long ones started early), two runs."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        start = 1_700_000_000.0 + n * 0.01 + (5000.0 if n >= count // 2 else 0.0)
        seconds = 3.0 if n % 97 == 0 else rng.uniform(0.001, 0.03)
        out.append((f"0/process{n % 3:03d}", start, seconds,
                    "Failed" if n % 13 == 0 else "Succeeded"))
    rng.shuffle(out[: count // 4])  # rows written out of start order
    return out


def held_bytes(timeline: Timeline) -> int:
    arrays = [*timeline._busy.values(), *timeline._started.values(), *timeline._failed.values(),
              timeline._min_start, timeline._max_end]
    return sum(map(sys.getsizeof, arrays))


def test_a_dense_timeline_is_bounded_and_keeps_exact_totals_and_run_starts() -> None:
    sizes = []
    for count in (KEPT + 1, 60_000):
        timeline = Timeline()
        attempts = synthetic(count)
        for process, start, seconds, status in attempts:
            timeline.add(process, start, seconds, status)
        for process, totals in timeline.totals.items():
            mine = [a for a in attempts if a[0] == process]
            assert totals.attempts == len(mine)
            assert totals.failed == sum(a[3] != "Succeeded" for a in mine)
            assert abs(sum(timeline.busy(process, BUCKETS)) - totals.busy) < 1e-6 * len(mine)
            counts, failed = timeline.started(process, BUCKETS)
            assert (sum(counts), sum(failed)) == (totals.attempts, totals.failed)
        spans = [(start, start + seconds) for _, start, seconds, _ in attempts]
        assert timeline.run_starts(5.0, 0.05) == brute_run_starts(spans, 5.0, 0.05)
        assert len(timeline.run_starts(5.0, 0.05)) == 1  # the second run
        sizes.append(held_bytes(timeline))
    assert sizes[1] == sizes[0] < 40 * FINE * 3  # the same grid for 100 times the attempts


def test_at_a_dense_steps_end_the_page_is_the_one_the_csv_gives(tmp_path: Path) -> None:
    """StepReports draws a large step from its timeline; redrawn from the CSV, the page says
    the same: counts, totals, lanes, the same buckets where a few attempts would not move
    a shade."""
    step = make_step(tmp_path)
    reports = StepReports(step)
    reports.step_started(step, [W0, W1], T0)
    count = 3 * KEPT
    for n in range(count):
        record = attempt(n, worker=(W0, W1)[n % 2], elapsed=0.25,
                         status="Failed" if n % 11 == 0 else "Succeeded",
                         message="ValueError: bad" if n % 11 == 0 else None)
        reports.attempt_finished(record._replace(start_time=T0 + timedelta(seconds=n / 8)))
    reports.step_finished(summary(mini_batches_total=count))
    live = (Path(step.logs_dir) / "sys" / "task_stream.html").read_text()
    again = write_task_stream(step.logs_dir, tmp_path / "again.html").read_text()
    assert f"{count} attempts over" in live and "per worker process and time bucket" in live

    def table(page: str) -> list[str]:
        return re.findall(r"<tr><td>0/process00\d</td>.*?</tr>", page)

    def shapes(page: str) -> list[str]:
        return re.findall(r'fill-opacity="[\d.]+"', page)

    assert table(live) == table(again) and len(table(live)) == 2
    assert shapes(live) == shapes(again)
    assert live.count("failed attempts</title>") == again.count("failed attempts</title>") == 2
