"""mlpipe on a 3-worker Dask cluster against bare ``client.map``, with and without a shared
run folder, in one run on the same cluster.

Starts one ``dask scheduler`` and three single-threaded ``dask worker`` processes (real
processes, as a user starts them). As root with ``unshare`` the workers are "other
machines": each lives in a mount namespace of its own where the pipeline folder and one
of two runs folders are empty tmpfs mounts. A job in the other runs folder (visible to
every worker) is the *shared* case (workers read the snapshot and write the logs into
the run folder); a job in the hidden one is the *non-shared* case (the code goes to each
worker through Dask, the logs and outputs come back through Dask). The data is where
every worker reads it.

For each workload, mlpipe is timed through the user's own command (``mlpipe job create
--backend dask`` as a child process: start-up, listing, reports and all; its peak RSS and
CPU), next to bare Dask in this process: ``client.map`` of the same function once per
mini-batch on the same cluster, gathered. Workloads: (a) no-op mini-batches of one file;
(b) CPU-bound mini-batches (pure-Python work of about ``--cpu-ms`` each). Prints the
load average before and after: compare the columns of one run.

    python bench/dask_cluster.py            # --noop 2000 --cpu 120 --cpu-ms 40
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORKERS = 3

SCRIPT = """\
import os
from pathlib import Path

SPIN = int(os.environ.get("SPIN", "0"))

def spin(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total

def run(mini_batch):
    if SPIN:
        spin(SPIN)
    return [Path(p).name for p in mini_batch]
"""

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
jobs:
  work:
    type: parallel
    inputs:
      files: {{type: uri_folder, path: {data}}}
    outputs:
      rows: {{type: uri_file}}
    input_data: ${{{{inputs.files}}}}
    mini_batch_size: "1"
    max_concurrency_per_instance: {workers}
    environment_variables: {{SPIN: "{spin}"}}
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      append_row_to: ${{{{outputs.rows}}}}
"""


def spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def bare_task(path: str, n: int) -> list[str]:
    """What the entry script's run() does, as a bare Dask task."""
    if n:
        spin(n)
    return [Path(path).name]


def calibrate(ms: float) -> int:
    """Loop count of ``spin`` that takes about ``ms`` milliseconds here."""
    n = 200_000
    start = time.perf_counter()
    spin(n)
    return max(1, int(n * ms / 1000 / (time.perf_counter() - start)))


class Cluster:
    """A scheduler and three workers; hidden folders make each worker another machine."""

    def __init__(self, folder: Path, hidden: list[Path]) -> None:
        self.folder = folder
        self.processes: list[subprocess.Popen[bytes]] = []
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        scheduler_file = folder / "scheduler.json"
        self.processes.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
             "--port", "0", "--no-dashboard", "--scheduler-file", str(scheduler_file)],
            env=env, start_new_session=True, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 60
        while True:
            try:
                self.address = json.loads(scheduler_file.read_text())["address"]
                break
            except (OSError, ValueError, KeyError):
                if time.monotonic() > deadline:
                    raise SystemExit("the scheduler did not start") from None
                time.sleep(0.1)
        for index in range(WORKERS):
            local = folder / f"host-{index}"
            local.mkdir()
            command = [sys.executable, "-m", "distributed.cli.dask_worker", self.address,
                       "--no-nanny", "--nthreads", "1", "--no-dashboard",
                       "--local-directory", str(local)]
            if hidden:
                mounts = " && ".join(f"mount -t tmpfs none {shlex.quote(str(p))}"
                                     for p in hidden)
                command = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                           f"{mounts} && exec {shlex.join(command)}"]
            self.processes.append(subprocess.Popen(
                command, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL))
        from distributed import Client

        self.client = Client(self.address, timeout=60, set_as_default=False)
        self.client.wait_for_workers(WORKERS, timeout=120)

    def close(self) -> None:
        self.client.close()
        for process in self.processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def bare(cluster: Cluster, paths: list[str], n: int) -> dict[str, float]:
    """``client.map`` of the task once per mini-batch, gathered: wall and rate."""
    client = cluster.client
    client.gather(client.map(bare_task, paths[:WORKERS], [0] * WORKERS, pure=False))  # warm
    start = time.perf_counter()
    results = client.gather(client.map(bare_task, paths, [n] * len(paths), pure=False))
    wall = time.perf_counter() - start
    assert len(results) == len(paths)
    return {"wall": wall, "rate": len(paths) / wall}


def mlpipe_job(project: Path, runs: Path, name: str, address: str,
               count: int) -> dict[str, float]:
    """``mlpipe job create`` as a child process: whole wall, rate over it, its CPU and peak
    RSS (this process has no other child that ends meanwhile)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "MLPIPE_DASK_SCHEDULER": address}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "mlpipe", "job", "create", "-f", "pipeline.yml", "-n", name,
         "--runs-dir", str(runs), "--backend", "dask", "--no-progress"],
        cwd=project, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or f"job {name}: completed" not in done.stdout:
        raise SystemExit(f"mlpipe job {name} failed:\n{done.stdout}\n{done.stderr}")
    rows = (runs / name / "work" / "outputs" / "rows" / "parallel_run_step.txt")
    assert len(rows.read_text().splitlines()) == count
    return {"wall": wall, "rate": count / wall, "step_rate": count / step_seconds(runs / name),
            "cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
            "rss_mb": after.ru_maxrss / 1024}


def step_seconds(run_dir: Path) -> float:
    """From the first mini-batch's start to the last one's end (processed_mini-batches.csv)."""
    import csv
    from datetime import datetime

    path = run_dir / "work" / "logs" / "sys" / "job_report" / "processed_mini-batches.csv"
    with open(path, newline="") as handle:
        spans = [(start, start + float(row["Elapsed Seconds"])) for row in csv.DictReader(handle)
                 for start in [datetime.fromisoformat(row["Process Start Time"]).timestamp()]]
    return max(end for _, end in spans) - min(start for start, _ in spans)


def project(root: Path, name: str, data: Path, spin_n: int) -> Path:
    folder = root / name
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "score.py").write_text(SCRIPT)
    (folder / "pipeline.yml").write_text(PIPELINE.format(data=data, workers=WORKERS,
                                                         spin=spin_n))
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--noop", type=int, default=2000, help="no-op mini-batches")
    parser.add_argument("--cpu", type=int, default=300, help="CPU-bound mini-batches")
    parser.add_argument("--cpu-ms", type=float, default=40.0, help="work per CPU mini-batch")
    args = parser.parse_args()
    other_machines = os.geteuid() == 0 and shutil.which("unshare") is not None
    root = Path(tempfile.mkdtemp(prefix="mlpipe-bench-dask-"))
    load_before = os.getloadavg()
    try:
        data = {}
        for kind, count in (("noop", args.noop), ("cpu", args.cpu)):
            folder = data[kind] = root / f"data-{kind}"
            folder.mkdir()
            for index in range(count):
                (folder / f"f{index:06d}.txt").write_text("x\n")
        spin_n = calibrate(args.cpu_ms)
        projects = {"noop": project(root, "project-noop", data["noop"], 0),
                    "cpu": project(root, "project-cpu", data["cpu"], spin_n)}
        shared, hidden = root / "runs-shared", root / "runs-hidden"
        shared.mkdir()
        hidden.mkdir()
        cluster = Cluster(root, [*projects.values(), hidden] if other_machines else [])
        rows: list[tuple[str, str, dict[str, float] | None, dict[str, float]]] = []
        try:
            for kind, count, n in (("no-op", args.noop, 0), ("CPU-bound", args.cpu, spin_n)):
                key = "noop" if n == 0 else "cpu"
                paths = sorted(str(p) for p in data[key].iterdir())
                base = bare(cluster, paths, n)
                for where, runs in (("shared", shared),
                                    ("not shared", hidden if other_machines else None)):
                    if runs is None:
                        rows.append((kind, where, None, base))
                        continue
                    rows.append((kind, where, mlpipe_job(
                        projects[key], runs, f"{key}-{where.replace(' ', '-')}",
                        cluster.address, count), base))
        finally:
            cluster.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    load_after = os.getloadavg()
    print(f"3 single-threaded Dask workers, one scheduler; load average before "
          f"{load_before[0]:.1f}, after {load_after[0]:.1f} ({os.cpu_count()} cores)")
    if not other_machines:
        print("(not root or no unshare: the workers see every folder; no 'not shared' run)")
    print(f"{'workload':<22}{'run folder':<12}{'mlpipe job':>12}{'client.map':>12}"
          f"{'ratio':>8}{'mlpipe step':>13}{'ratio':>7}{'mlpipe wall':>13}{'map wall':>10}"
          f"{'CPU s':>7}{'RSS MB':>8}")
    for kind, where, job, base in rows:
        label = f"{kind} ({args.noop if kind == 'no-op' else args.cpu})"
        if job is None:
            print(f"{label:<22}{where:<12}{'-':>12}{base['rate']:>10.0f}/s")
            continue
        print(f"{label:<22}{where:<12}{job['rate']:>10.0f}/s{base['rate']:>10.0f}/s"
              f"{job['rate'] / base['rate']:>8.2f}{job['step_rate']:>11.0f}/s"
              f"{job['step_rate'] / base['rate']:>7.2f}{job['wall']:>12.1f}s"
              f"{base['wall']:>9.1f}s{job['cpu']:>7.1f}{job['rss_mb']:>8.0f}")
    print("mlpipe job: mini-batches per second of the whole `mlpipe job create` (start-up, "
          "listing, reports included), its CPU and peak RSS; mlpipe step: from the first "
          "mini-batch's start to the last one's end; client.map: from the first submit to "
          "the last result")


if __name__ == "__main__":
    main()
