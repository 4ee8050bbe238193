"""Every process a step starts ends with the step: double-forked and setsid daemons of
run(), and processes an earlier run of the step left behind, named in the driver log."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from mlpipe.frozen import freeze
from mlpipe.runtime import run_parallel_step
from mlpipe.runtime.process_tree import TAG_ENV, OrphanReaper, step_tag
from tests.runtime.support import LOADER, file_mini_batches, make_step

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="process trees are Linux's here")

DAEMON = """
import os

def run(mini_batch):
    name = os.path.basename(mini_batch[0])
    first = os.fork()
    if first == 0:  # the classic daemon: fork, setsid, fork again, the middle one exits
        os.setsid()
        if os.fork() == 0:
            with open(os.path.join(os.environ["PIDS"], name), "w") as out:
                out.write(str(os.getpid()))
            os.execvp("sleep", ["sleep", "300"])
        os._exit(0)
    os.waitpid(first, 0)
    return [name]
"""


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_gone(pids: list[int], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not all(_gone(pid) for pid in pids):
        assert time.monotonic() < deadline, [pid for pid in pids if not _gone(pid)]
        time.sleep(0.05)


def test_daemons_that_run_started_end_with_the_step(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    step = make_step(tmp_path, DAEMON, environment_variables=freeze({"PIDS": str(pids)}))
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 3),
                                loader=LOADER)
    assert summary.status == "Completed", summary.reason
    started = [int(path.read_text()) for path in sorted(pids.iterdir())]
    assert len(started) == 3
    try:
        _wait_gone(started, timeout=5)  # ended before run_parallel_step returned (or reaped)
    finally:
        for pid in started:
            if not _gone(pid):
                os.kill(pid, 9)
    log = (Path(step.logs_dir) / "sys" / "master_role.txt").read_text()
    for pid in started:
        assert f"Ended process {pid} (sleep 300), started by the step's code" in log


def test_a_process_an_earlier_run_left_behind_is_ended_before_the_step_runs_again(
        tmp_path: Path) -> None:
    step = make_step(tmp_path, "def run(mini_batch):\n    return mini_batch\n")
    leftover = subprocess.Popen(["sleep", "300"], env={
        **os.environ, TAG_ENV: step_tag(str(Path(step.state_dir) / "working"))})
    try:
        summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 2),
                                    loader=LOADER, resume=True)
        assert summary.status == "Completed", summary.reason
        assert leftover.wait(timeout=10) == -9
    finally:
        if leftover.poll() is None:
            leftover.kill()
            leftover.wait()
    log = (Path(step.logs_dir) / "sys" / "master_role.txt").read_text()
    assert f"Ended process {leftover.pid} (sleep 300), started by the step's code and left " \
           "running by an earlier run of this step." in log


def test_the_orphan_reaper_never_takes_a_child_python_still_waits_for() -> None:
    waited = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while psutil.Process(waited.pid).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    OrphanReaper().maybe_reap()
    assert waited.wait(timeout=10) == 0 and waited.returncode == 0  # its own status, not lost
