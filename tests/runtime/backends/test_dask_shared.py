"""``mlpipe job create --backend dask`` on a cluster the user started: a ``dask scheduler`` and
``dask worker --no-nanny`` processes started by the test. mlpipe never restarts, retires or
closes those workers: one killed mid-step costs only its mini-batch an attempt, the other
keeps running after the job; two jobs at once share the cluster fairly; workers marked with
the ``mlpipe`` resource are the only ones it takes."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

with contextlib.suppress(ImportError):  # see tests/runtime/backends/test_dask_cluster.py
    import hypothesis  # noqa: F401

from mlpipe.runtime import run_parallel_step
from mlpipe.runtime.backends.dask import DaskBackend
from mlpipe.runtime.mini_batch_outcomes import read_outcomes
from tests.runtime.backends.support import (
    REPO,
    DaskProcesses,
    dask_processes,
    finish,
    pipeline_yaml,
    wait_for,
)
from tests.runtime.support import LOADER, Recorder, file_mini_batches, make_step

pytest.importorskip("distributed")
pytestmark = pytest.mark.slow

SCRIPT = """\
import os, time
from pathlib import Path

def run(mini_batch):
    start = time.time()
    block = Path(os.environ["LOG"]).parent / ("block-" + Path(mini_batch[0]).name)
    if block.exists():  # the test kills this worker while it waits here
        (block.parent / f"blocked-{os.getpid()}").write_text(Path(mini_batch[0]).name)
        deadline = time.monotonic() + 120
        while block.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    gate = block.parent / f"gate-{os.environ['JOB']}"
    if int(Path(mini_batch[0]).stem[1:]) >= 4 and (block.parent / f"gated-{os.environ['JOB']}").exists():
        deadline = time.monotonic() + 120  # the test opens it once the other job is waiting
        while not gate.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    time.sleep(float(os.environ["SECONDS"]))
    with open(os.environ["LOG"], "a") as log:
        log.write(f"{os.environ['JOB']} {Path(mini_batch[0]).name} {os.getpid()} "
                  f"{start:.3f} {time.time():.3f}\\n")
    return [Path(p).name for p in mini_batch]
"""


def _project(folder: Path, job: str, files: int, seconds: float) -> Path:
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "score.py").write_text(SCRIPT, encoding="utf-8")
    (folder / "data").mkdir()
    for index in range(files):
        (folder / "data" / f"f{index:02d}.txt").write_text("x\n", encoding="utf-8")
    yaml = folder / "pipeline.yml"
    extra = ("    retry_settings: {max_retries: 2, timeout: 120}\n"
             f'    environment_variables: {{JOB: "{job}", LOG: "{folder.parent / "runs.log"}", '
             f'SECONDS: "{seconds}"}}\n')
    yaml.write_text(pipeline_yaml("score", extra=extra), encoding="utf-8")
    return yaml


def _job(yaml: Path, name: str, runs: Path, scheduler: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "MLPIPE_DASK_SCHEDULER": scheduler}
    return subprocess.Popen(
        [sys.executable, "-m", "mlpipe", "job", "create", "-f", str(yaml), "-n", name,
         "--runs-dir", str(runs), "--backend", "dask", "--no-progress"],
        cwd=yaml.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _runs(log: Path) -> list[tuple[str, str, int, float, float]]:
    """The log's lines: (job, file, pid, start, end)."""
    rows = []
    for line in log.read_text(encoding="utf-8").splitlines():
        job, name, pid, start, end = line.split()
        rows.append((job, name, int(pid), float(start), float(end)))
    return rows


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[DaskProcesses]:
    """A scheduler with a dashboard and two single-threaded ``--no-nanny`` workers."""
    with dask_processes(tmp_path / "cluster", dashboard=True) as started:
        started.add_workers(2, nanny=False)
        yield started


def test_a_worker_killed_mid_step_leaves_the_other_running(
        tmp_path: Path, cluster: DaskProcesses) -> None:
    yaml = _project(tmp_path / "a", "a", files=16, seconds=0.1)
    block = tmp_path / "block-f05.txt"
    block.write_text("wait", encoding="utf-8")
    workers = {pid: address for address, pid in cluster.worker_addresses().items()}
    job = _job(yaml, "killed", tmp_path / "runs", cluster.address)
    try:
        wait_for(lambda: any(tmp_path.glob("blocked-*")), "mini-batch f05 running", job)
        blocked = next(tmp_path.glob("blocked-*"))
        # run() is in the step's own process (its input is read-only): its parent is the worker
        victim = psutil.Process(int(blocked.name.split("-")[1])).ppid()
        assert victim in workers  # a worker process the test started
        os.kill(victim, signal.SIGKILL)
        block.unlink()  # the retry, on the other worker, goes straight through
        out = finish(job)
    finally:
        if job.poll() is None:
            job.kill()
    assert job.returncode == 0, out
    survivor = next(pid for pid in workers if pid != victim)
    assert psutil.pid_exists(survivor)  # mlpipe neither restarted nor closed it ...
    assert cluster.worker_addresses() == {workers[survivor]: survivor}  # ... nor retired it
    assert re.search(r"^Dask dashboard: http://127\.0\.0\.1:\d+/status \(the scheduler at ", out,
                     re.MULTILINE), out
    lost = (f"step score: worker 0/process00{{}} (pid {victim}, Dask worker "
            f"{workers[victim]}) died or left the Dask cluster; its mini-batches are retried "
            f"on the other workers (mlpipe restarts no worker of a cluster it did not start)")
    assert any(lost.format(i) in out for i in (0, 1)), out
    logs = tmp_path / "runs" / "killed" / "score" / "logs"
    master = (logs / "sys" / "master_role.txt").read_text(encoding="utf-8")
    assert "died or left the Dask cluster; its mini-batches are retried on the other" in master
    assert "Traceback" not in out
    outcomes = {o.id: o for o in read_outcomes(logs)}
    assert len(outcomes) == 16 and all(o.status == "Succeeded" for o in outcomes.values())
    retried = [o for o in outcomes.values() if o.attempts > 1]  # only the killed one, once more
    assert [o.attempts for o in retried] == [2] and retried[0].detail.endswith("f05.txt"), retried
    rows = (tmp_path / "runs" / "killed" / "score" / "outputs" / "rows" / "parallel_run_step.txt")
    assert rows.read_text(encoding="utf-8").split() == [f"f{i:02d}.txt" for i in range(16)]
    ran = _runs(tmp_path / "runs.log")
    assert sorted(name for _, name, *_ in ran) == [f"f{i:02d}.txt" for i in range(16)]


def test_two_jobs_share_one_cluster_fairly(tmp_path: Path, cluster: DaskProcesses) -> None:
    workers = cluster.worker_addresses()
    (tmp_path / "gated-a").touch()  # the first job's mini-batches from f04 on wait for gate-a
    first = _job(_project(tmp_path / "a", "a", files=40, seconds=0.2), "first",
                 tmp_path / "runs", cluster.address)
    second = None
    try:
        log = tmp_path / "runs.log"
        wait_for(lambda: log.is_file() and len({r[2] for r in _runs(log)}) == 2,
              "the first job on both workers", first)
        second = _job(_project(tmp_path / "b", "b", files=8, seconds=0.1), "second",
                      tmp_path / "runs", cluster.address)
        waiting = tmp_path / "runs" / "second" / "score" / "logs" / "sys" / "master_role.txt"
        wait_for(lambda: waiting.is_file() and "wait for Dask workers that other mlpipe steps "
              "hold" in waiting.read_text(), "the second job waiting for its share", second)
        (tmp_path / "gate-a").touch()
        out_second = finish(second)
        out_first = finish(first)
    finally:
        for job in (first, second):
            if job is not None and job.poll() is None:
                job.kill()
    assert second.returncode == 0, out_second
    assert first.returncode == 0, out_first
    ran = _runs(tmp_path / "runs.log")
    a = [r for r in ran if r[0] == "a"]
    b = [r for r in ran if r[0] == "b"]
    assert sorted(r[1] for r in a) == [f"f{i:02d}.txt" for i in range(40)]  # each once
    assert sorted(r[1] for r in b) == [f"f{i:02d}.txt" for i in range(8)]
    b_start, b_end = min(r[3] for r in b), max(r[4] for r in b)
    assert b_end < max(r[4] for r in a)  # the second job did not wait for the first to end
    during = {r[2] for r in a if r[3] < b_end and r[4] > b_start}
    assert during, "the first job kept running while the second one ran"
    master = (tmp_path / "runs" / "first" / "score" / "logs" / "sys" / "master_role.txt")
    assert "gives its Dask worker back after its current mini-batch" in master.read_text()
    assert cluster.worker_addresses() == workers  # both workers, untouched


def test_workers_marked_for_mlpipe_are_the_only_ones_it_takes(tmp_path: Path) -> None:
    with dask_processes(tmp_path / "cluster") as cluster:
        cluster.add_workers(1, nanny=False, extra=("--resources", "mlpipe=1"))
        marked = set(cluster.worker_addresses().values())
        cluster.add_workers(1, nanny=False)  # the team's other work runs there
        step = make_step(tmp_path, "import os\ndef run(mini_batch):\n    return mini_batch\n",
                         workers=2)
        recorder = Recorder()
        summary = run_parallel_step(step, backend=DaskBackend(cluster.address),
                                    observers=[recorder], loader=LOADER,
                                    mini_batches=file_mini_batches(tmp_path / "data", 6))
    assert summary.status == "Completed", summary.reason
    assert {a.worker.pid for a in recorder.attempts} == marked
    failed = recorder.events("start_failed")  # init() never ran there
    assert len(failed) == 1 and "the Dask cluster has 1 worker process mlpipe may use" in \
        failed[0][2]
