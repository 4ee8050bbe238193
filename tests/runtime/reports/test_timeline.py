"""The task stream's timeline: bounded whatever the number of attempts, the same picture live
and from the CSV, exact totals and run starts."""

from __future__ import annotations

import random
import sys
from datetime import timedelta
from pathlib import Path

from mlpipe.runtime.reports.observer import StepReports
from mlpipe.runtime.reports.task_stream import read_bars, read_timeline, write_task_stream
from mlpipe.runtime.reports.timeline import FINE, KEPT_BARS, Timeline
from tests.runtime.reports.support import T0, W0, W1, attempt, make_step, summary


def brute_run_starts(spans: list[tuple[float, float]], gap: float, share: float) -> list[float]:
    first, last = min(s for s, _ in spans), max(e for _, e in spans)
    starts, busy_until = [], first
    for start, end in sorted(spans):
        if start - busy_until > gap and start - busy_until > share * (last - first):
            starts.append(start - first)
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


def test_a_dense_timeline_is_bounded_and_keeps_exact_totals_and_run_starts() -> None:
    sizes = []
    for count in (KEPT_BARS + 1, 60_000):
        timeline = Timeline()
        attempts = synthetic(count)
        for process, start, seconds, status in attempts:
            timeline.add(process, start, seconds, status)
        assert timeline.bars() is None and timeline.count == count
        sizes.append(sum(sys.getsizeof(value) for value in vars(timeline).values()
                         if not isinstance(value, dict))
                     + sum(sys.getsizeof(array) for series in (timeline._busy, timeline._started,
                                                               timeline._failed)
                           for array in series.values()))
        for process, totals in timeline.totals.items():
            mine = [a for a in attempts if a[0] == process]
            assert totals.attempts == len(mine)
            assert totals.failed == sum(a[3] != "Succeeded" for a in mine)
            assert abs(sum(timeline.busy(process, 400)) - totals.busy) < 1e-6 * len(mine)
            counts, failed = timeline.started(process, 400)
            assert (sum(counts), sum(failed)) == (totals.attempts, totals.failed)
        spans = [(start, start + seconds) for _, start, seconds, _ in attempts]
        assert timeline.run_starts(5.0, 0.05) == brute_run_starts(spans, 5.0, 0.05)
        assert len(timeline.run_starts(5.0, 0.05)) == 1  # the second run
        assert sum(timeline.ended(60)) == count
    assert sizes[1] == sizes[0] and sizes[0] < 40 * FINE * 3  # the same grid for 20x the attempts


def test_up_to_3000_attempts_are_bars_in_the_order_added() -> None:
    timeline = Timeline()
    for process, start, seconds, status in synthetic(100):
        timeline.add(process, start, seconds, status, "label")
    bars = timeline.bars()
    assert bars is not None and len(bars) == 100 and min(bar.start for bar in bars) == 0.0


def test_the_live_task_stream_is_the_one_drawn_from_the_csv(tmp_path: Path) -> None:
    for count in (40, KEPT_BARS + 500):
        step = make_step(tmp_path / str(count))
        reports = StepReports(step)
        reports.step_started(step, [W0, W1], T0)
        for n in range(count):
            record = attempt(n, worker=(W0, W1)[n % 2], elapsed=0.25 + (n % 7) / 100,
                             status="Failed" if n % 11 == 0 else "Succeeded",
                             message="ValueError: bad" if n % 11 == 0 else None)
            reports.attempt_finished(record._replace(start_time=T0 + timedelta(seconds=n / 4)))
        reports.step_finished(summary(mini_batches_total=count))
        logs = Path(step.logs_dir)
        live = (logs / "sys" / "task_stream.html").read_text()
        assert write_task_stream(logs, tmp_path / "again.html").read_text() == live
        assert f"{count} attempts over" in live
        if count <= KEPT_BARS:
            csv_path = logs / "sys" / "job_report" / "processed_mini-batches.csv"
            bars = read_timeline(csv_path).bars()
            assert bars is not None and [b.label for b in bars] == [
                b.label for b in read_bars(csv_path)]
