"""Command steps: a shell command in a snapshot of the step's code folder.

The command (already substituted and shell-quoted by the compiler) runs through
``bash -c`` (``/bin/sh -c`` when bash is absent) in ``<step>/code`` — a copy of the
step's ``code`` folder, or an empty folder when it has none. ``python`` in the
command is the runner's own interpreter. Output is captured like Azure's
``user_logs``::

    <step>/logs/user/std_log.txt    stdout and stderr interleaved, as written
    <step>/logs/user/stdout.txt     stdout only
    <step>/logs/user/stderr.txt     stderr only

The exit code decides the status. Cancelling kills the command's whole process group. The
shell starts through :mod:`mlpipe.runtime.read_only`: it sees the step's ``ro_mount`` inputs
read-only and a copy of each ``download`` input, dies with the driver, and is the
subreaper of what it starts (a double-forked daemon stays below it, where the driver notes
it: :func:`mlpipe.runtime.process_tree.remember_tree`); what is left of it is ended when the
step ends, and by the job's watchdog when the driver is killed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO

from mlpipe.compiler.assets import STAND_INS_ENV
from mlpipe.import_mirrors import PROGRAMS, child_environment, mode
from mlpipe.jobs.distribution import launcher_environment
from mlpipe.jobs.step_metrics import metrics_environment
from mlpipe.jobs.timestamps import now
from mlpipe.plan import CommandStep, Step
from mlpipe.runtime.faults import describe_fault, naming
from mlpipe.runtime.process_tree import TAG_ENV, Ended, end_tagged, remember_tree, step_tag
from mlpipe.runtime.read_only import launch_command, make_copies, step_view
from mlpipe.runtime.snapshot import snapshot_code
from mlpipe.runtime.source_paths import to_user_paths
from mlpipe.runtime.step_logs import StepLogs

KILL_GRACE_SECONDS = 5.0
POLL_SECONDS = 0.1
TAIL_LINES = 20


@dataclass
class CommandOutcome:
    """How a command step ended."""

    status: str  # "completed", "failed" or "canceled"
    exit_code: int | None
    started_at: datetime
    ended_at: datetime
    stdout_path: str
    stderr_path: str
    std_log_path: str
    error: str | None = None


def make_output_folders(step: Step) -> None:
    """Every output folder (for ``uri_file`` outputs: the file's folder) exists before start."""
    for output in step.outputs.values():
        Path(output.folder).mkdir(parents=True, exist_ok=True)


def python_shim_dir(step: Step) -> Path:
    """A folder with ``python``/``python3`` launching the runner's own interpreter, the
    Azure programs mlpipe stands in for (``mldesigner``: :data:`PROGRAMS`) unless the
    import mirrors are off, and ``curl``/``wget`` serving the job's URL stand-ins
    (:mod:`mlpipe.jobs.downloaders`).

    A wrapper script rather than a symlink, so a virtual environment's interpreter
    keeps its ``site-packages``.
    """
    bin_dir = Path(step.state_dir) / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    shims = {name: "" for name in ("python", "python3")}
    if mode() != "off":
        shims.update({name: f" -m {module}" for name, module in PROGRAMS.items()})
    # downloads of URLs the job's mlpipe.toml maps read the stand-ins (jobs/downloaders.py)
    shims.update({name: f" -m mlpipe.jobs.downloaders {name}" for name in ("curl", "wget")})
    for name, run in shims.items():
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}"{run} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    return bin_dir


def command_environment(step: Step) -> dict[str, str]:
    """The process environment: ours, a distributed step's launcher variables (a world of
    one, :mod:`mlpipe.jobs.distribution`), where a command step's mlflow metrics go (and the
    mlflow stand-in, :mod:`mlpipe.jobs.step_metrics`), the step's ``environment_variables``,
    our Python first (with mlpipe's import hook,
    :func:`mlpipe.import_mirrors.child_environment`)."""
    env = dict(os.environ)
    path_parts = [str(python_shim_dir(step)), str(Path(sys.executable).parent)]
    env["PATH"] = os.pathsep.join(path_parts + [env.get("PATH", os.defpath)])
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("PYTHONHOME", None)
    if isinstance(step, CommandStep):
        env.update(launcher_environment(step.distribution))
    if step.stand_ins:  # its downloads read the job's mlpipe.toml stand-ins
        env[STAND_INS_ENV] = step.stand_ins
    own = {str(k): str(v) for k, v in step.environment_variables.items()}
    env.update(own)
    if isinstance(step, CommandStep):  # what it logs with mlflow lands in its folder
        metrics = metrics_environment(Path(step.step_dir), env.get("PYTHONPATH"))
        # the step's own settings win, but its PYTHONPATH gets the mlflow stand-in in front
        env.update({k: v for k, v in metrics.items() if k == "PYTHONPATH" or k not in own})
    return child_environment(env)  # its Pythons resolve azureml.* / azure.ai.ml to the mirrors


def shell() -> list[str]:
    bash = shutil.which("bash")
    return [bash, "-c"] if bash else ["/bin/sh", "-c"]


def run_command_step(step: CommandStep, *, cancel: threading.Event | None = None) -> CommandOutcome:
    """Run ``step.command`` to its end (or until ``cancel`` is set)."""
    cancel = cancel or threading.Event()
    logs = StepLogs.of(step.logs_dir)
    logs.user.mkdir(parents=True, exist_ok=True)
    paths = {"std_log": logs.std_log, "stdout": logs.stdout, "stderr": logs.stderr}
    make_output_folders(step)
    workdir = snapshot_code(step.code_dir, step.snapshot_dir, step.additional_includes)
    view = step_view(step)  # its ro_mount inputs read-only, a download input a copy
    tag = step_tag(step.state_dir)
    started = now()
    command = step.command
    with open(paths["std_log"], "wb") as combined:
        _note_ended(combined, end_tagged(tag), "left running by an earlier run of this step")
        try:
            make_copies(view)
            argv = [*shell(), command]
            proc = subprocess.Popen(  # through read_only.main: dies with the driver, keeps
                launch_command(view, argv), cwd=workdir,  # its daemons below it, sees its view
                env={**command_environment(step), TAG_ENV: tag},
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            return CommandOutcome("failed", None, started, now(), str(paths["stdout"]),
                                  str(paths["stderr"]), str(paths["std_log"]),
                                  error=f"could not start the shell: {describe_fault(exc)}")
        lock = threading.Lock()
        faults: list[OSError] = []
        pumps = [
            threading.Thread(target=_pump, daemon=True,
                             args=(proc.stdout, paths["stdout"], combined, lock, faults)),
            threading.Thread(target=_pump, daemon=True,
                             args=(proc.stderr, paths["stderr"], combined, lock, faults)),
        ]
        for pump in pumps:
            pump.start()
        canceled = _wait(proc, cancel, lambda: remember_tree(tag, proc.pid))
        leftovers = end_tagged(tag)  # daemons it started (they may hold its pipes open)
        for pump in pumps:
            pump.join(timeout=KILL_GRACE_SECONDS)
        _note_ended(combined, leftovers, "still running when the step ended")
    ended = now()
    outcome = CommandOutcome("completed", proc.returncode, started, ended, str(paths["stdout"]),
                             str(paths["stderr"]), str(paths["std_log"]))
    if canceled:
        outcome.status, outcome.error = "canceled", "canceled while running"
    elif proc.returncode != 0:
        outcome.status = "failed"
        outcome.error = f"command exited with code {proc.returncode}" + to_user_paths(
            _tail(paths["stderr"]), step.snapshot_dir, step.code_dir)  # the user's files
    elif faults:
        outcome.status = "failed"
        outcome.error = f"cannot write the command's output: {describe_fault(faults[0])}"
    return outcome


def _note_ended(log: IO[bytes], ended: list[Ended], why: str) -> None:
    """One line in the step's std_log per process mlpipe ended (a full disk: not noted)."""
    with contextlib.suppress(OSError):
        for process in ended:
            log.write(f"mlpipe: ended {process.describe()}, started by the step's command "
                      f"and {why}\n".encode("utf-8", "backslashreplace"))
        log.flush()


def _pump(stream: IO[bytes], own: Path, combined: IO[bytes], lock: threading.Lock,
          faults: list[OSError]) -> None:
    """Copy ``stream`` to ``own`` and ``combined``; when they cannot be written (a full disk),
    note it in ``faults`` and keep draining ``stream`` so the command never blocks."""
    try:
        with naming(own), open(own, "wb") as out:
            for chunk in iter(lambda: stream.readline(), b""):
                out.write(chunk)
                out.flush()
                with lock, naming(combined.name):
                    combined.write(chunk)
                    combined.flush()
    except OSError as error:
        faults.append(error)
        for _chunk in iter(lambda: stream.read(1 << 16), b""):
            pass
    stream.close()


def _wait(proc: subprocess.Popen[bytes], cancel: threading.Event,
          note: Callable[[], None]) -> bool:
    """Wait for ``proc`` (calling ``note`` at each poll: what it started is noted); on
    ``cancel`` kill its process group. True when canceled."""
    while True:
        note()
        if cancel.is_set():
            kill_process_group(proc)
            return True
        try:
            proc.wait(timeout=POLL_SECONDS)
            break
        except subprocess.TimeoutExpired:
            continue
    # Leftover background children of the shell would keep the pipes open.
    _signal_group(proc.pid, signal.SIGKILL)
    return False


def kill_process_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the command's process group, then SIGKILL what is left after a grace period."""
    _signal_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_GRACE_SECONDS)
    _signal_group(proc.pid, signal.SIGKILL)
    proc.wait()


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _tail(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    tail = [line for line in lines[-TAIL_LINES:] if line.strip()]
    return (":\n" + "\n".join(tail)) if tail else ""
