"""Cost of the driver-side reports per mini-batch.

Feeds 20,000 successful AttemptRecords (and 2,000 failed ones) through
StepReports and ProgressDisplay, next to a no-op observer, and prints the time
per record and the records/s each could sustain. The runtime's target is
>= 5,000 mini-batches/s end to end, so the reports should cost well under
200 us per record. Run: python bench/reports_overhead.py
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mlpipe.plan import ParallelStep, PrsOptions  # noqa: E402
from mlpipe.runtime.records import AttemptRecord, StepSummary, WorkerInfo  # noqa: E402
from mlpipe.runtime.reports.observer import StepReports  # noqa: E402
from mlpipe.runtime.reports.progress_bar import ProgressDisplay  # noqa: E402

N = 20_000
WORKERS = [WorkerInfo(0, f"process{i:03d}", os.getpid()) for i in range(2)]
NOW = datetime.now(timezone.utc)


def records(n: int, failed: bool = False) -> list[AttemptRecord]:
    return [AttemptRecord(
        mini_batch_id=f"{i:08d}", mini_batch_index=i, picked_count=1, worker=WORKERS[i % 2],
        start_time=NOW, total=1, succeeded=0 if failed else 1, failed=1 if failed else 0,
        elapsed_seconds=0.0002, process_seconds=0.0001, run_method_seconds=0.00005,
        status="Failed" if failed else "Succeeded",
        error_category="UserError" if failed else None,
        error_message="ValueError: boom" if failed else None,
        traceback="Traceback (most recent call last):\n  ...\nValueError: boom" if failed else None,
        detail={"files": [f"/data/{i}.png"]}) for i in range(n)]


class NoOp:
    def step_started(self, *a): pass
    def mini_batches_scheduled(self, *a): pass
    def attempt_finished(self, record): pass
    def worker_event(self, *a): pass
    def step_finished(self, *a): pass


def timed(observer, recs: list[AttemptRecord], step: ParallelStep) -> float:
    observer.step_started(step, WORKERS, NOW)
    observer.mini_batches_scheduled(len(recs), True)
    start = time.perf_counter()
    for record in recs:
        observer.attempt_finished(record)
    per_loop = time.perf_counter() - start
    observer.step_finished(StepSummary("Completed", mini_batches_total=len(recs)))
    return per_loop


def main() -> None:
    ok, bad = records(N), records(N // 10, failed=True)
    with tempfile.TemporaryDirectory() as tmp:
        step = ParallelStep(name="bench", step_dir=str(Path(tmp) / "bench"),
                            prs=PrsOptions(resource_monitor_interval=1))
        rows = [
            ("no-op observer", timed(NoOp(), ok, step), N),
            ("StepReports, successes", timed(StepReports(step), ok, step), N),
            ("StepReports, failures", timed(StepReports(step), bad, step), len(bad)),
            ("ProgressDisplay plain", timed(ProgressDisplay(step, io.StringIO()), ok, step), N),
        ]
    base = rows[0][1] / rows[0][2]
    print(f"{'observer':28s} {'us/record':>10s} {'records/s':>12s} {'x no-op':>8s}")
    for name, seconds, count in rows:
        per = seconds / count
        print(f"{name:28s} {per * 1e6:10.2f} {1 / per:12,.0f} {per / base:8.1f}")


if __name__ == "__main__":
    main()
