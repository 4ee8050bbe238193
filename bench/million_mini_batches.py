"""Benchmark: 1,000,000 one-file mini-batches through ``mlpipe job create``, against bare loky.

    python bench/million_mini_batches.py [--n 1000000] [--root DIR] [--hogs 2]

Creates ``--n`` empty files once under /tmp (the folder ``listing_1m_files.py`` uses;
reused when present). Then, each as a child process measured from outside
(``through_command.measure``: its own peak RSS and CPU):

* mlpipe: ``mlpipe job create --file pipeline.yml --no-progress`` of a pipeline with one
  parallel step over the folder, ``mini_batch_size: 1`` and a ``run()`` that returns its
  mini-batch (append_row on): everything a user's job does (listing, journal, reports,
  ``job.json``, the counters, report.html while it runs and at its end), the progress
  display off;
* bare loky: the sorted file list, then the same trivial function called once per file on
  a 2-worker ``get_reusable_executor`` (256 calls in flight).

Prints mini-batches/s of both (from the first call's start to the last one's end: worker
start-up excluded on both sides; mlpipe's from its processed_mini-batches.csv, read after
the job) and their ratio, each whole process's wall time, peak RSS and CPU (the driver's
CPU per mini-batch), mlpipe's rate per window of 20,000 mini-batches, its start-up (the
process's start to the first mini-batch) and teardown (the last mini-batch's end to the
process's exit), and the bookkeeping the step leaves outside ``outputs/`` and ``logs/``.
Targets, each with PASS or FAIL: the 1,000,000 end to end under 30 s on 2 cores (the full
run only, on a quiet machine); the command's peak RSS under 300 MB; the rate flat (the
median of the last quarter of the windows within 20 % of the first quarter's); rate above
4 x bare loky; under 100 bytes and no file of bookkeeping per mini-batch.

``--hogs N`` keeps N busy-looping processes running through both sides (a loaded machine:
the ratios must hold there). The load averages are printed before and after; on a shared
machine compare the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from through_command import (  # noqa: E402
    REPO,
    attempts_window,
    check,
    job_create,
    load,
    measure,
    rates_per_window,
    step_logs,
    write_job,
)

WORKERS = 2
IN_FLIGHT = 256
WINDOW = 20_000  # mini-batches per window of the flatness check
SECONDS_PER_MILLION = 30.0  # target: the whole command, start-up, listing and reports included
PEAK_RSS_MB = 300.0
LOKY_RATIO = 4.0
FLAT_WITHIN = 0.20
SCRIPT = "def run(mini_batch):\n    return mini_batch\n"


def trivial(mini_batch: list[str]) -> list[str]:
    """What both sides run for each mini-batch."""
    return mini_batch


def child_loky(root: str) -> None:
    """The baseline, in its own process: prints its window and count as JSON."""
    from collections import deque  # noqa: PLC0415

    from joblib.externals.loky import get_reusable_executor  # noqa: PLC0415

    paths = sorted(entry.path for entry in os.scandir(root)
                   if entry.is_file() and not entry.name.startswith("."))
    executor = get_reusable_executor(max_workers=WORKERS)
    executor.submit(trivial, []).result()  # workers up before the clock starts
    first = time.time()
    in_flight: deque[Any] = deque()
    done = 0
    for path in paths:
        in_flight.append(executor.submit(trivial, [path]))
        if len(in_flight) >= IN_FLIGHT:
            done += len(in_flight.popleft().result())
    while in_flight:
        done += len(in_flight.popleft().result())
    end = time.time()
    executor.shutdown(wait=True)
    print(json.dumps({"count": done, "first": first, "last": end}))


def start_hogs(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(count)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="mini-batches (files)")
    parser.add_argument("--root", default=None, help="input folder (created once, reused)")
    parser.add_argument("--hogs", type=int, default=0,
                        help="busy-looping processes kept running through both sides")
    parser.add_argument("--child", choices=("loky",), help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = Path(args.root or f"/tmp/mlpipe-bench-{args.n}-flat")
    if args.child:
        child_loky(str(root))
        return 0
    from listing_1m_files import create_files  # noqa: PLC0415

    create_files(root, args.n, "flat")
    print(f"cpu_count={os.cpu_count()} load before={load()}"
          + (f"; {args.hogs} CPU hogs running" if args.hogs else "")
          + " (other processes slow both sides: compare the ratios)")
    hogs = start_hogs(args.hogs)
    try:
        with tempfile.TemporaryDirectory(prefix="mlpipe-million-") as tmp:
            folder = Path(tmp)
            pipeline = write_job(folder / "job", root, SCRIPT, workers=WORKERS)
            runs = folder / "runs"
            mine = job_create(pipeline, runs, "--no-progress", "-o", "none")
            window = attempts_window(step_logs(runs), every=WINDOW)
            step_dir = runs / "bench" / "bench"
            from mlpipe.runtime.journal import bookkeeping  # noqa: PLC0415

            files, size = bookkeeping(step_dir)
            with open(step_dir / "outputs" / "out" / "parallel_run_step.txt", "rb") as rows_file:
                rows = sum(1 for _ in rows_file)
        loky = check(measure([sys.executable, __file__, "--child", "loky", "--root", str(root)]),
                     "the loky baseline")
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    baseline = json.loads(loky.stdout.strip().splitlines()[-1])
    assert window.count == rows == baseline["count"] == args.n, (window.count, rows, baseline)
    rate_m = window.count / window.seconds
    rate_l = baseline["count"] / (baseline["last"] - baseline["first"])
    per_bytes, per_files = size / args.n, files / args.n
    print(f"load after={load()}")
    print(f"\n{args.n:,} one-file mini-batches, {WORKERS} workers; mlpipe = "
          "`mlpipe job create --no-progress` (a child process)")
    print(f"{'':40}{'mlpipe':>12}{'bare loky':>12}{'ratio':>8}")
    print(f"{'mini-batches/s':40}{rate_m:12.0f}{rate_l:12.0f}{rate_m / rate_l:8.2f}")
    print(f"{'wall of the whole process (s)':40}{mine.wall:12.1f}{loky.wall:12.1f}"
          f"{loky.wall / mine.wall:8.2f}")
    print(f"{'peak RSS of the process (MB)':40}{mine.peak_rss_mb:12.0f}{loky.peak_rss_mb:12.0f}")
    print(f"{'CPU of the process (s)':40}{mine.cpu:12.1f}{loky.cpu:12.1f}")
    print(f"{'CPU of its workers (s)':40}{mine.children_cpu:12.1f}{loky.children_cpu:12.1f}")
    print(f"{'driver CPU per mini-batch (us)':40}{mine.cpu / args.n * 1e6:12.1f}"
          f"{loky.cpu / args.n * 1e6:12.1f}")
    print(f"{'start to first mini-batch (s)':40}{window.first_start - mine.started:12.2f}"
          f"{baseline['first'] - loky.started:12.2f}")
    print(f"{'last mini-batch to exit (s)':40}{mine.ended - window.last_end:12.2f}"
          f"{loky.ended - baseline['last']:12.2f}")
    print(f"{'bookkeeping: bytes on disk':40}{size:12,.0f}   ({per_bytes:.1f} per mini-batch)")
    print(f"{'bookkeeping: files and folders':40}{files:12,.0f}   "
          f"({per_files:.6f} per mini-batch)")
    rates = rates_per_window(window.marks, window.first_start, WINDOW)
    if rates:
        print(f"mlpipe mini-batches/s per window of {WINDOW:,}: "
              + " ".join(f"{rate:.0f}" for rate in rates))
    checks = {f"peak RSS of the command < {PEAK_RSS_MB:g} MB": mine.peak_rss_mb < PEAK_RSS_MB,
              f"rate flat (last quarter's windows within {FLAT_WITHIN:.0%} of the first's)":
                  _flat(rates),
              f"rate > {LOKY_RATIO:g} x bare loky": rate_m > LOKY_RATIO * rate_l,
              "< 100 bytes of bookkeeping per mini-batch": per_bytes < 100,
              "no bookkeeping file per mini-batch": files < 500}
    if args.n >= 1_000_000:  # start-up is not scaled: the target is the million's
        checks[f"end to end < {SECONDS_PER_MILLION:g} s"] = mine.wall < SECONDS_PER_MILLION
    print("\ntargets:")
    for name, ok in checks.items():
        print(f"  {'PASS' if ok else 'FAIL'}  {name}")
    return 0 if all(checks.values()) else 1


def _flat(rates: list[float]) -> bool:
    """The median rate of the last quarter of the windows is no more than FLAT_WITHIN below
    that of the first quarter (medians: one window is at the mercy of other processes)."""
    if len(rates) < 2:
        return True
    quarter = max(1, len(rates) // 4)
    return statistics.median(rates[-quarter:]) >= (1 - FLAT_WITHIN) * statistics.median(
        rates[:quarter])


if __name__ == "__main__":
    os.chdir(REPO)
    sys.exit(main())
