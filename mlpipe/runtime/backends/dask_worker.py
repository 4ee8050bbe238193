"""The worker side of the Dask backend: the task functions that run inside Dask workers.

:class:`~mlpipe.runtime.backends.dask.DaskBackend` submits :func:`start_worker`,
:func:`run_task` and :func:`stop_worker` as Dask tasks pinned to one Dask worker;
they are pickled by reference, so each Dask worker process imports this module
(and :mod:`mlpipe.runtime.worker`), never the driver side. The
:class:`~mlpipe.runtime.worker.WorkerRuntime` lives in this module's ``_HOSTED``
between tasks. The task marker file (:func:`task_marker`) is written here and
read by the driver side when a worker dies.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlpipe.runtime.phases import PhaseWriter, phase_file
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.tasks import Task, TaskResult
from mlpipe.runtime.worker import InitError, WorkerConfig, WorkerRuntime


@dataclass
class _Hosted:
    """An mlpipe worker kept in a Dask worker process between tasks."""

    runtime: WorkerRuntime
    lock: threading.Lock
    saved_fds: tuple[int, int]
    saved_cwd: str
    marker: int  # file descriptor of its "running task" file


def task_marker(config: WorkerConfig, worker: WorkerInfo) -> Path:
    """The file where a worker notes the task it runs: ``<state>/dask/<node>-<process>.task``.

    When a worker process dies, the Dask messages it had not sent yet die with it
    (the scheduler may still think finished tasks are processing); this file,
    on the step's own (shared) folder, tells the driver which task was running.
    """
    return Path(config.working_root).parent / "dask" / f"{worker.node_name}-{worker.process}.task"


def _note(fd: int, task_id: int, state: str) -> None:
    os.pwrite(fd, f"{task_id:020d} {state}\n".encode(), 0)


def read_task_marker(path: Path) -> tuple[int, str] | None:
    """``(task id, "R" running | "D" done)`` from a worker's marker file, if readable."""
    try:
        task_id, state = path.read_text(encoding="ascii").split()
        return int(task_id), state
    except (OSError, ValueError):
        return None


_HOSTED: dict[str, _Hosted] = {}


def start_worker(key: str, config: WorkerConfig, worker: WorkerInfo) -> tuple[Any, ...]:
    """Build the WorkerRuntime and run init(); ``("ready", pid)`` or
    ``("init_failed", message, traceback)``."""
    saved_fds = (os.dup(1), os.dup(2))
    saved_cwd = os.getcwd()
    _keep_dask_logs_on(saved_fds[1])
    runtime = WorkerRuntime(config, worker)
    try:
        runtime.start()
    except InitError as error:
        _restore(saved_fds, saved_cwd)
        return ("init_failed", str(error), error.traceback)
    runtime.phases = PhaseWriter(phase_file(config.working_root, worker.node_name,
                                            worker.process), memory_map=False)
    marker_path = task_marker(config, worker)
    marker_path.parent.mkdir(parents=True, exist_ok=True)
    marker = os.open(marker_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    _HOSTED[key] = _Hosted(runtime, threading.Lock(), saved_fds, saved_cwd, marker)
    return ("ready", os.getpid())


def run_task(key: str, task: Task) -> TaskResult | None:
    """Run one mini-batch on the mlpipe worker ``key`` of this process (None: it is not here)."""
    hosted = _HOSTED.get(key)
    if hosted is None:
        return None
    with hosted.lock:  # a Dask worker with several threads still runs one mini-batch at a time
        _note(hosted.marker, task.task_id, "R")
        result = hosted.runtime.run_task(task)
        _note(hosted.marker, task.task_id, "D")
        return result


def stop_worker(key: str) -> str | None:
    """Call shutdown() and give the process its stdout/stderr back; shutdown()'s traceback or
    None."""
    hosted = _HOSTED.pop(key, None)
    if hosted is None:
        return None
    with hosted.lock:
        error = hosted.runtime.stop()
        _restore(hosted.saved_fds, hosted.saved_cwd)
        os.close(hosted.marker)
    return error


def _keep_dask_logs_on(fd: int) -> None:
    """Point the stream handlers of Dask's own logs at ``fd`` (the worker's real stderr).

    The WorkerRuntime redirects file descriptors 1 and 2 to the user's log files;
    Dask's messages belong in the Dask worker's log, not in the user's stderr.
    """
    stream = os.fdopen(os.dup(fd), "w", buffering=1, encoding="utf-8", errors="replace")
    for name in ("", "distributed", "dask"):
        for handler in logging.getLogger(name).handlers:
            if isinstance(handler, logging.StreamHandler) and not isinstance(
                    handler, logging.FileHandler) and handler.stream in (
                    sys.stderr, sys.stdout, sys.__stderr__, sys.__stdout__):
                handler.setStream(stream)


def _restore(saved_fds: tuple[int, int], saved_cwd: str) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    for fd, saved in zip((1, 2), saved_fds, strict=True):
        os.dup2(saved, fd)
        os.close(saved)
    with contextlib.suppress(OSError):
        os.chdir(saved_cwd)


__all__ = ["read_task_marker", "run_task", "start_worker", "stop_worker", "task_marker"]
