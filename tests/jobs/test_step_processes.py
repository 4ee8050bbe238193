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


# -- a daemon that clears its environment: no tag, still the step's -----------------------
# run() waits for GO, then starts a double-forked setsid daemon that execs `sleep` with an
# empty environment (no MLPIPE_PROCESS_TAG), its pid in DAEMON
ENV_CLEARING_ENTRY = """\
import os, time

def init():
    pass

def run(mini_batch):
    folder = os.environ["BEAT_DIR"]
    with open(os.path.join(folder, "beat.txt"), "a") as beat:
        beat.write("running\\n")
    while not os.path.exists(os.path.join(folder, "GO")):
        time.sleep(0.05)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(os.path.join(folder, "DAEMON.tmp"), "w") as out:
                out.write(str(os.getpid()))
            os.rename(os.path.join(folder, "DAEMON.tmp"), os.path.join(folder, "DAEMON"))
            os.execve("/bin/sleep", ["sleep", "303"], {})
        os._exit(0)
    time.sleep(300)
    return []
"""

# no process of its own before the daemon (each would be noted): a builtin read of a FIFO
# waits between two looks at GO
ENV_CLEARING_COMMAND = """\
mkfifo wait && exec 3<> wait
: > {beat}
while [ ! -e {go} ]; do read -t 0.05 -u 3 || true; done
( setsid env -i sh -c 'echo $$ > {daemon}.tmp && mv {daemon}.tmp {daemon} && exec sleep 304' & )
while true; do sleep 0.1; done
"""


def _env_clearing_command_job(proj: Path) -> Path:
    yaml = proj / "pipeline.yml"
    proj.mkdir(parents=True)
    body = textwrap.indent(ENV_CLEARING_COMMAND.format(
        beat=proj / "beat.txt", go=proj / "GO", daemon=proj / "DAEMON"), " " * 8)
    yaml.write_text(HEADER + "jobs:\n  work:\n    type: command\n    environment: "
                    "azureml:env:1\n    command: |\n" + body)
    return yaml


def _read_chars(pid: int) -> int:
    """Bytes process ``pid`` has read so far (``/proc/<pid>/io``)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError(f"no rchar for {pid}")


READ_SYSCALL = {"x86_64": 0, "aarch64": 63}.get(os.uname().machine)


def _waiting_on_its_pipe(pid: int) -> bool:
    """Process ``pid`` is blocked reading its standard input (``/proc/<pid>/syscall``; on a
    machine whose syscall number is not known here, assumed)."""
    if READ_SYSCALL is None:
        return True
    try:
        call = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return call[:2] == [str(READ_SYSCALL), "0x0"]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.mark.parametrize("kind", ["parallel", "command"])
def test_a_daemon_that_clears_its_environment_ends_after_a_kill_9_of_the_driver(
        tmp_path: Path, cleanup: list[Path], kind: str) -> None:
    """The daemon carries no tag: the driver noted it below the worker (or the command's
    shell), both subreapers, and told the job's watchdog, which ends it."""
    proj, runs = tmp_path / "proj", tmp_path / "runs"
    if kind == "parallel":
        yaml = _parallel_job(proj)
        (proj / "src" / "score.py").write_text(ENV_CLEARING_ENTRY)
    else:
        yaml = _env_clearing_command_job(proj)
    cleanup.append(runs / "e1")
    driver = _start(yaml, runs, "e1")
    daemon_pid = 0
    try:
        _wait_for((proj / "beat.txt").exists, "the step's code to start", 120)
        _wait_for(lambda: _watchdogs(runs / "e1") != [], "the job's watchdog")
        watchdog = _watchdogs(runs / "e1")[0]
        _wait_for(lambda: _waiting_on_its_pipe(watchdog.pid), "the watchdog to wait")
        told = _read_chars(watchdog.pid)
        (proj / "GO").touch()
        _wait_for((proj / "DAEMON").exists, "the daemon")
        daemon_pid = int((proj / "DAEMON").read_text())
        assert TAG_ENV not in psutil.Process(daemon_pid).environ()  # nothing tags it
        _wait_for(lambda: _read_chars(watchdog.pid) > told, "the driver to tell the watchdog")
        _kill_driver(driver)
        _wait_for(lambda: not _alive(daemon_pid), "the daemon to end", 30)
    finally:
        if driver.poll() is None:
            _kill_driver(driver)
        if daemon_pid and _alive(daemon_pid):
            os.kill(daemon_pid, signal.SIGKILL)


def test_a_daemon_that_clears_its_environment_ends_with_the_step_its_worker_died_in(
        tmp_path: Path, cleanup: list[Path]) -> None:
    """Its worker killed (run() ends it), the daemon outlives it untagged: the step's end
    ends it all the same and the driver log names it."""
    proj, runs = tmp_path / "proj", tmp_path / "runs"
    yaml = _parallel_job(proj)
    (proj / "src" / "score.py").write_text(ENV_CLEARING_ENTRY.replace(
        "    folder = os.environ[\"BEAT_DIR\"]\n",
        "    folder = os.environ[\"BEAT_DIR\"]\n"
        "    if os.path.exists(os.path.join(folder, 'DAEMON')):  # the retry\n"
        "        return []\n").replace(
        "    time.sleep(300)\n    return []",
        "    while not os.path.exists(os.path.join(folder, 'NOTED')):\n"
        "        time.sleep(0.05)\n"
        "    os.kill(os.getpid(), 9)"))
    cleanup.append(runs / "e2")
    driver = _start(yaml, runs, "e2")
    daemon_pid = 0
    try:
        _wait_for((proj / "beat.txt").exists, "run() to start", 120)
        _wait_for(lambda: _watchdogs(runs / "e2") != [], "the job's watchdog")
        watchdog = _watchdogs(runs / "e2")[0]
        _wait_for(lambda: _waiting_on_its_pipe(watchdog.pid), "the watchdog to wait")
        told = _read_chars(watchdog.pid)
        (proj / "GO").touch()
        _wait_for((proj / "DAEMON").exists, "the daemon")
        daemon_pid = int((proj / "DAEMON").read_text())
        _wait_for(lambda: _read_chars(watchdog.pid) > told, "the driver to note the daemon")
        (proj / "NOTED").touch()  # run() kills its worker: the daemon is orphaned, untagged
        assert driver.wait(timeout=300) == 0  # its retry succeeded
        assert not _alive(daemon_pid)
        logs = "".join(p.read_text() for p in (runs / "e2" / "score" / "logs").rglob("*.txt"))
        assert f"Ended process {daemon_pid} (sleep 303)" in logs
    finally:
        if driver.poll() is None:
            _kill_driver(driver)
        if daemon_pid and _alive(daemon_pid):
            os.kill(daemon_pid, signal.SIGKILL)


def test_cancel_of_a_dead_job_ends_a_daemon_that_cleared_its_environment(
        tmp_path: Path, cleanup: list[Path]) -> None:
    """Its driver and watchdog both gone (an OOM kill...), the untagged daemon is found in
    the job's processes.txt, where the driver noted it; `job cancel` ends it."""
    proj, runs = tmp_path / "proj", tmp_path / "runs"
    yaml = _env_clearing_command_job(proj)
    cleanup.append(runs / "e3")
    driver = _start(yaml, runs, "e3")
    daemon_pid = 0
    try:
        _wait_for((proj / "beat.txt").exists, "the command to start", 120)
        (proj / "GO").touch()
        _wait_for((proj / "DAEMON").exists, "the daemon")
        daemon_pid = int((proj / "DAEMON").read_text())
        ledger = runs / "e3" / "processes.txt"
        _wait_for(lambda: ledger.exists() and f"{daemon_pid} " in ledger.read_text(),
                  "the driver to note the daemon")
        _wait_for(lambda: _watchdogs(runs / "e3") != [], "the job's watchdog")
        for watchdog in _watchdogs(runs / "e3"):
            watchdog.kill()
        _kill_driver(driver)
        assert _alive(daemon_pid)  # nothing ended it: no tag, no watchdog
        proc = run_cli("job", "cancel", "-n", "e3", "--runs-dir", str(runs))
        assert proc.returncode == 0 and "canceled" in proc.stdout, proc.stdout + proc.stderr
        _wait_for(lambda: not _alive(daemon_pid), "the daemon to end", 15)
    finally:
        if driver.poll() is None:
            _kill_driver(driver)
        if daemon_pid and _alive(daemon_pid):
            os.kill(daemon_pid, signal.SIGKILL)
