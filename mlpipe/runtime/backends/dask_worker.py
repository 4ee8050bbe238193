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

import contextlib
import logging
import os
import pickle
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

_MARKER = "{:020d} {} {:014.4f} {:014.4f}\n"


@dataclass(frozen=True)
class SlotFiles:
    """The files one mlpipe worker (one generation of it) shares with the driver.

    ``marker``: the mini-batch it runs (``task id``, ``R``unning or ``D``one, and the
    seconds from the start of its bundle to that mini-batch's start and end);
    ``phase``: the :mod:`~mlpipe.runtime.phases` record; ``halt``: created by the driver
    when the bundle running must end after its current mini-batch (the step stops, the
    worker is given back, or the driver gave up on a run() it may not kill), so what is
    left of it is returned as if it had been queued; ``results``: the stem of each
    bundle's results file (:func:`bundle_results`), where each mini-batch's result is
    written as it ends, so a bundle whose worker dies keeps what it finished.
    Each generation has its own, so a process left to finish a run() never writes
    over its successor's. They live in the step's own (shared) state folder.
    """

    marker: str
    phase: str
    halt: str
    results: str


def slot_files(config: WorkerConfig, worker: WorkerInfo, tag: str) -> SlotFiles:
    """The files of ``worker`` in generation ``tag``: ``<state>/dask/<node>-<process>-<tag>.*``."""
    stem = Path(config.working_root).parent / "dask" / f"{worker.node_name}-{worker.process}-{tag}"
    return SlotFiles(f"{stem}.task", f"{stem}.phase", f"{stem}.halt", f"{stem}-bundle")


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


def bundle_results(files: SlotFiles, first_task_id: int) -> str:
    """The results file of the bundle that starts with ``first_task_id``."""
    return f"{files.results}-{first_task_id:09d}.results"


def read_bundle_results(path: str) -> list[TaskResult]:
    """The results a bundle wrote before it ended or its worker died (a torn last one is
    left out); ``[]`` when the file cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return []
    found, offset = [], 0
    while offset + 4 <= len(data):
        size = int.from_bytes(data[offset:offset + 4], "little")
        if offset + 4 + size > len(data):
            break
        with contextlib.suppress(Exception):
            found.append(pickle.loads(data[offset + 4:offset + 4 + size]))
        offset += 4 + size
    return [result for result in found if isinstance(result, TaskResult)]


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

    One TaskResult per mini-batch, fewer when the driver halted the bundle (its halt file,
    looked at before each mini-batch);
    ``None`` when the worker is not here. ``after`` is the bundle's predecessor on a
    Dask worker with several threads (a dependency that keeps the bundles in order).
    """
    hosted = _HOSTED.get(key)
    if hosted is None:
        return None
    results: list[TaskResult] = []
    with hosted.lock:  # a Dask worker with several threads still runs one mini-batch at a time
        began = time.perf_counter()
        kept = os.open(bundle_results(hosted.files, tasks[0].task_id),
                       os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if tasks else -1
        try:
            for task in tasks:
                if os.path.exists(hosted.files.halt):
                    break
                start = time.perf_counter() - began
                _note(hosted.marker, task.task_id, "R", start, 0.0)
                result = hosted.runtime.run_task(task)
                data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
                os.write(kept, len(data).to_bytes(4, "little") + data)
                _note(hosted.marker, task.task_id, "D", start, time.perf_counter() - began)
                results.append(result)
        finally:
            if kept >= 0:
                os.close(kept)
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


__all__ = ["Marker", "SlotFiles", "bundle_results", "read_bundle_results", "read_task_marker",
           "run_tasks", "slot_files", "start_worker", "stop_worker"]
