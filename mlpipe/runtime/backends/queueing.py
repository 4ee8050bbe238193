"""Task queues and worker states shared by the local and Dask backends.

Each worker gets a short queue of task ids (the oldest is the one running), sized from
the moving average of task times: about ``queued_seconds`` of work queued behind each
running task, at most ``max_depth`` tasks, one task at a time once tasks are slow.
What a backend reports when a worker is ready, finishes a task or is lost is decided
here once (:meth:`QueueingBackend._worker_ready`, ``_task_finished``, ``_worker_lost``).
"""

from __future__ import annotations

import math
import time
from abc import abstractmethod
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Generic, Protocol, TypeVar

from mlpipe.runtime.backends.base import (
    Backend,
    BackendEvent,
    TaskDone,
    TaskLost,
    TasksReturned,
    WorkerInitFailed,
    WorkerLost,
    WorkerStarted,
)
from mlpipe.runtime.phases import TaskPhase, phase_file, read_phase
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.tasks import Task, TaskResult
from mlpipe.runtime.worker import WorkerConfig


class QueuedSlot(Protocol):
    """What the queueing needs of a backend's view of one worker."""

    info: WorkerInfo
    state: str  # "ready" takes tasks; "stopping" still runs its queue
    queue: deque[int]  # submitted task ids, oldest (running) first
    since: float  # time.monotonic() when the running task started
    killed: bool  # by Backend.kill
    replaced: bool  # its worker replaces a lost one


SlotT = TypeVar("SlotT", bound=QueuedSlot)


class QueueingBackend(Backend, Generic[SlotT]):
    """A backend whose workers (``_slots``) take tasks from per-worker queues."""

    queued_seconds: float  # keep about this much work queued behind each running task
    max_depth: int
    slow_task_seconds = 0.5  # at or above this average, one task per worker at a time

    def __init__(self) -> None:
        self._config: WorkerConfig | None = None
        self._slots: list[SlotT] = []
        self._stopping = False
        self._average = 0.0  # moving average of task seconds, to size the per-worker queue
        self._depth = 2

    def free_slots(self) -> int:
        """Room on the ready workers whose queue is down to half its depth or less: they
        are topped up in one message each, not a task at a time."""
        if self._stopping:
            return 0
        depth = self._depth
        return sum(depth - len(slot.queue) for slot in self._slots
                   if slot.state == "ready" and 2 * len(slot.queue) <= depth)

    def running(self) -> list[tuple[int, WorkerInfo, float]]:
        return [(slot.queue[0], slot.info, slot.since) for slot in self._slots
                if slot.queue and slot.state in ("ready", "stopping")]

    def task_phase(self, task_id: int, worker: WorkerInfo) -> TaskPhase | None:
        assert self._config is not None
        return read_phase(phase_file(self._config.working_root, worker.node_name, worker.process),
                          task_id)

    def _queue(self, tasks: Sequence[Task]) -> Iterator[tuple[SlotT, Task]]:
        """Queue each task on the ready worker with the shortest queue, yielding the pairs.

        Raises :class:`RuntimeError` (at the first ``next``) when no worker is ready.
        """
        ready = [slot for slot in self._slots if slot.state == "ready"]
        if not ready:
            raise RuntimeError("no worker is ready to take tasks")
        now = time.monotonic()
        depth = self._depth
        slot = min(ready, key=lambda s: len(s.queue))
        for task in tasks:
            if len(slot.queue) >= depth:  # full: the next emptiest (all full: still it)
                slot = min(ready, key=lambda s: len(s.queue))
            if not slot.queue:
                slot.since = now
            slot.queue.append(task.task_id)
            yield slot, task

    def _record_time(self, seconds: float) -> None:
        """Add a finished task's time to the average and resize the queues."""
        self._average = _moving_average(self._average, seconds)
        self._resize()

    def _resize(self) -> None:
        """Size the queues from the average task time."""
        if self._average >= self.slow_task_seconds:
            self._depth = 1
        else:
            self._depth = 1 + min(self.max_depth - 1,
                                  max(1, math.ceil(self.queued_seconds / max(self._average, 1e-6))))

    @abstractmethod
    def _stop_slot(self, slot: SlotT) -> None:
        """Tell a ready worker to stop (finish its run(), return the rest, call shutdown())."""

    def _worker_ready(self, slot: SlotT, pid: int, out: list[BackendEvent]) -> None:
        """``slot``'s worker (process ``pid``) ran init(): report it; it takes tasks, or
        stops at once when the backend is stopping."""
        slot.info = replace(slot.info, pid=pid)
        out.append(WorkerStarted(slot.info, replaced=slot.replaced))
        if self._stopping:
            self._stop_slot(slot)
        else:
            slot.state = "ready"

    def _task_finished(self, slot: SlotT, result: TaskResult, out: list[BackendEvent],
                       now: float | None = None) -> None:
        """``slot``'s worker reported ``result`` (received at ``now``): off its queue, into
        the average, reported; the next task on the queue started then."""
        queue = slot.queue
        if queue and queue[0] == result.task_id:
            queue.popleft()
        elif result.task_id in queue:
            queue.remove(result.task_id)
        slot.since = time.monotonic() if now is None else now
        self._record_time(result.elapsed_seconds)
        out.append(TaskDone(slot.info, result))

    def _tasks_finished(self, slot: SlotT, results: list[TaskResult], out: list[BackendEvent],
                        now: float) -> None:
        """:meth:`_task_finished` for each of ``results``, all received at ``now``, in order;
        the queues are resized once."""
        queue, info, average = slot.queue, slot.info, self._average
        for result in results:
            task_id = result.task_id
            if queue and queue[0] == task_id:
                queue.popleft()
            elif task_id in queue:
                queue.remove(task_id)
            average = _moving_average(average, result.elapsed_seconds)
            out.append(_task_done((info, result)))
        slot.since = now
        self._average = average
        self._resize()

    def _worker_lost(self, slot: SlotT, was: str, reason: str, running: int | None,
                     since: float | None, returned: tuple[int, ...],
                     out: list[BackendEvent]) -> bool:
        """Report that ``slot``'s worker (in state ``was``) is gone for ``reason``.

        A worker still starting failed its init(); otherwise the task it was
        ``running`` (started at ``since``) is lost, the ``returned`` ones never
        started, and the worker is lost. True when it is to be replaced (not
        stopping): ``slot.replaced`` is then set; else its state is final.
        """
        if was == "starting":
            slot.state = "failed"
            out.append(WorkerInitFailed(slot.info, reason,
                                        f"{reason} before its init() finished\n"))
            return False
        if running is not None:
            out.append(TaskLost(slot.info, running, reason, since))
        if returned:
            out.append(TasksReturned(slot.info, returned))
        out.append(WorkerLost(slot.info, reason, killed=slot.killed))
        if self._stopping or was == "stopping":
            slot.state = "ended"
            return False
        slot.replaced = True
        return True

    def _slot(self, worker: WorkerInfo) -> SlotT:
        for slot in self._slots:
            if slot.info.node == worker.node and slot.info.process == worker.process:
                return slot
        raise KeyError(f"no worker {worker.node_name}/{worker.process}")


def _moving_average(average: float, seconds: float) -> float:
    """The moving average of task times once a task of ``seconds`` is added (the first sets it)."""
    return 0.9 * average + 0.1 * seconds if average else seconds


_task_done = TaskDone._make  # one per task: from a tuple, without a named tuple's own __new__


__all__ = ["QueuedSlot", "QueueingBackend"]
