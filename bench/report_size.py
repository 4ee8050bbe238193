"""report.html of a 100,000-attempt step: its size and the time to write it.

Runs 100,000 attempts (8 workers, 1 % failing with messages that name their file, a few
timeouts) through the real StepReports, so the step has every file the page reads
(processed_mini-batches.csv, runs.json, summaries), records the job, then times
write_job_report next to a baseline measured in the same process: pandas.read_csv of the
same processed_mini-batches.csv (the least a page drawn from that file must cost).
Prints the page's size and the median of 5 warm writes, the first (cold: imports
included) write, and the ratio to the baseline. Targets: under 100 KB, under 1 s.
Run: python bench/report_size.py [--attempts N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mlpipe.plan import ParallelStep, PrsOptions, RetrySettings  # noqa: E402
from mlpipe.runtime.records import AttemptRecord, StepSummary, WorkerInfo  # noqa: E402
from mlpipe.runtime.reports.observer import StepReports  # noqa: E402
from mlpipe.sizes import parse_mini_batch_size  # noqa: E402

WORKERS = [WorkerInfo(0, f"process{i:03d}", os.getpid()) for i in range(8)]
START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def make_job(root: Path, attempts: int) -> Path:
    step = ParallelStep(name="score", step_dir=str(root / "score"),
                        mini_batch_size=parse_mini_batch_size("1"), instance_count=1,
                        max_concurrency_per_instance=8, retry=RetrySettings(max_retries=0),
                        prs=PrsOptions(resource_monitor_interval=0))
    reports = StepReports(step)
    reports.step_started(step, WORKERS, START)
    reports.mini_batches_scheduled(attempts, True)
    failed = 0
    for n in range(attempts):
        bad = n % 100 == 7
        timeout = n % 997 == 3
        failed += bad or timeout
        status = "Timeout" if timeout else "Failed" if bad else "Succeeded"
        reports.attempt_finished(AttemptRecord(
            mini_batch_id=f"mb{n:06d}", mini_batch_index=n, picked_count=1,
            worker=WORKERS[n % 8], start_time=START + timedelta(seconds=(n // 8) * 0.02),
            total=1, succeeded=0 if bad or timeout else 1, failed=1 if bad or timeout else 0,
            elapsed_seconds=0.019, process_seconds=0.015, run_method_seconds=0.017,
            status=status,  # type: ignore[arg-type]
            error_category="Timeout" if timeout else "UserError" if bad else None,
            error_message=("run() did not finish within 60 s" if timeout else
                           f"ValueError: cannot score f{n:06d}.txt" if bad else None),
            traceback=(f'Traceback (most recent call last):\n  File "/code/score.py", line 9, '
                       f"in run\nValueError: cannot score f{n:06d}.txt" if bad else None),
            detail={"files": [f"/data/f{n:06d}.txt"]}, load_seconds=0.001))
    end = START + timedelta(seconds=attempts / 8 * 0.02 + 1)
    reports.step_finished(StepSummary("Completed", mini_batches_total=attempts,
                                      mini_batches_succeeded=attempts - failed,
                                      mini_batches_failed=failed, items_total=attempts,
                                      items_succeeded=attempts - failed, items_failed=failed,
                                      started_at=START, ended_at=end))
    summary = {"mini_batches_total": attempts, "mini_batches_succeeded": attempts - failed,
               "mini_batches_failed": failed, "items_total": attempts,
               "items_succeeded": attempts - failed, "items_failed": failed}
    (root / "job.json").write_text(json.dumps({
        "name": root.name, "status": "completed", "run_dir": str(root),
        "started_at": START.isoformat(), "ended_at": end.isoformat(),
        "duration_seconds": (end - START).total_seconds(),
        "steps": {"score": {"kind": "parallel", "status": "completed", "logs_dir": step.logs_dir,
                            "started_at": START.isoformat(), "ended_at": end.isoformat(),
                            "summary": summary}}}))
    return Path(step.logs_dir) / "sys" / "job_report" / "processed_mini-batches.csv"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "big"
        csv_path = make_job(root, args.attempts)
        from mlpipe.jobs.report import write_job_report  # noqa: PLC0415

        began = time.perf_counter()
        page = write_job_report(root)
        cold = time.perf_counter() - began
        warm = []
        for _ in range(5):
            began = time.perf_counter()
            write_job_report(root)
            warm.append(time.perf_counter() - began)
        import pandas  # noqa: PLC0415

        baseline = []
        for _ in range(5):
            began = time.perf_counter()
            pandas.read_csv(csv_path)
            baseline.append(time.perf_counter() - began)
        size = page.stat().st_size
        median, base = statistics.median(warm), statistics.median(baseline)
        print(f"{args.attempts} attempts: report.html {size / 1000:.1f} KB (target < 100 KB)")
        print(f"write_job_report: {median:.3f} s median of 5 warm (target < 1 s), "
              f"{cold:.3f} s cold (imports included)")
        print(f"baseline pandas.read_csv of processed_mini-batches.csv: {base:.3f} s; "
              f"ratio report / baseline {median / base:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
