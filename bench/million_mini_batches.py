"""Benchmark: 1,000,000 one-file mini-batches on 2 workers, against bare loky.

    python bench/million_mini_batches.py [--n 1000000] [--root /tmp/mlpipe-bench-1000000-flat]

Creates ``--n`` empty files once under /tmp (the same folder ``listing_1m_files.py``
uses; reused when present). Then, each in a fresh child process:

* mlpipe: ``run_parallel_step`` over a ``uri_folder`` input with ``mini_batch_size: 1``
  (the real listing, loader, driver, journal and reports; a ``run()`` that returns its
  mini-batch, so one append_row row each), on 2 workers;
* bare loky: the sorted file list, then the same trivial function called once per file
  on a 2-worker loky executor (256 calls in flight).

Prints mini-batches/s of both side by side (counted from the first call's start to the
last one's end: worker start-up excluded for both) and their ratio, the wall time of each
whole child (start-up and listing included), the driver's peak RSS, the rate of each
window of 20,000 mini-batches, and the bookkeeping the step leaves outside ``outputs/``
and ``logs/`` (bytes on disk and files, per mini-batch). Targets, each printed with PASS
or FAIL: the whole run of 1,000,000 under 60 s on 2 cores (checked for the full run only),
driver peak RSS < 300 MB, the rate flat (the median of the last quarter of the windows
within 20 % of the first quarter's: a growing driver slows down as the step goes on), rate
>= bare loky, under 100 bytes and no file of bookkeeping per mini-batch. The machine's
load is printed before and after: on a shared machine compare the ratios, not the
seconds. ``--profile FILE`` writes a cProfile of the mlpipe child's driver.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
WORKERS = 2
IN_FLIGHT = 256
WINDOW = 20_000  # mini-batches per window of the flatness check
SECONDS_PER_MILLION = 60.0  # target: the whole run, start-up and listing included
FLAT_WITHIN = 0.20
SCRIPT = """
    def run(mini_batch):
        return mini_batch
"""


def trivial(mini_batch: list[str]) -> list[str]:
    """What both sides run for each mini-batch."""
    return mini_batch


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_mlpipe(root: str, profile: str | None) -> dict[str, Any]:
    sys.path[:0] = [str(REPO), str(Path(__file__).resolve().parent)]
    from runtime_throughput import Window  # noqa: PLC0415

    class Windows(Window):
        """Also the latest attempt end at the batch of every WINDOW-th finished attempt."""

        def __init__(self) -> None:
            super().__init__()
            self.marks: list[float] = []

        def attempts_finished(self, records) -> None:  # type: ignore[no-untyped-def]
            before = self.count // WINDOW
            super().attempts_finished(records)
            if self.count // WINDOW > before:  # this batch crossed the WINDOW-th attempt
                self.marks.append(self.last)

    from mlpipe.frozen import freeze  # noqa: PLC0415
    from mlpipe.plan import ParallelStep, PlanInput, PlanOutput, PrsOptions  # noqa: PLC0415
    from mlpipe.runtime import run_parallel_step  # noqa: PLC0415
    from mlpipe.runtime.journal import bookkeeping  # noqa: PLC0415
    from mlpipe.sizes import parse_mini_batch_size  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        code = Path(tmp) / "code"
        code.mkdir()
        (code / "score.py").write_text(textwrap.dedent(SCRIPT))
        step_dir = Path(tmp) / "run"
        out = PlanOutput("out", "uri_folder", path=str(step_dir / "outputs" / "out"))
        step = ParallelStep(
            name="bench", step_dir=str(step_dir), code_dir=str(code), entry_script="score.py",
            input_data="data", inputs=freeze({"data": PlanInput("data", "uri_folder", path=root)}),
            outputs=freeze({"out": out}), append_row_to="out",
            mini_batch_size=parse_mini_batch_size("1"),
            max_concurrency_per_instance=WORKERS, prs=PrsOptions(resource_monitor_interval=0),
        )
        window = Windows()
        start = time.perf_counter()
        if profile:
            import cProfile  # noqa: PLC0415

            profiler = cProfile.Profile()
            summary = profiler.runcall(run_parallel_step, step, observers=[window])
            profiler.dump_stats(profile)
        else:
            summary = run_parallel_step(step, observers=[window])
        wall = time.perf_counter() - start
        assert summary.status == "Completed", summary.reason
        rows = sum(1 for _ in open(summary.append_row_file, "rb"))  # noqa: SIM115
        files, size = bookkeeping(step_dir)
        marks = [window.first, *window.marks]
        rates = [WINDOW / (b - a) for a, b in zip(marks, marks[1:], strict=False) if b > a]
        return {"count": window.count, "window": window.last - window.first, "wall": wall,
                "rss": peak_rss_mb(), "rows": rows, "files": files, "bytes": size,
                "rates": rates}


def child_loky(root: str) -> dict[str, float]:
    from collections import deque  # noqa: PLC0415

    from joblib.externals.loky import get_reusable_executor  # noqa: PLC0415

    start = time.perf_counter()
    paths = sorted(entry.path for entry in os.scandir(root)
                   if entry.is_file() and not entry.name.startswith("."))
    executor = get_reusable_executor(max_workers=WORKERS)
    executor.submit(trivial, []).result()  # workers up before the clock starts
    first = time.perf_counter()
    in_flight: deque = deque()  # type: ignore[type-arg]
    done = 0
    for path in paths:
        in_flight.append(executor.submit(trivial, [path]))
        if len(in_flight) >= IN_FLIGHT:
            done += len(in_flight.popleft().result())
    while in_flight:
        done += len(in_flight.popleft().result())
    end = time.perf_counter()
    executor.shutdown(wait=True)
    return {"count": done, "window": end - first, "wall": time.perf_counter() - start,
            "rss": peak_rss_mb()}


def run_child(kind: str, root: Path, profile: str | None) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", kind, "--root", str(root)]
    if profile:
        command += ["--profile", profile]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"{kind} child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="mini-batches (files)")
    parser.add_argument("--root", default=None, help="input folder (created once, reused)")
    parser.add_argument("--profile", default=None, help="cProfile the mlpipe child to FILE")
    parser.add_argument("--child", choices=("mlpipe", "loky"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = Path(args.root or f"/tmp/mlpipe-bench-{args.n}-flat")
    if args.child:
        result = child_mlpipe(str(root), args.profile) if args.child == "mlpipe" \
            else child_loky(str(root))
        print(json.dumps(result))
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from listing_1m_files import create_files  # noqa: PLC0415

    create_files(root, args.n, "flat")
    print(f"cpu_count={os.cpu_count()} load before={_load()} (the other processes of a shared "
          "machine slow both sides: compare the ratios)")
    m = run_child("mlpipe", root, args.profile)
    loky = run_child("loky", root, None)
    assert m["count"] == m["rows"] == loky["count"] == args.n, (m, loky)
    rate_m, rate_l = m["count"] / m["window"], loky["count"] / loky["window"]
    per_bytes, per_files = m["bytes"] / args.n, m["files"] / args.n
    print(f"load after={_load()}")
    print(f"\n{args.n:,} one-file mini-batches, {WORKERS} workers")
    print(f"{'':34}{'mlpipe':>12}{'bare loky':>12}{'ratio':>8}")
    print(f"{'mini-batches/s':34}{rate_m:12.0f}{rate_l:12.0f}{rate_m / rate_l:8.2f}")
    print(f"{'wall incl. start and listing (s)':34}{m['wall']:12.1f}{loky['wall']:12.1f}"
          f"{m['wall'] / loky['wall']:8.2f}")
    print(f"{'driver peak RSS (MB)':34}{m['rss']:12.0f}{loky['rss']:12.0f}")
    print(f"{'bookkeeping: bytes on disk':34}{m['bytes']:12,.0f}   "
          f"({per_bytes:.1f} per mini-batch)")
    print(f"{'bookkeeping: files and folders':34}{m['files']:12,.0f}   "
          f"({per_files:.6f} per mini-batch)")
    rates = m["rates"]
    if rates:
        print(f"mlpipe mini-batches/s per window of {WINDOW:,}: " + " ".join(
            f"{rate:.0f}" for rate in rates))
    flat = _flat(rates)
    checks = {"driver peak RSS < 300 MB": m["rss"] < 300,
              f"rate flat (last quarter's windows within {FLAT_WITHIN:.0%} of the first's)":
                  flat,
              "rate >= bare loky": rate_m >= rate_l,
              "< 100 bytes of bookkeeping per mini-batch": per_bytes < 100,
              "no bookkeeping file per mini-batch": m["files"] < 500}
    if args.n >= 1_000_000:  # start-up is not scaled: the target is the million's
        checks[f"end to end < {SECONDS_PER_MILLION:g} s"] = m["wall"] < SECONDS_PER_MILLION
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


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
