"""Runtime throughput: mlpipe's parallel-step runtime against a bare loky executor.

    python bench/runtime_throughput.py [--quick]

(a) 20,000 one-item mini-batches with a no-op run() on 2 workers, against a bare
    loky executor submitting the same no-op one task at a time. Rates are counted
    from the first task's start to the last one's end (worker start-up excluded
    for both). Targets: mlpipe >= 5,000 mini-batches/s and >= 0.5 x loky.
(b) 400 mini-batches of about 20 ms of pure-Python work on 2 workers: each side
    runs in a fresh interpreter and the whole process is timed (start-up included).
    Targets: mlpipe's wall time within 10% of loky's, and a speedup over a serial
    loop, counted from the first mini-batch's start, of >= 1.85.

mlpipe runs through ``run_parallel_step`` with its real reports (logs/ tree,
processed_mini-batches.csv, ...); the mini-batches are built in memory (the data
layer's listing is benchmarked separately). The figures are noisy on a shared machine.

The "dask" column runs the same steps on the dask backend, on a tenth of (a)'s
mini-batches. In (a) it runs on a LocalCluster of 2 single-threaded worker processes
(started before the clock, as ``job create --backend dask`` starts the job's cluster),
next to the "client.map" column: bare Dask, ``client.map`` of the same no-op once per
mini-batch on the same cluster, in the same run, counted the same way (from the first
task's start to the last one's end). Target: dask / client.map > 1.0. In (b)
the backend starts its own LocalCluster (start-up included); no target there.
``--no-dask`` skips the Dask columns.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

WORKERS = 2
WORK_SECONDS = 0.02


def spin(n: int) -> int:
    """About WORK_SECONDS of pure-Python work for the calibrated ``n``."""
    total = 0
    for i in range(n):
        total += i * i
    return total


def noop(*_: object) -> None:
    return None


def stamped_noop(*_: object) -> tuple[float, float]:
    """The no-op, with its start and end (wall clock), for the same window as mlpipe's."""
    start = time.time()
    return start, time.time()


def calibrate() -> int:
    """The ``n`` for which spin(n) takes WORK_SECONDS (best of 5: the machine is shared)."""
    n = 100_000
    while True:
        took = min(_timed(spin, n) for _ in range(5))
        if took > 0.005:
            return max(1, int(n * WORK_SECONDS / took))
        n *= 4


def _timed(fn, *args) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


SCRIPT = """
    import os
    N = int(os.environ.get("SPIN_N", "0"))

    def init():
        pass

    def run(mini_batch):
        total = 0
        for i in range(N):
            total += i * i
        return mini_batch
"""


class Window:
    """Observer: first attempt start and last attempt end (wall clock)."""

    def __init__(self) -> None:
        self.first = float("inf")
        self.last = 0.0
        self.count = 0
        self.busy = 0.0

    def step_started(self, *args) -> None:  # type: ignore[no-untyped-def]
        pass

    def mini_batches_scheduled(self, *args) -> None:  # type: ignore[no-untyped-def]
        pass

    def worker_event(self, *args) -> None:  # type: ignore[no-untyped-def]
        pass

    def step_finished(self, *args) -> None:  # type: ignore[no-untyped-def]
        pass

    def mini_batches_counted(self, *args) -> None:  # type: ignore[no-untyped-def]
        pass

    def attempt_finished(self, record) -> None:  # type: ignore[no-untyped-def]
        self.attempts_finished((record,))

    def attempts_finished(self, records) -> None:  # type: ignore[no-untyped-def]
        """The driver's batches: what the bench measures costs it little."""
        for record in records:
            start = record.start_time.timestamp()
            self.first = min(self.first, start)
            self.last = max(self.last, start + record.elapsed_seconds)
            self.busy += record.run_method_seconds
        self.count += len(records)


def run_mlpipe(count: int, spin_n: int, root: Path, backend: object = "local") -> dict[str, float]:
    from mlpipe.data.minibatch import MiniBatch
    from mlpipe.frozen import freeze
    from mlpipe.plan import ParallelStep, PrsOptions, RetrySettings
    from mlpipe.runtime import run_parallel_step

    code = root / "code"
    code.mkdir(parents=True, exist_ok=True)
    (code / "score.py").write_text(textwrap.dedent(SCRIPT))
    step = ParallelStep(
        name="bench", step_dir=str(root / "run"), code_dir=str(code), entry_script="score.py",
        max_concurrency_per_instance=WORKERS, retry=RetrySettings(timeout=60),
        environment_variables=freeze({"SPIN_N": str(spin_n)}),
        prs=PrsOptions(resource_monitor_interval=0),
    )
    batches = (MiniBatch(id=f"mb{i}", index=i, kind="files", payload=(f"/in/{i}",), items=1)
               for i in range(count))
    window = Window()
    start = time.perf_counter()
    summary = run_parallel_step(step, mini_batches=batches, observers=[window],
                                backend=backend)  # type: ignore[arg-type]
    wall = time.perf_counter() - start
    assert summary.status == "Completed" and summary.mini_batches_succeeded == count, summary
    return {"wall": wall, "window": window.last - window.first, "count": window.count,
            "busy": window.busy}


def run_loky(count: int, spin_n: int) -> dict[str, float]:
    from concurrent.futures import wait

    from joblib.externals.loky import get_reusable_executor

    start = time.perf_counter()
    executor = get_reusable_executor(max_workers=WORKERS)
    if spin_n:
        futures = [executor.submit(spin, spin_n) for _ in range(count)]
    else:
        executor.submit(noop).result()  # workers up before the clock starts
        first = time.perf_counter()
        futures = [executor.submit(noop) for _ in range(count)]
    wait(futures)
    end = time.perf_counter()
    executor.shutdown(wait=True)
    return {"wall": time.perf_counter() - start,
            "window": end - first if not spin_n else end - start, "count": count}


def run_dask_and_bare(count: int, root: Path) -> dict[str, float]:
    """(a) on Dask: bare ``client.map`` of the no-op on a LocalCluster, then mlpipe's dask
    backend on the same cluster (handed down as the job's cluster, as the runner does)."""
    import logging

    from distributed import Client, LocalCluster

    from mlpipe.runtime.backends.dask import DaskBackend
    from mlpipe.runtime.backends.dask_cluster import JobCluster

    with LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster, set_as_default=False) as client:
        client.gather(client.map(noop, range(WORKERS), pure=False))  # workers up
        stamps = client.gather(client.map(stamped_noop, range(count), pure=False))
        bare = max(end for _, end in stamps) - min(start for start, _ in stamps)
        backend = DaskBackend(cluster=JobCluster(cluster.scheduler_address, owned=True))
        figures = run_mlpipe(count, 0, root, backend)
    figures["bare"] = bare
    return figures


def child(kind: str, count: int, spin_n: int) -> None:
    """One side of (a) on Dask or of (b) in a fresh interpreter: print its figures as JSON."""
    if kind == "dask" and not spin_n:
        with tempfile.TemporaryDirectory() as tmp:
            figures = run_dask_and_bare(count, Path(tmp))
    elif kind in ("mlpipe", "dask"):
        with tempfile.TemporaryDirectory() as tmp:
            figures = run_mlpipe(count, spin_n, Path(tmp), "dask" if kind == "dask" else "local")
    else:
        figures = run_loky(count, spin_n)
    print(json.dumps(figures))


def timed_child(kind: str, count: int, spin_n: int) -> dict[str, float]:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, __file__, "--child", kind, "--count", str(count),
                          "--spin", str(spin_n)], check=True, capture_output=True, text=True)
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    figures["process"] = time.perf_counter() - start
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the work")
    parser.add_argument("--child", choices=["mlpipe", "loky", "dask"])
    parser.add_argument("--no-dask", action="store_true", help="skip the dask backend column")
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--spin", type=int, default=0)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.count, args.spin)
        return
    scale = 10 if args.quick else 1
    print(f"cpu_count={os.cpu_count()} load={os.getloadavg()[0]:.1f} (figures are noisy on a "
          f"shared machine)\n")

    count_a = 20_000 // scale
    with tempfile.TemporaryDirectory() as tmp:
        mine = run_mlpipe(count_a, 0, Path(tmp))
    loky = run_loky(count_a, 0)
    rate_m, rate_l = count_a / mine["window"], count_a / loky["window"]
    dask_a = None if args.no_dask else timed_child("dask", count_a // 10, 0)
    print(f"(a) {count_a} one-item mini-batches, no-op run(), {WORKERS} workers"
          + ("" if dask_a is None else f" (dask and client.map: {count_a // 10}, one cluster)"))
    print(f"    {'':22}{'mlpipe':>12}{'bare loky':>12}{'ratio':>10}"
          + ("" if dask_a is None else f"{'dask':>12}{'client.map':>12}{'dask/map':>10}"))
    rate_d = rate_b = 0.0
    if dask_a is not None:
        rate_d, rate_b = dask_a["count"] / dask_a["window"], count_a // 10 / dask_a["bare"]
    print(f"    {'mini-batches/s':22}{rate_m:12.0f}{rate_l:12.0f}{rate_m / rate_l:10.2f}"
          + ("" if dask_a is None else f"{rate_d:12.0f}{rate_b:12.0f}{rate_d / rate_b:10.2f}")
          + "   targets: >= 5000/s, ratio >= 0.5" + ("" if dask_a is None else
                                                     ", dask/map > 1.0"))
    print(f"    {'wall incl. start (s)':22}{mine['wall']:12.2f}{loky['wall']:12.2f}"
          + ("" if dask_a is None else f"{'':10}{dask_a['wall']:12.2f}") + "\n")

    spin_n = calibrate()
    count_b = 400 // scale
    start = time.perf_counter()
    for _ in range(count_b):
        spin(spin_n)
    serial = time.perf_counter() - start
    mine_b = timed_child("mlpipe", count_b, spin_n)
    loky_b = timed_child("loky", count_b, spin_n)
    dask_b = None if args.no_dask else timed_child("dask", count_b, spin_n)
    speedup = serial / mine_b["window"]
    print(f"(b) {count_b} mini-batches of ~{serial / count_b * 1000:.1f} ms pure-Python work, "
          f"{WORKERS} workers; serial loop {serial:.2f} s")
    print(f"    {'':22}{'mlpipe':>12}{'bare loky':>12}{'ratio':>10}"
          + ("" if dask_b is None else f"{'dask':>12}{'dask/loky':>11}"))
    print(f"    {'process wall (s)':22}{mine_b['process']:12.2f}{loky_b['process']:12.2f}"
          f"{mine_b['process'] / loky_b['process']:10.2f}"
          + ("" if dask_b is None else
             f"{dask_b['process']:12.2f}{dask_b['process'] / loky_b['process']:11.2f}")
          + "   target: ratio <= 1.10")
    print(f"    {'speedup vs serial':22}{speedup:12.2f}{'-':>12}{'':10}"
          + ("" if dask_b is None else f"{serial / dask_b['window']:12.2f}{'':11}")
          + "   target: mlpipe >= 1.85 (from the first mini-batch's start)")
    print(f"    {'run() busy / window':22}{mine_b['busy'] / mine_b['window']:12.2f}{'-':>12}"
          f"{'':10}"
          + ("" if dask_b is None else f"{dask_b['busy'] / dask_b['window']:12.2f}{'':11}")
          + "   sum of run() times over the same window: 2.00 = no idle worker")


if __name__ == "__main__":
    main()
