"""Every process a step starts ends with the step, after a kill -9 of the driver too: the
command's shell and its background `sleep`, a run() daemon that double-forks and calls
setsid; `job cancel` of a job whose driver is dead ends them before it says canceled."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from mlpipe.runtime.process_tree import TAG_ENV
from tests.conftest import REPO, run_cli
from tests.jobs.user_files_support import HEADER

pytestmark = pytest.mark.slow  # each waits for a driver's processes to start and end

COMMAND = """\
sleep 300 &
( setsid sh -c 'sleep 301' & )
while true; do date +%s%N >> ${{outputs.out}}/beat.txt; sleep 0.1; done
"""

ENTRY = """\
import os, subprocess, time

def init():
    pass

def run(mini_batch):
    if os.fork() == 0:  # a daemon: double fork and setsid
        os.setsid()
        if os.fork() == 0:
            subprocess.Popen(["sleep", "302"]).wait()
        os._exit(0)
    with open(os.path.join(os.environ["BEAT_DIR"], "beat.txt"), "a") as beat:
        beat.write("running\\n")
    time.sleep(300)
    return []
"""


def _command_job(root: Path) -> Path:
    yaml = root / "pipeline.yml"
    root.mkdir(parents=True, exist_ok=True)
    body = textwrap.indent(COMMAND, " " * 8)
    yaml.write_text(HEADER + "jobs:\n  work:\n    type: command\n    environment: azureml:env:1\n"
                    "    outputs:\n      out: {type: uri_folder}\n    command: |\n" + body)
    return yaml


def _parallel_job(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "score.py").write_text(ENTRY)
    (root / "data").mkdir()
    (root / "data" / "a.txt").write_text("a\n")
    yaml = root / "pipeline.yml"
    yaml.write_text(HEADER + textwrap.dedent(f"""\
        jobs:
          score:
            type: parallel
            inputs:
              data: {{type: uri_folder, path: ./data}}
            input_data: ${{{{inputs.data}}}}
            max_concurrency_per_instance: 1
            environment_variables: {{BEAT_DIR: "{root}"}}
            task:
              type: run_function
              code: ./src
              entry_script: score.py
              environment: azureml:env:1
        """))
    return yaml


def _start(yaml: Path, runs: Path, name: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "mlpipe", "job", "create", "-f", str(yaml),
                             "--runs-dir", str(runs), "-n", name, "--no-progress"],
                            env={**os.environ, "PYTHONPATH": str(REPO)}, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait_for(check, what: str, timeout: float = 60) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def tagged_under(folder: str) -> list[int]:
    """Pids of the processes tagged with a step of the job in ``folder``."""
    root = os.path.join(os.path.realpath(folder), "")
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get(TAG_ENV, "").startswith(root) \
                    and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found


def _commands(pids: list[int]) -> list[str]:
    found = []
    for pid in pids:
        try:
            found.append(" ".join(psutil.Process(pid).cmdline()))
        except psutil.Error:
            continue
    return found


def _watchdogs(run_dir: Path) -> list[psutil.Process]:
    return [proc for proc in psutil.process_iter(["cmdline"])
            if "_watch()" in " ".join(proc.info["cmdline"] or ())
            and str(run_dir) in (proc.info["cmdline"] or ())]


def _kill_driver(driver: subprocess.Popen[str]) -> None:
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()


@pytest.fixture
def cleanup():  # noqa: ANN201
    folders: list[Path] = []
    yield folders
    for folder in folders:  # whatever a failing test left running
        for pid in tagged_under(str(folder)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_command_steps_processes_end_after_a_kill_9_of_the_driver(
        tmp_path: Path, cleanup: list[Path]) -> None:
    runs = tmp_path / "runs"
    cleanup.append(runs / "c1")
    driver = _start(_command_job(tmp_path / "proj"), runs, "c1")
    beat = runs / "c1" / "work" / "outputs" / "out" / "beat.txt"
    _wait_for(beat.exists, "the command to start")
    _wait_for(lambda: len(_commands(tagged_under(str(runs / "c1")))) >= 4, "its processes")
    _kill_driver(driver)
    _wait_for(lambda: not tagged_under(str(runs / "c1")), "the step's processes to end", 15)
    size = beat.stat().st_size
    time.sleep(1)
    assert beat.stat().st_size == size  # nothing writes any more


def test_a_run_daemon_ends_after_a_kill_9_of_the_driver(tmp_path: Path,
                                                        cleanup: list[Path]) -> None:
    runs = tmp_path / "runs"
    cleanup.append(runs / "p1")
    driver = _start(_parallel_job(tmp_path / "proj"), runs, "p1")
    _wait_for((tmp_path / "proj" / "beat.txt").exists, "run() to start")
    _wait_for(lambda: any("sleep 302" in c for c in _commands(tagged_under(str(runs / "p1")))),
              "the daemon")
    _kill_driver(driver)
    _wait_for(lambda: not tagged_under(str(runs / "p1")), "the worker and its daemon to end", 15)


def test_cancel_of_a_job_whose_driver_is_dead_ends_its_processes_first(
        tmp_path: Path, cleanup: list[Path]) -> None:
    runs = tmp_path / "runs"
    cleanup.append(runs / "c1")
    driver = _start(_command_job(tmp_path / "proj"), runs, "c1")
    beat = runs / "c1" / "work" / "outputs" / "out" / "beat.txt"
    _wait_for(beat.exists, "the command to start")
    _wait_for(lambda: _watchdogs(runs / "c1") != [], "the job's watchdog")
    for watchdog in _watchdogs(runs / "c1"):  # the machine lost it too (an OOM kill...)
        watchdog.kill()
    _kill_driver(driver)
    time.sleep(1)
    left = _commands(tagged_under(str(runs / "c1")))
    assert any("sleep 300" in c for c in left) and any("sleep 301" in c for c in left), left
    proc = run_cli("job", "cancel", "-n", "c1", "--runs-dir", str(runs))
    assert proc.returncode == 0 and "canceled" in proc.stdout, proc.stdout + proc.stderr
    assert tagged_under(str(runs / "c1")) == []
    size = beat.stat().st_size
    time.sleep(1)
    assert beat.stat().st_size == size
