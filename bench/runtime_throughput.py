"""Runtime throughput through ``mlpipe job create``, against bare loky.

    python bench/runtime_throughput.py [--quick] [--pairs 3] [--dask]

Every figure of mlpipe is the user's command, ``mlpipe job create --file pipeline.yml``, run
as a child process on a pseudo-terminal (the live progress bar drawn, as a user sees it;
report.html, job.json and the counters as always) and measured from outside: its wall time,
its own peak RSS and CPU (``through_command.measure``). Bare loky is a child process too:
``get_reusable_executor(max_workers=2)`` and a loop of ``submit``.

(a) 20,000 one-file mini-batches, a no-op run(), 2 workers: mini-batches per second from the
    first task's start to the last one's end on both sides (worker start-up excluded).
    Targets: >= 5,000/s and above bare loky.
(b) 400 mini-batches of about 20 ms of pure-Python work, 2 workers, ``--pairs`` pairs of
    whole processes, mlpipe and loky in turn: loky's wall / mlpipe's, start-up and teardown
    included (target >= 1.0, the median of the pairs), mlpipe against the ideal (the work of
    a serial loop timed here, divided by the workers: target within 0.3 s), and what the
    driver spends: its CPU in all and per second of the job, and per second of the step as
    its job_result.txt says (target under 2 % of one core), the start to the first
    mini-batch, the last mini-batch to the process's exit.

Ends with a PASS or FAIL line per target (the timings hold on a quiet machine only; the
load is printed with them) and exits 1 when one fails.

``--dask`` adds (a) and (b) through ``mlpipe job create --backend dask`` (the command starts
its LocalCluster). The load averages are printed with each part: on a shared machine
compare the columns of one run, not runs with each other.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from through_command import (  # noqa: E402
    Measured,
    attempts_window,
    check,
    job_create,
    load,
    make_files,
    measure,
    step_logs,
    write_job,
)

WORKERS = 2
WORK_SECONDS = 0.02
IDEAL_WITHIN = 0.3  # seconds over work / workers
DRIVER_SHARE = 0.02  # of one core, while the step runs


def spin(n: int) -> int:
    """About WORK_SECONDS of pure-Python work for the calibrated ``n``."""
    total = 0
    for i in range(n):
        total += i * i
    return total


def noop(*_: object) -> None:
    return None


def calibrate() -> int:
    """The ``n`` for which spin(n) takes WORK_SECONDS (best of 5: the machine is shared)."""
    n = 100_000
    while True:
        took = min(_timed(spin, n) for _ in range(5))
        if took > 0.005:
            return max(1, int(n * WORK_SECONDS / took))
        n *= 4


def _timed(fn: Callable[..., object], *args: object) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


SCRIPT = """\
import os

N = int(os.environ["SPIN_N"])


def run(mini_batch):
    total = 0
    for i in range(N):
        total += i * i
    return mini_batch
"""


def child_loky(count: int, spin_n: int) -> None:
    """The baseline in its own process; prints the first submit and the last result's times."""
    from concurrent.futures import wait  # noqa: PLC0415

    from joblib.externals.loky import get_reusable_executor  # noqa: PLC0415

    executor = get_reusable_executor(max_workers=WORKERS)
    if not spin_n:
        executor.submit(noop).result()  # (a): workers up before the clock starts
    first = time.time()
    futures = [executor.submit(spin, spin_n) if spin_n else executor.submit(noop)
               for _ in range(count)]
    wait(futures)
    last = time.time()
    executor.shutdown(wait=True)
    print(json.dumps({"first": first, "last": last, "count": count}))


def loky(count: int, spin_n: int) -> tuple[Measured, dict[str, float]]:
    measured = check(measure([sys.executable, __file__, "--child", "loky", "--count",
                              str(count), "--spin", str(spin_n)]), "the loky baseline")
    return measured, json.loads(measured.stdout.strip().splitlines()[-1])


def mlpipe(folder: Path, files: Path, spin_n: int, *extra: str) -> tuple[Measured, object]:
    """One run of the command in a fresh folder; (measured, its attempts' window). The
    driver's share of a core while the step ran, as its job_result.txt says, goes to
    ``DRIVER_WHILE_STEP[id(measured)]``."""
    work = Path(tempfile.mkdtemp(dir=folder))
    pipeline = write_job(work / "job", files, SCRIPT, workers=WORKERS,
                         environment={"SPIN_N": str(spin_n)})
    runs = work / "runs"
    measured = job_create(pipeline, runs, *extra, terminal=True)
    result = (step_logs(runs) / "job_result.txt").read_text(encoding="utf-8")
    share = re.search(r"driver: .* \(([\d.]+)% of one core\)", result)
    DRIVER_WHILE_STEP[id(measured)] = float(share.group(1)) / 100 if share else float("nan")
    return measured, attempts_window(step_logs(runs))


DRIVER_WHILE_STEP: dict[int, float] = {}


CHECKS: dict[str, bool] = {}  # target -> met, printed at the end


def part_a(folder: Path, count: int, dask: bool) -> None:
    files = make_files(folder / f"files-{count}", count)
    print(f"(a) {count:,} one-file mini-batches, no-op run(), {WORKERS} workers "
          f"(load {load()})")
    mine, window = mlpipe(folder, files, 0)
    base, times = loky(count, 0)
    rate_m = window.count / window.seconds  # type: ignore[attr-defined]
    rate_l = count / (times["last"] - times["first"])
    columns = [("mlpipe", mine, rate_m), ("bare loky", base, rate_l)]
    if dask:
        dask_run, dask_window = mlpipe(folder, files, 0, "--backend", "dask")
        columns.append(("mlpipe dask", dask_run,
                        dask_window.count / dask_window.seconds))  # type: ignore[attr-defined]
    print("    " + f"{'':34}" + "".join(f"{name:>14}" for name, _, _ in columns))
    print("    " + f"{'mini-batches/s':34}" + "".join(f"{rate:14.0f}" for _, _, rate in columns)
          + f"   mlpipe / loky {rate_m / rate_l:.2f} (targets: >= 5000/s, > 1.0)")
    print("    " + f"{'wall of the whole process (s)':34}"
          + "".join(f"{m.wall:14.2f}" for _, m, _ in columns))
    print("    " + f"{'peak RSS of the process (MB)':34}"
          + "".join(f"{m.peak_rss_mb:14.0f}" for _, m, _ in columns))
    print("    " + f"{'CPU of the process (s)':34}"
          + "".join(f"{m.cpu:14.2f}" for _, m, _ in columns) + "\n")
    CHECKS[f"(a) no-op: >= 5000 mini-batches/s ({rate_m:.0f})"] = rate_m >= 5000
    CHECKS[f"(a) no-op: above bare loky ({rate_m / rate_l:.2f}x)"] = rate_m > rate_l


def part_b(folder: Path, count: int, pairs: int, dask: bool) -> None:
    spin_n = calibrate()
    start = time.perf_counter()
    for _ in range(count):
        spin(spin_n)
    serial = time.perf_counter() - start
    ideal = serial / WORKERS
    files = make_files(folder / f"files-{count}", count)
    print(f"(b) {count} mini-batches of ~{serial / count * 1000:.1f} ms pure-Python work, "
          f"{WORKERS} workers; serial loop {serial:.2f} s, ideal {ideal:.2f} s (load {load()})")
    rows = []
    for _ in range(pairs):
        mine, window = mlpipe(folder, files, spin_n)
        base, times = loky(count, spin_n)
        rows.append((mine, window, base, times))
        print(f"    pair: mlpipe {mine.wall:.2f} s, loky {base.wall:.2f} s, "
              f"loky / mlpipe {base.wall / mine.wall:.2f} (load {load()})")
    ratio = statistics.median(base.wall / mine.wall for mine, _, base, _ in rows)
    mine, window, base, times = sorted(rows, key=lambda r: r[0].wall)[len(rows) // 2]
    step = window.seconds  # type: ignore[attr-defined]
    print(f"    {'':38}{'mlpipe':>12}{'bare loky':>12}   (the median pair)")
    print(f"    {'wall of the whole process (s)':38}{mine.wall:12.2f}{base.wall:12.2f}"
          f"   loky / mlpipe, median of {pairs}: {ratio:.2f} (target >= 1.0)")
    print(f"    {'over the ideal work / workers (s)':38}{mine.wall - ideal:12.2f}"
          f"{base.wall - ideal:12.2f}   (target: mlpipe within {IDEAL_WITHIN} s)")
    print(f"    {'start to first mini-batch (s)':38}"
          f"{window.first_start - mine.started:12.2f}"  # type: ignore[attr-defined]
          f"{times['first'] - base.started:12.2f}")
    print(f"    {'last mini-batch to exit (s)':38}"
          f"{mine.ended - window.last_end:12.2f}"  # type: ignore[attr-defined]
          f"{base.ended - times['last']:12.2f}")
    print(f"    {'CPU of the process (s)':38}{mine.cpu:12.2f}{base.cpu:12.2f}")
    print(f"    {'  per second of the job (% of a core)':38}{mine.cpu / mine.wall:12.1%}"
          f"{base.cpu / base.wall:12.1%}   (imports and start-up included)")
    while_step = statistics.median(DRIVER_WHILE_STEP[id(m)] for m, _, _, _ in rows)
    print(f"    {'  while the step runs (job_result.txt)':38}{while_step:12.1%}{'':12}"
          f"   (target < {DRIVER_SHARE:.0%}; the median of the runs)")
    print(f"    {'CPU of its workers (s)':38}{mine.children_cpu:12.2f}{base.children_cpu:12.2f}")
    print(f"    {'peak RSS of the process (MB)':38}{mine.peak_rss_mb:12.0f}"
          f"{base.peak_rss_mb:12.0f}")
    print(f"    {'mlpipe: first to last mini-batch (s)':38}{step:12.2f}"
          f"   speedup over the serial loop {serial / step:.2f}")
    CHECKS[f"(b) CPU-bound: loky / mlpipe wall >= 1.0 (median {ratio:.2f})"] = ratio >= 1.0
    CHECKS[f"(b) CPU-bound: within {IDEAL_WITHIN} s of the ideal ({mine.wall - ideal:.2f} s)"] = \
        mine.wall - ideal <= IDEAL_WITHIN
    CHECKS[f"(b) CPU-bound: the driver < {DRIVER_SHARE:.0%} of a core while the step runs "
           f"({while_step:.1%})"] = while_step < DRIVER_SHARE
    if dask:
        dask_run, _ = mlpipe(folder, files, spin_n, "--backend", "dask")
        print(f"    {'dask backend: wall (s)':38}{dask_run.wall:12.2f}"
              f"   loky / dask {base.wall / dask_run.wall:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the work")
    parser.add_argument("--pairs", type=int, default=3, help="(b): mlpipe/loky pairs")
    parser.add_argument("--dask", action="store_true", help="add the dask backend's runs")
    parser.add_argument("--child", choices=["loky"], help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--spin", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_loky(args.count, args.spin)
        return 0
    scale = 10 if args.quick else 1
    print(f"cpu_count={os.cpu_count()}; mlpipe = `mlpipe job create` on a pseudo-terminal "
          "(a child process); figures are noisy on a shared machine\n")
    with tempfile.TemporaryDirectory(prefix="mlpipe-throughput-") as tmp:
        part_a(Path(tmp), 20_000 // scale, args.dask)
        part_b(Path(tmp), 400 // scale, args.pairs, args.dask)
    print(f"\ntargets (load {load()}; timings hold on a quiet machine only):")
    for name, ok in CHECKS.items():
        print(f"  {'PASS' if ok else 'FAIL'}  {name}")
    return 0 if all(CHECKS.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
