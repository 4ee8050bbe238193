"""Dask workers on "other machines": nothing shared with the driver but the scheduler.

Each hidden worker is a real ``dask worker`` process in a mount namespace of its own where
the runs folder and the user's pipeline folder are empty tmpfs mounts (another machine:
the same paths, none of the files); the input data stays where every host reads it. The
job runs through ``mlpipe job create`` as a user runs it, and its outputs, logs tree and
journal are compared with a run of the same job on the local backend. Faults are real:
kill -9 of the driver, of the scheduler, of a hidden worker mid-step.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

with contextlib.suppress(ImportError):  # see tests/runtime/backends/test_dask_cluster.py
    import hypothesis  # noqa: F401

from mlpipe.runtime.journal import Journal
from tests.runtime.backends.support import (
    REPO,
    DaskProcesses,
    dask_processes,
    finish,
    wait_for,
)

pytest.importorskip("distributed")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                       reason="another machine is a mount namespace: needs root and unshare"),
]

SCRIPT = """\
import argparse, os, sys, time
from pathlib import Path
from azureml_user.parallel_run import EntryScript
import helper

def init():
    global args
    parser = argparse.ArgumentParser()
    parser.add_argument("--extra")
    args, _ = parser.parse_known_args()
    print("init", flush=True)
    EntryScript().logger.info("init done")

def run(mini_batch):
    rows = []
    for path in mini_batch:
        name = Path(path).name
        gate = Path(os.environ["GATES"]) / name
        entered = gate.parent / ("in-" + name)
        if gate.exists() and not entered.exists():  # the first time: the test acts meanwhile
            entered.write_text(str(os.getpid()))
            deadline = time.monotonic() + float(gate.read_text() or 120)
            while gate.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        time.sleep(float(os.environ.get("SECONDS", "0")))
        (Path(args.extra) / f"{name}.copy").write_text(helper.shout(Path(path).read_text()))
        print("scored", name)
        print("warned", name, file=sys.stderr)
        EntryScript().logger.info("scored %s", name)
        rows.append(f"{name} {helper.shout(name)}")
    return rows
"""

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
jobs:
  score:
    type: parallel
    inputs:
      files: {{type: uri_folder, path: {data}}}
    outputs:
      rows: {{type: uri_file}}
      extra: {{type: uri_folder}}
    input_data: ${{{{inputs.files}}}}
    mini_batch_size: "2"
    max_concurrency_per_instance: 3
    retry_settings: {{max_retries: 2, timeout: {timeout}}}
    environment_variables: {{GATES: "{gates}", SECONDS: "{seconds}"}}
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      program_arguments: --extra ${{{{outputs.extra}}}}
      append_row_to: ${{{{outputs.rows}}}}
"""


class Place:
    """A user's machine: the pipeline folder, the data (readable by every host), the runs
    folders, and a folder of gates the test opens."""

    def __init__(self, root: Path, files: int = 12, seconds: float = 0.0,
                 timeout: int = 60) -> None:
        self.root = root
        self.project = root / "project"
        self.data = root / "data"
        self.runs = root / "runs"
        self.gates = root / "gates"
        for folder in (self.project / "src", self.data, self.runs, self.gates):
            folder.mkdir(parents=True)
        (self.project / "src" / "score.py").write_text(SCRIPT, encoding="utf-8")
        (self.project / "src" / "helper.py").write_text(
            "def shout(text):\n    return text.upper()\n", encoding="utf-8")
        for index in range(files):
            (self.data / f"f{index:02d}.txt").write_text(f"text {index}\n", encoding="utf-8")
        (self.project / "pipeline.yml").write_text(PIPELINE.format(
            data=self.data, gates=self.gates, seconds=seconds, timeout=timeout),
            encoding="utf-8")
        os.chmod(self.gates, 0o777)

    @property
    def hidden(self) -> tuple[Path, Path]:
        """What another machine does not have: the runs folder and the pipeline folder."""
        return (self.runs, self.project)

    def job(self, name: str, *, backend: str = "dask", scheduler: str | None = None,
            runs: Path | None = None, pythonpath: str = "") -> subprocess.Popen[str]:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), pythonpath)))}
        env.pop("MLPIPE_DASK_SCHEDULER", None)
        if scheduler:
            env["MLPIPE_DASK_SCHEDULER"] = scheduler
        return subprocess.Popen(
            [sys.executable, "-m", "mlpipe", "job", "create", "-f", "pipeline.yml", "-n", name,
             "--runs-dir", str(runs or self.runs), "--backend", backend, "--no-progress"],
            cwd=self.project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)

    def step(self, name: str, runs: Path | None = None) -> Path:
        return (runs or self.runs) / name / "score"


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def _lines(folder: Path, pattern: str) -> Counter[str]:
    """Every line of the files matching ``pattern`` below ``folder``, timestamps left out."""
    found: Counter[str] = Counter()
    for path in folder.glob(pattern):
        for line in path.read_text(encoding="utf-8").splitlines():
            found[line.split("|")[-1]] += 1
    return found


def _journal(step: Path) -> set[tuple[str, int, str, int, int]]:
    journal = Journal(str(step / ".mlpipe"), resume=True, read_only=True)
    try:
        return {(e.id, e.index, e.status, e.total, e.succeeded) for e in journal.entries()}
    finally:
        journal.close()


def _local_run(place: Place) -> Path:
    runs = place.root / "runs-local"
    out = finish(place.job("local", backend="local", runs=runs))
    assert "job local: completed" in out, out
    return place.step("local", runs)


def _same_as_local(step: Path, local: Path) -> None:
    """The outputs byte for byte, the logs tree's files, the journal, what the user's code
    printed and logged: as the local backend gave them."""
    assert _tree(step / "outputs") == _tree(local / "outputs")
    assert set(_tree(step / "logs")) == set(_tree(local / "logs"))
    assert _journal(step) == _journal(local)
    for pattern in ("logs/user/stdout/*/*", "logs/user/stderr/*/*",
                    "logs/user/entry_script_log/*/*"):
        assert _lines(step, pattern) == _lines(local, pattern), pattern


@contextlib.contextmanager
def _cluster(folder: Path, *, hidden: int, normal: int, place: Place) -> Iterator[DaskProcesses]:
    with dask_processes(folder) as cluster:
        if hidden:
            cluster.add_workers(hidden, nanny=False, hidden=place.hidden)
        if normal:
            cluster.add_workers(normal, nanny=False)
        yield cluster


def test_two_hidden_workers_and_one_that_sees_the_run_folder_give_the_local_runs_output(
        tmp_path: Path) -> None:
    place = Place(tmp_path / "user")
    local = _local_run(place)
    with _cluster(tmp_path / "cluster", hidden=2, normal=1, place=place) as cluster:
        out = finish(place.job("spread", scheduler=cluster.address))
        again = finish(place.job("again", scheduler=cluster.address))
    assert "job spread: completed" in out, out
    assert "job again: completed" in again, again
    sent = [(place.step(job) / "logs" / "sys" / "master_role.txt").read_text().count(
        "sending the code snapshot") for job in ("spread", "again")]
    assert sent == [2, 0]  # once to each hidden worker's cache, then never again
    step = place.step("spread")
    _same_as_local(step, local)
    master_role = (step / "logs" / "sys" / "master_role.txt").read_text(encoding="utf-8")
    assert master_role.count("does not see the run folder") == 2, master_role
    assert "Traceback" not in master_role
    # the hidden workers each ran init() and mini-batches: their output came back
    stdout = _lines(step, "logs/user/stdout/*/*")
    assert stdout["init"] == 3 and sum(stdout.values()) == 3 + 12


def test_three_hidden_workers_resume_after_the_driver_is_killed(tmp_path: Path) -> None:
    place = Place(tmp_path / "user", files=18, seconds=0.3)
    local = _local_run(place)
    with _cluster(tmp_path / "cluster", hidden=3, normal=0, place=place) as cluster:
        job = place.job("gone", scheduler=cluster.address)
        index = place.step("gone") / ".mlpipe" / "journal" / "index"
        wait_for(lambda: index.is_file() and index.stat().st_size > 0, "a finished mini-batch", job)
        job.send_signal(signal.SIGKILL)
        job.wait()
        out = finish(place.job("gone", scheduler=cluster.address))
    assert "resuming" in out and "job gone: completed" in out, out
    step = place.step("gone")
    assert _tree(step / "outputs") == _tree(local / "outputs")  # every row once, in order
    assert _journal(step) == _journal(local)


def test_a_lost_scheduler_ends_the_step_in_seconds_and_the_job_resumes(tmp_path: Path) -> None:
    place = Place(tmp_path / "user", files=18, seconds=0.5)
    local = _local_run(place)
    with _cluster(tmp_path / "cluster", hidden=2, normal=0, place=place) as cluster:
        job = place.job("cut", scheduler=cluster.address)
        index = place.step("cut") / ".mlpipe" / "journal" / "index"
        wait_for(lambda: index.is_file() and index.stat().st_size > 0, "a finished mini-batch", job)
        assert cluster.scheduler is not None
        os.killpg(cluster.scheduler.pid, signal.SIGKILL)
        killed = time.monotonic()
        out = finish(job, timeout=60)
        ended = time.monotonic() - killed
        address = cluster.address
    assert ended < 20, f"the job took {ended:.1f} s to end after the scheduler died"
    assert job.returncode == 1
    line = next(line for line in out.splitlines() if line.startswith("step score: failed"))
    assert f"lost the Dask scheduler at {address}" in line
    assert "resume with: mlpipe job create --file" in line and "--name cut" in line
    assert "Traceback" not in out
    master_role = (place.step("cut") / "logs" / "sys" / "master_role.txt").read_text()
    assert "Traceback" not in master_role
    dask_lines = [line.split("|", 4)[-1] for line in master_role.splitlines()
                  if "|Dask " in line and "[said" not in line]
    assert len(dask_lines) == len(set(dask_lines)) and len(dask_lines) < 10, master_role
    with _cluster(tmp_path / "cluster2", hidden=2, normal=0, place=place) as cluster:
        out = finish(place.job("cut", scheduler=cluster.address))
    assert "job cut: completed" in out, out
    assert _tree(place.step("cut") / "outputs") == _tree(local / "outputs")


def test_a_hidden_worker_killed_mid_step_costs_its_mini_batch_one_attempt(tmp_path: Path) -> None:
    place = Place(tmp_path / "user", files=12)
    local = _local_run(place)
    (place.gates / "f05.txt").write_text("120", encoding="utf-8")
    with _cluster(tmp_path / "cluster", hidden=3, normal=0, place=place) as cluster:
        job = place.job("hit", scheduler=cluster.address)
        entered = place.gates / "in-f05.txt"
        wait_for(entered.is_file, "run() waiting at its gate", job)
        # the parent of run()'s process (its own: the input is read-only), the Dask worker
        os.kill(psutil.Process(int(entered.read_text())).ppid(), signal.SIGKILL)
        (place.gates / "f05.txt").unlink()
        out = finish(job)
    assert "job hit: completed" in out, out
    assert "died or left the Dask cluster" in out
    step = place.step("hit")
    assert _tree(step / "outputs") == _tree(local / "outputs")
    csv = (step / "logs" / "sys" / "job_report" / "processed_mini-batches.csv").read_text()
    assert "ProcessDied" in csv


def test_a_run_left_running_past_its_timeout_is_not_claimed_by_the_next_job(
        tmp_path: Path) -> None:
    place = Place(tmp_path / "user", files=6, timeout=3)
    (place.gates / "f01.txt").write_text("40", encoding="utf-8")  # run() hangs there 40 s
    with _cluster(tmp_path / "cluster", hidden=3, normal=0, place=place) as cluster:
        first = finish(place.job("first", scheduler=cluster.address))
        assert "job first: completed" in first, first
        began = time.monotonic()
        second = finish(place.job("second", scheduler=cluster.address))
        took = time.monotonic() - began
    assert "job second: completed" in second, second
    assert "still in a run() that an earlier mlpipe run left there" in second, second
    assert took < 30, f"the second job waited {took:.1f} s (behind the first job's run()?)"


def test_a_worker_without_a_module_the_step_imports_is_not_used_and_the_console_says_so(
        tmp_path: Path) -> None:
    place = Place(tmp_path / "user", files=4)
    library = tmp_path / "site"
    library.mkdir()
    (library / "scorelib.py").write_text("VERSION = 2\n", encoding="utf-8")
    score = place.project / "src" / "score.py"
    score.write_text("import scorelib\n" + score.read_text(), encoding="utf-8")
    with dask_processes(tmp_path / "cluster") as cluster:
        cluster.add_workers(1, nanny=False, hidden=place.hidden)  # it lacks scorelib
        cluster.add_workers(1, nanny=False, hidden=place.hidden, pythonpath=[library])
        out = finish(place.job("deps", scheduler=cluster.address, pythonpath=str(library)))
    assert "job deps: completed" in out, out
    line = next(line for line in out.splitlines() if "is not used" in line)
    assert line.startswith("step score: Dask worker tcp://") and "(host " in line
    assert "cannot import scorelib (the step's code imports it; the driver can)" in line
    stdout = _lines(place.step("deps"), "logs/user/stdout/*/*")
    assert stdout["init"] == 1 and stdout["scored f03.txt"] == 1
