"""What the parallel-step driver tells its reporters.

The driver (``mlpipe.runtime.driver``) is the single owner of job semantics and
of every file under a step's ``logs/``; it hands these records to
:class:`StepObserver` implementations (the report writers in
``mlpipe.runtime.reports``, the progress display, the job store). Observers are
called from the driver's thread only, so they need no locking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, NamedTuple, Protocol

from mlpipe.frozen import FrozenDict
from mlpipe.plan import ParallelStep
from mlpipe.runtime.error_groups import ErrorGroups
from mlpipe.wording import plural

AttemptStatus = Literal["Succeeded", "Failed", "Timeout", "ProcessDied"]
StepStatus = Literal["Completed", "Failed", "Canceled"]


@dataclass(frozen=True)
class WorkerInfo:
    """One worker process, named as Azure names them."""

    node: int  # 0..instance_count-1
    process: str  # "process000", "process001", ... (numbered within its node)
    pid: int | None = None

    @property
    def node_name(self) -> str:
        return str(self.node)


class AttemptRecord(NamedTuple):
    """One attempt at one mini-batch: a row of ``processed_mini-batches.csv``.

    A named tuple (immutable, built in a fraction of a frozen dataclass's time: the
    driver makes one per attempt, a million for a million mini-batches).
    """

    mini_batch_id: str
    mini_batch_index: int
    picked_count: int  # 1 for the first attempt, 2 for the first retry, ...
    worker: WorkerInfo
    start_time: datetime  # UTC
    total: int
    succeeded: int
    failed: int
    elapsed_seconds: float
    process_seconds: float
    run_method_seconds: float
    status: AttemptStatus
    # "UserError", "ReturnValue", "Timeout", "ProcessDied", "DataError"
    error_category: str | None = None
    error_message: str | None = None
    traceback: str | None = None
    detail: Mapping[str, Any] = FrozenDict()
    final: bool = True  # False when the mini-batch will be retried
    load_seconds: float = 0.0  # loading the mini-batch, before run() (the rest is result handling)
    size_bytes: int = 0  # the mini-batch's size on disk, when the data layer knows it
    run_delay_seconds: float | None = None  # of elapsed, waiting for a core (Linux), if known


@dataclass(frozen=True)
class ThresholdBreach:
    """Which threshold stopped the step, with its numbers."""

    name: str  # "mini_batch_error_threshold", "error_threshold", "allowed_failed_percent"
    limit: int
    actual: float


@dataclass
class StepSummary:
    """Totals at the end of a parallel step (also the first lines of job_result.txt)."""

    status: StepStatus
    reason: str | None = None
    mini_batches_total: int = 0
    mini_batches_succeeded: int = 0
    mini_batches_failed: int = 0
    mini_batches_reused: int = 0  # resume: succeeded in an earlier run, counted as succeeded
    items_total: int = 0
    items_succeeded: int = 0
    items_failed: int = 0
    started_at: datetime | None = None
    ended_at: datetime | None = None
    breach: ThresholdBreach | None = None
    append_row_file: str | None = None
    total_known: bool = True  # False: the input could not be counted (the total is what was listed)
    items_known: bool = True  # False: items_total counts only the items of mini-batches that ended
    errors: ErrorGroups = field(default_factory=ErrorGroups)  # every failure's group
    failed_example: str | None = None  # the id of the first mini-batch that failed

    @property
    def seconds(self) -> float | None:
        """The step's duration (its set-up, the driver and its append_row file), the one
        every report states."""
        if self.started_at is None or self.ended_at is None:
            return None
        return max((self.ended_at - self.started_at).total_seconds(), 0.0)

    @property
    def mini_batches_not_processed(self) -> int:
        """Mini-batches of the input that did not end: never run (a threshold, a cancel), or
        cut short by the step's stop."""
        return max(self.mini_batches_total - self.mini_batches_succeeded
                   - self.mini_batches_failed, 0)

    @property
    def items_not_processed(self) -> int | None:
        """The items of the mini-batches not processed (``None`` when the input's items are
        not known: a table the step stopped in before reading it all)."""
        if not self.items_known:
            return None
        return max(self.items_total - self.items_succeeded - self.items_failed, 0)

    @property
    def error_kinds(self) -> int:
        """Distinct errors (signatures) among the failed attempts."""
        return len(self.errors)


class Totals(Protocol):
    """A step's counts: a :class:`StepSummary`, or the ``summary`` of ``job.json``."""

    @property
    def mini_batches_total(self) -> int: ...
    @property
    def mini_batches_succeeded(self) -> int: ...
    @property
    def mini_batches_failed(self) -> int: ...
    @property
    def mini_batches_reused(self) -> int: ...
    @property
    def items_total(self) -> int: ...
    @property
    def items_succeeded(self) -> int: ...
    @property
    def items_failed(self) -> int: ...
    @property
    def items_known(self) -> bool: ...


def totals_text(counts: Totals) -> str:
    """``17 of 100 mini-batches succeeded, 6 failed, 77 not processed; 34 of 200 items
    succeeded, 12 failed``: a step's totals, as every report states them."""
    total, succeeded = counts.mini_batches_total, counts.mini_batches_succeeded
    failed = counts.mini_batches_failed
    text = f"{succeeded} of {plural(total, 'mini-batch')} succeeded, {failed} failed"
    rest = max(total - succeeded - failed, 0)
    if rest:
        text += f", {rest} not processed"
    if counts.mini_batches_reused:
        text += f" ({counts.mini_batches_reused} reused from an earlier run)"
    ok, bad = counts.items_succeeded, counts.items_failed
    items = (f"{ok} of {plural(counts.items_total, 'item')}" if counts.items_known
             else f"{ok} items")
    return text + f"; {items} succeeded, {bad} failed"


class StepObserver:
    """Receives the driver's events for one parallel step, in order.

    Every method does nothing here (``attempts_finished`` calls ``attempt_finished`` for
    each record): an observer subclasses this and overrides the events it cares about (the
    driver calls them all; ``attempts_finished`` instead of ``attempt_finished`` to an
    observer that :func:`takes_batches`).
    """

    # the attempt_finished that the class's attempts_finished was written with
    _attempts_finished_with: Any = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "attempts_finished" in cls.__dict__:
            cls._attempts_finished_with = cls.__dict__.get("attempt_finished",
                                                           cls.attempt_finished)

    def step_started(self, step: ParallelStep, workers: list[WorkerInfo], at: datetime) -> None:
        """The workers are starting."""

    def errors_kept(self, errors: ErrorGroups) -> None:
        """The step's one tally of its errors, which the driver adds to as attempts fail
        (told before ``step_started``; a report of the step so far reads it, never counts
        its own)."""

    def mini_batches_scheduled(self, count: int, done: bool) -> None:
        """``count`` mini-batches are known so far; ``done`` once the listing is complete."""

    def mini_batches_reused(self, count: int) -> None:
        """On a resumed step, ``count`` of the scheduled mini-batches succeeded in an
        earlier run and will not run again (called right after mini_batches_scheduled)."""

    def mini_batches_counted(self, total: int) -> None:
        """The input holds ``total`` mini-batches (from a counting pass the driver runs on
        another thread, usually long before the listing is complete)."""

    def attempt_finished(self, record: AttemptRecord) -> None:
        """One attempt at a mini-batch ended (succeeded, failed or timed out)."""

    def attempts_finished(self, records: Sequence[AttemptRecord]) -> None:
        """Attempts that ended together, in order: the driver's one call per batch of
        successful attempts it handled at one wake-up (a failed attempt comes on its own, as
        it happens). The same as :meth:`attempt_finished` for each record; an observer that
        does per-attempt work overrides it to do that work once per batch."""
        for record in records:
            self.attempt_finished(record)

    def worker_event(self, worker: WorkerInfo, event: str, message: str) -> None:
        """``event`` is "started", "init_failed" (init() ran and raised), "start_failed" (the
        worker could not start: no process or cluster, its code or entry script not
        loadable), "died", "replaced", "stopped"."""

    def step_finished(self, summary: StepSummary) -> None:
        """The step ended; ``summary`` has its totals."""


def takes_batches(observer: object) -> bool:
    """Is ``observer`` told of attempts a batch at a time (``attempts_finished``)? Yes when it
    defines its own ``attempts_finished``, unless its ``attempt_finished`` was replaced since
    (a subclass or a patch that redefines ``attempt_finished`` alone): that observer is told
    one attempt at a time, so what it added runs for every attempt."""
    batch = getattr(observer, "attempts_finished", None)
    if batch is None or getattr(batch, "__func__", None) is StepObserver.attempts_finished:
        return False
    if not isinstance(observer, StepObserver):
        return True  # any object with the methods: its attempts_finished is its own
    single = observer.attempt_finished
    return getattr(single, "__func__", single) is type(observer)._attempts_finished_with
