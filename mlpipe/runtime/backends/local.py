"""The local backend: one process per worker on this machine, one socket each.

Why not loky's ``ProcessPoolExecutor``/``get_reusable_executor``: when one of its
workers dies (``os._exit``, a segfault, the OOM killer, or our own kill of a
run() past its timeout) the whole executor is broken (``TerminatedWorkerError``
fails every pending future and every worker is restarted and re-initialised),
and it cannot kill a single worker. Azure's semantics need the opposite: a dead
worker costs only its in-flight mini-batch one attempt and is replaced while the
others go on. So each worker is its own process with its own duplex socket, and
the driver waits on all sockets and process exit handles (pidfd) at once, in one
``poll`` set kept for the whole step.

A worker is a fresh interpreter started like loky starts its workers (exec of
``sys.executable``, the parent's ``sys.path``, no re-import of ``__main__``, so
no ``if __name__ == "__main__"`` guard is needed), but it imports only
:mod:`.local_worker` (its side of the socket) and ``mlpipe.runtime.worker``: loky's
own bootstrap imports joblib (and numpy) in every worker, which costs about half a
second of CPU per start and per replacement. Tasks go out in per-worker batches
(a worker's queue is topped up once half empty; fewer are queued for slow tasks) as
plain tuples; each result comes back on its own the moment its task ends, and the
driver takes all a worker has sent in one read (:mod:`.frames`), so a mini-batch costs
a small part of a message each way and no per-task process work.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from mlpipe.runtime.backends import local_worker
from mlpipe.runtime.backends.base import (
    BackendEvent,
    TasksReturned,
    WorkerInitFailed,
    WorkerStopped,
)
from mlpipe.runtime.backends.frames import FrameReader, send_message
from mlpipe.runtime.backends.queueing import QueueingBackend
from mlpipe.runtime.process_tree import (
    REMEMBER_INTERVAL_SECONDS,
    Ended,
    end_tagged,
    end_tree,
    remember_tree,
    step_tag,
    tagged_environment,
)
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.tasks import Task, TaskResult, task_wire
from mlpipe.runtime.worker import WorkerConfig


class WorkerProcess:
    """A worker interpreter: ``python -c`` running :func:`.local_worker.main` on one end of a
    socketpair."""

    def __init__(self, config: WorkerConfig, worker: WorkerInfo):
        parent, child = socket.socketpair()
        paths = [os.path.abspath(p) if p else os.getcwd() for p in sys.path]
        code = (f"import sys; sys.path[:0] = {paths!r}; "
                f"from {local_worker.__name__} import main; main({child.fileno()}, {os.getpid()})")
        self.popen = subprocess.Popen(  # its own process group, tagged: see process_tree
            [sys.executable, "-c", code], pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL,
            start_new_session=True, env=tagged_environment(step_tag(config.working_root)),
        )
        child.close()
        self.pid = self.popen.pid
        self.conn = parent
        self.frames = FrameReader()
        send_message(parent, (config, worker))
        try:  # a descriptor that becomes readable when the process ends (Linux >= 5.3)
            self.sentinel: int | None = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            self.sentinel = None

    @property
    def exitcode(self) -> int | None:
        return self.popen.poll()

    def is_alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> list[Ended]:
        """SIGKILL the worker and everything it started (a run() stuck in C code or
        time.sleep cannot ignore it); the processes run() had started."""
        ended = end_tree(self.pid) if self.popen.poll() is None else []
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.popen.kill()
        self._kill_group()
        return ended

    def _kill_group(self) -> None:
        """SIGKILL processes run() started that outlived it (like a node torn down in Azure)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)

    def join(self, timeout: float | None = None) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout)
        if self.popen.returncode is not None:
            self._kill_group()
        if self.sentinel is not None and self.popen.returncode is not None:
            os.close(self.sentinel)
            self.sentinel = None


class _Slot:
    """The driver's view of one worker process."""

    __slots__ = ("info", "process", "conn", "state", "queue", "since", "killed", "replaced")

    def __init__(self, info: WorkerInfo):
        self.info = info
        self.process: Any = None
        self.conn: socket.socket | None = None
        self.state = "new"  # starting, ready, stopping, failed, ended
        self.queue: deque[int] = deque()
        self.since = 0.0
        self.killed = False
        self.replaced = False


class LocalBackend(QueueingBackend[_Slot]):
    """Worker processes on this machine (see the module docstring for why not an executor)."""

    name = "local"
    queued_seconds = 0.01
    max_depth = 128

    def __init__(self) -> None:
        super().__init__()
        self._by_conn: dict[int, _Slot] = {}  # socket descriptor -> its worker
        self._by_sentinel: dict[int, _Slot] = {}  # pidfd -> its worker
        self._poll = select.poll()  # both kinds of descriptor, registered while watched
        self._later: list[BackendEvent] = []  # events to report on the next events() call
        self._next_note = 0.0  # when the workers' process trees are noted next

    # -- lifecycle ---------------------------------------------------------------------
    def start(self, workers: Sequence[WorkerInfo], config: WorkerConfig) -> None:
        self._config = config
        self._said_ended(end_tagged(step_tag(config.working_root)),
                         "left running by an earlier run of this step")
        for info in workers:
            slot = _Slot(info)
            self._slots.append(slot)
            self._spawn(slot)

    def _spawn(self, slot: _Slot) -> None:
        assert self._config is not None
        process = WorkerProcess(self._config, slot.info)
        slot.info = replace(slot.info, pid=process.pid)
        slot.process, slot.conn, slot.state = process, process.conn, "starting"
        slot.queue.clear()
        slot.killed = False
        self._watch(self._by_conn, process.conn.fileno(), slot)
        if process.sentinel is not None:
            self._watch(self._by_sentinel, process.sentinel, slot)

    def _watch(self, table: dict[int, _Slot], fd: int, slot: _Slot) -> None:
        table[fd] = slot
        self._poll.register(fd, select.POLLIN)

    def _unwatch(self, table: dict[int, _Slot], fd: int) -> None:
        """Stop watching ``fd`` (before it is closed: its number may be reused)."""
        if table.pop(fd, None) is not None:
            self._poll.unregister(fd)

    def stop(self) -> None:
        self._stopping = True
        for slot in self._slots:
            if slot.state == "ready":
                self._stop_slot(slot)
            elif slot.state == "starting":  # init() not done: nothing to shut down, no waiting
                slot.killed = True
                self._said_ended(slot.process.kill(), "started by its worker's init()")
                slot.state = "ended"
                self._forget(slot)
                self._later.append(WorkerStopped(slot.info, None))

    def _stop_slot(self, slot: _Slot) -> None:
        self._send(slot, ("stop",))
        slot.state = "stopping"

    def active_workers(self) -> int:
        return sum(slot.state in ("starting", "ready", "stopping") for slot in self._slots)

    def close(self) -> None:
        for slot in self._slots:
            if slot.process is not None:
                self._said_ended(slot.process.kill(), "still running when the step ended")
        for fd in [*self._by_conn, *self._by_sentinel]:
            self._poll.unregister(fd)
        self._by_conn.clear()
        self._by_sentinel.clear()
        for slot in self._slots:
            if slot.process is not None:
                slot.process.join(timeout=5)
            if slot.conn is not None:
                slot.conn.close()
            slot.conn = None
        if self._config is not None:  # what outlived its worker (a daemon): found by its tag
            self._said_ended(end_tagged(step_tag(self._config.working_root)),
                             "still running when the step ended")

    def _said_ended(self, ended: list[Ended], why: str) -> None:
        for process in ended:
            self.logger.warning("Ended %s, started by the step's code and %s.",
                                process.describe(), why)

    # -- tasks -------------------------------------------------------------------------
    def submit(self, tasks: Sequence[Task]) -> None:
        batches: dict[int, list[tuple[Any, ...]]] = {}
        for slot, task in self._queue(tasks):
            batches.setdefault(id(slot), []).append(task_wire(task))
        for slot in self._slots:  # one message per worker, in worker order
            batch = batches.get(id(slot))
            if batch:
                self._send(slot, ("tasks", batch))

    def kill(self, worker: WorkerInfo) -> None:
        slot = self._slot(worker)
        if slot.process is not None and slot.process.is_alive():
            slot.killed = True
            self._said_ended(slot.process.kill(), "running when its worker was killed")

    # -- events ------------------------------------------------------------------------
    def events(self, timeout: float | None) -> list[BackendEvent]:
        self._note_processes()
        out, self._later = self._later, []
        if not self._by_conn and not self._by_sentinel:
            if timeout and not out:
                time.sleep(timeout)
            return out
        wait = 0 if out else -1 if timeout is None else math.ceil(timeout * 1000)
        for fd, _event in self._poll.poll(wait):
            slot = self._by_sentinel.get(fd)
            if slot is not None:
                self._drain(slot, out)
                if slot.process is not None and self._by_sentinel.get(fd) is slot:
                    self._died(slot, out)
                continue
            slot = self._by_conn.get(fd)
            if slot is not None:
                self._drain(slot, out)
        return out

    def _note_processes(self) -> None:
        """Twice a second, note what each worker started (it is their subreaper): a daemon
        that clears its environment is ended with the step all the same."""
        now = time.monotonic()
        if now < self._next_note or self._config is None:
            return
        self._next_note = now + REMEMBER_INTERVAL_SECONDS
        tag = step_tag(self._config.working_root)
        for slot in self._slots:
            if slot.process is not None and slot.state in ("starting", "ready", "stopping"):
                remember_tree(tag, slot.process.pid)

    def _drain(self, slot: _Slot, out: list[BackendEvent]) -> None:
        """Everything ``slot``'s worker has sent: results (plain tuples, see
        :mod:`.local_worker`) and control messages, in the order sent."""
        conn = slot.conn
        if conn is None:
            return
        messages = slot.process.frames.read(conn)
        now = time.monotonic()
        results: list[TaskResult] = []  # those in a row, handled together
        for message in messages or ():
            if type(message[0]) is int:
                results.append(_task_result(message))
                continue
            if results:
                self._tasks_finished(slot, results, out, now)
                results = []
            self._control(slot, message, out)
            if slot.conn is None:
                return
        if results:
            self._tasks_finished(slot, results, out, now)
        if messages is None and slot.process is not None and slot.process.sentinel is None:
            self._died(slot, out)  # no pidfd on this system: the closed socket tells
        # otherwise the pidfd sentinel reports the death

    def _control(self, slot: _Slot, message: tuple[Any, ...], out: list[BackendEvent]) -> None:
        kind = message[0]
        if kind == "ready":
            self._worker_ready(slot, message[1], out)
        elif kind == "init_failed":
            slot.state = "failed"
            self._forget(slot)
            out.append(WorkerInitFailed(slot.info, message[1], message[2], message[3]))
        elif kind == "stopped":
            returned, shutdown_error = message[1], message[2]
            slot.queue.clear()
            if returned:
                out.append(TasksReturned(slot.info, tuple(returned)))
            slot.state = "ended"
            self._forget(slot)
            out.append(WorkerStopped(slot.info, shutdown_error))

    def _died(self, slot: _Slot, out: list[BackendEvent]) -> None:
        process = slot.process
        if process.sentinel is not None:
            self._unwatch(self._by_sentinel, process.sentinel)
        process.join(timeout=1)
        reason = _exit_reason(slot.info, process.exitcode, slot.killed)
        was = slot.state
        self._forget(slot)
        queued = tuple(slot.queue)
        slot.queue.clear()
        if self._worker_lost(slot, was, reason, queued[0] if queued else None, slot.since,
                             queued[1:], out):
            self._spawn(slot)

    def _forget(self, slot: _Slot) -> None:
        if slot.conn is not None:
            self._unwatch(self._by_conn, slot.conn.fileno())
            slot.conn.close()
            slot.conn = None
        if slot.process is not None:
            if slot.process.sentinel is not None:
                self._unwatch(self._by_sentinel, slot.process.sentinel)
            if slot.state in ("ended", "failed"):
                slot.process.join(timeout=5)

    def _send(self, slot: _Slot, message: tuple[Any, ...]) -> None:
        try:
            assert slot.conn is not None
            send_message(slot.conn, message)
        except (OSError, AssertionError):
            pass  # the worker died; its sentinel reports it


_task_result = TaskResult._make


def _exit_reason(worker: WorkerInfo, exitcode: int | None, killed: bool) -> str:
    who = f"worker {worker.node_name}/{worker.process} (pid {worker.pid})"
    if killed:
        return f"{who} was stopped by mlpipe"
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (out of memory? the OOM killer sends SIGKILL)" if name == "SIGKILL" else ""
        return f"{who} was killed by {name}{hint}"
    return f"{who} exited unexpectedly with code {exitcode}"


__all__ = ["LocalBackend"]
