"""The worker side of the Dask backend: the task functions that run inside Dask workers.

:class:`~mlpipe.runtime.backends.dask.DaskBackend` submits :func:`start_worker`,
:func:`run_tasks` and :func:`stop_worker` as Dask tasks pinned to one Dask worker;
they are pickled by reference, so each Dask worker process imports this module
(and :mod:`mlpipe.runtime.worker`), never the driver side. The
:class:`~mlpipe.runtime.worker.WorkerRuntime` lives in this module's ``_HOSTED``
between tasks; one Dask worker process hosts at most one mlpipe worker.

One ``run_tasks`` task runs a *bundle* of mini-batches one after the other, each
exactly as a single task would (its own TaskResult, phase records, failures); the
marker file (:class:`SlotFiles`) says which of them is running and since when, for
the driver's timeouts and for a worker that dies mid-bundle.

A Dask worker outlives the step: :func:`stop_worker` gives the process back as it
found it (standard streams, working folder, environment, ``sys.path``, ``sys.argv``
and the modules imported from the step's code), so a worker of a cluster mlpipe did
not start is never restarted to be cleaned.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from mlpipe.runtime.phases import PhaseWriter
from mlpipe.runtime.process_state import ProcessState
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.tasks import Task, TaskResult
from mlpipe.runtime.worker import InitError, WorkerConfig, WorkerRuntime

ABANDON_CHECK_SECONDS = 0.5  # after a mini-batch this long, look whether the driver gave up
_MARKER = "{:020d} {} {:014.4f} {:014.4f}\n"


@dataclass(frozen=True)
class SlotFiles:
    """The files one mlpipe worker (one generation of it) shares with the driver.

    ``marker``: the mini-batch it runs (``task id``, ``R``unning or ``D``one, and the
    seconds from the start of its bundle to that mini-batch's start and end);
    ``phase``: the :mod:`~mlpipe.runtime.phases` record; ``abandon``: created by the
    driver when it gave up on a run() past its timeout on a worker it may not kill.
    Each generation has its own, so a process left to finish a run() never writes
    over its successor's. They live in the step's own (shared) state folder.
    """

    marker: str
    phase: str
    abandon: str


def slot_files(config: WorkerConfig, worker: WorkerInfo, tag: str) -> SlotFiles:
    """The files of ``worker`` in generation ``tag``: ``<state>/dask/<node>-<process>-<tag>.*``."""
    stem = Path(config.working_root).parent / "dask" / f"{worker.node_name}-{worker.process}-{tag}"
    return SlotFiles(f"{stem}.task", f"{stem}.phase", f"{stem}.abandon")


class Marker(NamedTuple):
    """A marker file's record: ``task_id`` runs (``state`` "R") or ran ("D"); ``start`` and
    ``end`` are seconds from the start of its bundle (``end`` is 0 while it runs)."""

    task_id: int
    state: str
    start: float
    end: float


def read_task_marker(path: str | Path) -> Marker | None:
    """The marker file's record, if there is a readable one."""
    try:
        task_id, state, start, end = Path(path).read_text(encoding="ascii").split()
        return Marker(int(task_id), state, float(start), float(end))
    except (OSError, ValueError):
        return None


def _note(fd: int, task_id: int, state: str, start: float, end: float) -> None:
    os.pwrite(fd, _MARKER.format(task_id, state, start, end).encode(), 0)


@dataclass
class _Hosted:
    """An mlpipe worker kept in a Dask worker process between tasks."""

    runtime: WorkerRuntime
    lock: threading.Lock
    state: ProcessState
    files: SlotFiles
    marker: int  # file descriptor of its marker file


_HOSTED: dict[str, _Hosted] = {}


def start_worker(key: str, config: WorkerConfig, worker: WorkerInfo,
                 files: SlotFiles) -> tuple[Any, ...]:
    """Build the WorkerRuntime and run init(): ``("ready", pid)``, ``("init_failed", message,
    traceback)``, or ``("busy", key)`` when this process already hosts an mlpipe worker."""
    for other in _HOSTED:
        return ("busy", other)
    state = ProcessState.save()
    _keep_dask_logs_on(state.fds[1])
    runtime = WorkerRuntime(config, worker)
    code_dirs = (config.code_dir, str(Path(config.entry_script_path).parent))
    try:
        runtime.start()
    except InitError as error:
        state.restore(code_dirs)
        return ("init_failed", str(error), error.traceback)
    runtime.phases = PhaseWriter(Path(files.phase), memory_map=False)
    Path(files.marker).parent.mkdir(parents=True, exist_ok=True)
    marker = os.open(files.marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    _HOSTED[key] = _Hosted(runtime, threading.Lock(), state, files, marker)
    return ("ready", os.getpid())


def run_tasks(key: str, tasks: Sequence[Task], after: Any = None) -> list[TaskResult] | None:
    """Run a bundle of mini-batches, in order, on the mlpipe worker ``key`` of this process.

    One TaskResult per mini-batch (fewer only when the driver abandoned the bundle);
    ``None`` when the worker is not here. ``after`` is the bundle's predecessor on a
    Dask worker with several threads (a dependency that keeps the bundles in order).
    """
    hosted = _HOSTED.get(key)
    if hosted is None:
        return None
    results: list[TaskResult] = []
    with hosted.lock:  # a Dask worker with several threads still runs one mini-batch at a time
        began = time.perf_counter()
        for task in tasks:
            start = time.perf_counter() - began
            _note(hosted.marker, task.task_id, "R", start, 0.0)
            result = hosted.runtime.run_task(task)
            _note(hosted.marker, task.task_id, "D", start, time.perf_counter() - began)
            results.append(result)
            if result.elapsed_seconds >= ABANDON_CHECK_SECONDS \
                    and os.path.exists(hosted.files.abandon):
                break
    return results


def stop_worker(key: str, after: Any = None) -> str | None:
    """Call shutdown() and give the process back as it was before; shutdown()'s traceback or
    None (``after``: as for :func:`run_tasks`)."""
    hosted = _HOSTED.get(key)
    if hosted is None:
        return None
    with hosted.lock:
        try:
            error = hosted.runtime.stop()
        finally:
            config = hosted.runtime.config
            hosted.state.restore((config.code_dir, str(Path(config.entry_script_path).parent)))
            os.close(hosted.marker)
            _HOSTED.pop(key, None)
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


__all__ = ["ABANDON_CHECK_SECONDS", "Marker", "SlotFiles", "read_task_marker", "run_tasks",
           "slot_files", "start_worker", "stop_worker"]
