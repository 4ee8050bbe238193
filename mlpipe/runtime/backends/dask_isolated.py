"""A step's code on a Dask worker in a process of its own, where its inputs are read-only.

A Dask worker's process has many threads and outlives the step, so it cannot enter a mount
namespace of its own (``unshare`` refuses a threaded process, and the view would outlive
the step). When a step has ``ro_mount`` or ``download`` inputs (a
:class:`~mlpipe.runtime.read_only.ReadOnly` view), the Dask worker hosts an
:class:`IsolatedRuntime` instead of a :class:`~mlpipe.runtime.worker.WorkerRuntime`: a
fresh interpreter started as the local backend starts its workers
(:func:`mlpipe.runtime.backends.local_worker.main`, the same messages on a socket), which
applies the view while it is still single-threaded and then runs init(), each run() and
shutdown(). A write to such an input then fails with ``EROFS`` as on one machine and in
Azure ML; a ``download`` input is a copy of the worker's own. The child dies with the Dask
worker, and what it starts carries the step's tag (ended with the step).

Its interface is the WorkerRuntime's (``start``, ``run_task``, ``stop``), so the Dask
worker's code around it (markers, bundles, shipments, giving the process back) is the same.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from mlpipe.runtime.backends import local_worker
from mlpipe.runtime.read_only import ReadOnly, make_copies
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.tasks import Task, TaskResult, task_wire
from mlpipe.runtime.worker import InitError, WorkerConfig

COPIES_FOLDER = "copies"  # <scratch>/copies/<n>/<name>: a download input's copy on that machine


def worker_view(view: ReadOnly, scratch: str | None) -> ReadOnly:
    """``view`` as a Dask worker applies it: as the driver made it where the worker sees the
    run folder (the driver made the ``download`` copies there); on another machine with
    its scratch folder and temporary folder writable and each ``download`` input copied
    into the scratch folder (made here)."""
    if scratch is None:
        return view
    copies = tuple((str(Path(scratch, COPIES_FOLDER, str(index), Path(original).name)), original)
                   for index, (_, original) in enumerate(view.copies))
    local = ReadOnly(view.paths, (*view.writable, scratch, tempfile.gettempdir()), copies)
    make_copies(local)
    return local


class IsolatedRuntime:
    """A WorkerRuntime in a child process that sees ``config.read_only`` (see the module
    docstring; :func:`worker_view` of it, with ``scratch`` the worker's own folder when it
    does not see the run folder); its phase record goes to ``phase_path``."""

    phases = None  # the child writes the phase record itself

    def __init__(self, config: WorkerConfig, worker: WorkerInfo, phase_path: str,
                 scratch: str | None = None):
        self.config = config
        self.scratch = scratch
        self.worker = worker
        self.phase_path = phase_path
        self._popen: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._keeper: threading.Thread | None = None
        self._broken: str | None = None  # why the child cannot run tasks (its restart failed)

    def start(self) -> None:
        """Start the child and wait for its init(); :class:`InitError` as a WorkerRuntime
        raises it (the read-only view that could not be made is a ``start`` failure)."""
        if self.scratch is not None:
            try:
                self.config = replace(self.config, read_only=worker_view(self.config.read_only,
                                                                         self.scratch))
            except OSError as error:  # a full disk while copying a download input
                raise InitError(f"the step's download inputs could not be copied on this Dask "
                                f"worker: {error}", "", "start") from None
            self.scratch = None  # copied once: a restarted process uses the same copies
        parent, child = socket.socketpair()
        paths = [os.path.abspath(p) if p else os.getcwd() for p in sys.path]
        code = (f"import sys; sys.path[:0] = {paths!r}; "
                f"from {local_worker.__name__} import main; main({child.fileno()}, {os.getpid()})")
        started: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._keeper = threading.Thread(target=_keep, args=(code, child, started),
                                        name="mlpipe-step-process", daemon=True)
        self._keeper.start()
        popen = started.get()  # the process, or why it could not be started
        child.close()
        if isinstance(popen, OSError):
            parent.close()
            self._keeper = None
            raise InitError(f"the step's process could not be started on this Dask worker: "
                            f"{popen}", "", "start")
        self._popen = popen
        self._conn = Connection(parent.detach())
        answer = self._ask((self.config, self.worker, self.phase_path))
        if answer is None:
            raise InitError(f"the step's process on this Dask worker {self._ended()} before "
                            "init() answered", "", "start")
        if answer[0] == "init_failed":
            _, message, text, *stage = answer
            self._close()
            raise InitError(message, text, stage[0] if stage else "start")

    def run_task(self, task: Task) -> TaskResult:
        """Run ``task`` in the child; never raises. A child that died in it (its run()
        called ``os._exit``, the OOM killer) fails the task, as a local worker's death does,
        and is started again for the next one."""
        started = time.time()
        if self._conn is None and self._broken is None:
            try:
                self.start()
            except InitError as error:
                self._broken = f"the step's process could not be started again: {error}"
        if self._broken is not None or self._conn is None:
            return _failed(task, started, self._broken or "the step's process is gone")
        pid = self._popen.pid if self._popen is not None else 0
        answer = self._ask(("tasks", [task_wire(task)]))
        if answer is None:
            return _failed(task, started, f"the step's process (pid {pid}) on this Dask worker "
                           f"{self._ended()} while it ran this mini-batch", died=True)
        return TaskResult._make(answer)

    def stop(self) -> str | None:
        """Call shutdown() in the child and wait for it to end: shutdown()'s traceback."""
        if self._conn is None:
            return None
        answer = self._ask(("stop",))
        self._close()
        if answer is None or answer[0] != "stopped":
            return None
        traceback: str | None = answer[2]
        return traceback

    def _ask(self, message: tuple[Any, ...]) -> Any:
        """Send ``message``, wait for the answer (``None`` when the child is gone)."""
        assert self._conn is not None
        try:
            self._conn.send(message)
            return self._conn.recv()
        except (EOFError, OSError):
            self._close()
            return None

    def _ended(self) -> str:
        code = self._popen.returncode if self._popen is not None else None
        if code is None:
            return "ended"
        if code >= 0:
            return f"exited with code {code}"
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (out of memory? the OOM killer sends SIGKILL)" if name == "SIGKILL" else ""
        return f"was killed by {name}{hint}"

    def _close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(OSError):
                self._conn.close()
            self._conn = None
        if self._keeper is not None:
            self._keeper.join(30)
            if self._keeper.is_alive() and self._popen is not None:
                with contextlib.suppress(OSError):
                    self._popen.kill()
                self._keeper.join()
            self._keeper = None


def _keep(code: str, child: socket.socket, started: queue.SimpleQueue[Any]) -> None:
    """Start the child and wait for it to end, in a thread of its own: the kernel ends the
    child when the thread that started it ends (``PR_SET_PDEATHSIG``), and a Dask worker's
    task threads may end before the step does; this one ends with the child or the process."""
    try:
        popen = subprocess.Popen([sys.executable, "-c", code], pass_fds=(child.fileno(),),
                                 stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as error:
        started.put(error)
        return
    started.put(popen)
    popen.wait()


def _failed(task: Task, started: float, message: str, *, died: bool = False) -> TaskResult:
    """``task`` failed without running (``died``: its process ended in it, an attempt lost
    as a local worker's death loses it)."""
    total = task.mini_batch.items or 0
    status, category = ("ProcessDied", "ProcessDied") if died else ("Failed", "SystemError")
    return TaskResult(task.task_id, status, total, 0, total, started, time.time() - started,
                      0.0, 0.0, category, message, None)


__all__ = ["IsolatedRuntime", "worker_view"]
