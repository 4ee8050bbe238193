"""The worker side of the local backend: what runs inside each worker process.

:class:`~mlpipe.runtime.backends.local.WorkerProcess` starts a fresh interpreter
that imports this module (and, through it, :mod:`mlpipe.runtime.worker`) and calls
:func:`main` on its end of a socket to the driver (or to a Dask worker that runs a
step's code in a process of its own, :mod:`.dask_isolated`). The first message is
``(WorkerConfig, WorkerInfo)``, with the phase file's path as a third item when it is
not the local backend's. The worker runs init(), then tasks in small batches, and
answers with one message each:

- ``("ready", pid)`` or ``("init_failed", message, traceback, stage)`` after init();
- a :class:`~mlpipe.runtime.tasks.TaskResult` as a plain tuple per task, sent the
  moment the task ends (the driver measures the next task's time from it);
- ``("stopped", returned task ids, shutdown()'s traceback or None)`` after ``("stop",)``.

The driver sends ``("tasks", [task_wire(Task), ...])`` and ``("stop",)``
(:func:`~mlpipe.runtime.tasks.task_wire`: plain tuples, cheap to pickle).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
from collections import deque
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from mlpipe.runtime.phases import PhaseWriter, phase_file
from mlpipe.runtime.process_tree import OrphanReaper, become_subreaper, die_with_parent
from mlpipe.runtime.read_only import ReadOnlyError
from mlpipe.runtime.read_only import apply as apply_read_only
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.tasks import Task, task_from_wire
from mlpipe.runtime.worker import InitError, WorkerConfig, WorkerRuntime


def main(fd: int, parent: int | None = None) -> None:
    """Entry point of a worker process: ``fd`` is its end of the socket to the driver
    (process ``parent``: the worker dies with it, a ``kill -9`` too)."""
    os.set_inheritable(fd, False)
    die_with_parent(parent)
    become_subreaper()  # orphans of run()'s processes stay in this worker's tree
    conn = Connection(fd)
    config, worker, *phases = conn.recv()  # a Dask worker's step process names its phase file
    if config.read_only:  # while single-threaded: a mount namespace of its own
        try:
            apply_read_only(config.read_only)
        except ReadOnlyError as error:
            _send_quietly(conn, ("init_failed", "the step's ro_mount inputs could not be made "
                                 f"read-only: {error}", ""))
            return
    serve(conn, config, worker, *phases)


def serve(conn: Connection, config: WorkerConfig, worker: WorkerInfo,
          phases: str | None = None) -> None:
    """Body of a worker process: init, then run tasks from ``conn`` until told to stop.
    ``phases``: the phase file, when not the local backend's (a Dask worker's, written
    without a memory map: another host may read it).

    When the driver is gone (its end of the socket closed), the worker calls
    shutdown() and exits quietly.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    runtime = WorkerRuntime(config, worker)
    runtime.phases = PhaseWriter(Path(phases), memory_map=False) if phases else PhaseWriter(
        phase_file(config.working_root, worker.node_name, worker.process))
    try:
        runtime.start()
    except InitError as error:
        _send_quietly(conn, ("init_failed", str(error), error.traceback, error.stage))
        return
    try:
        conn.send(("ready", os.getpid()))
        _serve_tasks(conn, runtime)
    except (EOFError, OSError):  # the driver is gone
        runtime.stop()


def _serve_tasks(conn: Connection, runtime: WorkerRuntime) -> None:
    queue: deque[Task] = deque()
    stopping = False
    send = conn.send_bytes
    waiting = select.poll()  # registered once: Connection.poll() builds a selector per call
    waiting.register(conn.fileno(), select.POLLIN)
    reaper = OrphanReaper()
    while True:
        if not queue:
            stopping = _handle(conn.recv(), queue) or stopping
        while waiting.poll(0):  # more tasks, or "stop", sent meanwhile
            stopping = _handle(conn.recv(), queue) or stopping
        if stopping:
            returned = tuple(task.task_id for task in queue)
            conn.send(("stopped", returned, runtime.stop()))
            return
        if queue:
            send(pickle.dumps(tuple(runtime.run_task(queue.popleft())), pickle.HIGHEST_PROTOCOL))
            reaper.maybe_reap()


def _send_quietly(conn: Connection, message: tuple[Any, ...]) -> None:
    with contextlib.suppress(OSError):
        conn.send(message)


def _handle(message: Any, queue: deque[Task]) -> bool:
    if message[0] == "tasks":
        queue.extend(map(task_from_wire, message[1]))
        return False
    return bool(message[0] == "stop")


__all__ = ["main", "serve"]
