"""The backend interface: how the driver gets worker processes to run tasks.

The driver owns every job semantic (attempts, timeouts, thresholds, outputs);
a backend only starts named workers, places tasks on them, reports what
happened and kills a worker when told to. It must not assume a shared process
tree with the driver: workers may live on other machines (Dask).

Contract, in call order::

    backend.start(workers, config)        # non-blocking; workers start and init() on their own
    while ...:
        n = backend.free_slots()          # how many more tasks it wants right now
        backend.submit(tasks)             # worker-agnostic; at most n tasks
        for event in backend.events(timeout): ...
        for task_id, worker, since in backend.running(): ...   # to enforce timeouts
        backend.task_phase(task_id, worker)   # loading / in run() / result, for a long attempt
        backend.kill(worker)              # hard-stop one worker (timeout); it is replaced
    backend.stop()                        # graceful: finish current run(), drop queue, shutdown()
    ... drain events until every worker reported WorkerStopped / is gone ...
    backend.close()                       # release everything, kill what is left

Every worker runs :class:`mlpipe.runtime.worker.WorkerRuntime` built from the
:class:`~mlpipe.runtime.worker.WorkerConfig` given to :meth:`Backend.start`.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from mlpipe.runtime.backends.errors import BackendError
from mlpipe.runtime.phases import TaskPhase
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.tasks import Task, TaskResult
from mlpipe.runtime.timeouts import REPLACED
from mlpipe.runtime.worker import WorkerConfig


@dataclass(frozen=True)
class WorkerStarted:
    """``worker`` ran init() and takes tasks (``replaced``: it replaces a dead one)."""

    worker: WorkerInfo
    replaced: bool = False


@dataclass(frozen=True)
class WorkerInitFailed:
    """``worker`` could not start. ``stage`` says where it stopped: ``"start"`` (the worker
    could not be started or prepared: no process, no cluster, no code), ``"load"`` (the
    entry script could not be imported) or ``"init"`` (init() ran and raised)."""

    worker: WorkerInfo
    message: str
    traceback: str
    stage: str = "start"


class TaskDone(NamedTuple):
    """``worker`` ran the task and reported ``result`` (succeeded or failed).

    A named tuple, not a dataclass like the other events: there is one per mini-batch.
    """

    worker: WorkerInfo
    result: TaskResult


@dataclass(frozen=True)
class TaskLost:
    """The task was running on ``worker`` when that worker died or was killed.

    ``since`` is when it started (``time.monotonic()``, as in :meth:`Backend.running`),
    when the backend knows.
    """

    worker: WorkerInfo
    task_id: int
    message: str
    since: float | None = None


@dataclass(frozen=True)
class TasksReturned:
    """Tasks the backend accepted but never started (worker lost or stopping): not attempts."""

    worker: WorkerInfo
    task_ids: tuple[int, ...]


@dataclass(frozen=True)
class WorkerLost:
    """``worker`` died (``killed``: by :meth:`Backend.kill`); the backend replaces it unless
    stopping."""

    worker: WorkerInfo
    message: str
    killed: bool = False


@dataclass(frozen=True)
class WorkerStopped:
    """``worker`` ended after :meth:`Backend.stop`; ``shutdown_error`` is shutdown()'s traceback."""

    worker: WorkerInfo
    shutdown_error: str | None = None


@dataclass(frozen=True)
class BackendFailed:
    """The backend cannot go on (its cluster's scheduler is gone): the step ends ``Failed``
    with ``message``. The backend has returned the tasks it held (not attempts: the step
    is resumed later) and its workers are gone."""

    message: str


BackendEvent = (
    WorkerStarted | WorkerInitFailed | TaskDone | TaskLost | TasksReturned | WorkerLost
    | WorkerStopped | BackendFailed
)


class Backend(ABC):
    """Runs tasks on named workers; see the module docstring for the protocol.

    ``logger`` is the driver's log (``logs/sys/master_role.txt``); the driver sets
    it before :meth:`start`, so a backend can say where its workers run.
    """

    name: str = "backend"
    logger: logging.Logger = logging.getLogger("mlpipe.runtime")
    kill_effect: str = REPLACED  # what :meth:`kill` does, ending a timed-out attempt's message

    @abstractmethod
    def start(self, workers: Sequence[WorkerInfo], config: WorkerConfig) -> None:
        """Start one worker per ``workers`` entry without waiting for their init()."""

    @abstractmethod
    def free_slots(self) -> int:
        """How many more tasks :meth:`submit` should get now (0 while no worker is ready)."""

    @abstractmethod
    def submit(self, tasks: Sequence[Task]) -> None:
        """Queue ``tasks`` on ready workers; each is reported once as done, lost or returned."""

    @abstractmethod
    def events(self, timeout: float | None) -> list[BackendEvent]:
        """Wait up to ``timeout`` seconds for something to happen; return what happened."""

    @abstractmethod
    def running(self) -> list[tuple[int, WorkerInfo, float]]:
        """``(task_id, worker, since)`` of each task being run now (``since``:
        time.monotonic())."""

    def task_phase(self, task_id: int, worker: WorkerInfo) -> TaskPhase | None:
        """Where the running ``task_id`` is (loading, in run(), handing back its result).

        The driver asks only about attempts that have run longer than the smaller of
        ``retry_settings.timeout`` and ``--task_overhead_timeout``. ``None`` (the
        default: unknown) makes the driver bound the whole attempt by their sum.
        """
        return None

    @abstractmethod
    def kill(self, worker: WorkerInfo) -> None:
        """Stop ``worker`` at once (a run() past its timeout); report WorkerLost(killed=True)."""

    @abstractmethod
    def stop(self) -> None:
        """Stop taking tasks: workers finish their current run(), return the rest and call
        shutdown()."""

    @abstractmethod
    def active_workers(self) -> int:
        """Workers starting, ready or stopping (not failed, not ended)."""

    @abstractmethod
    def close(self) -> None:
        """Release everything; kill workers that are still alive. Idempotent."""


__all__ = [
    "Backend",
    "BackendError",
    "BackendFailed",
    "BackendEvent",
    "TaskDone",
    "TaskLost",
    "TasksReturned",
    "WorkerInitFailed",
    "WorkerLost",
    "WorkerStarted",
    "WorkerStopped",
]
