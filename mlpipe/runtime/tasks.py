"""The messages the driver and the workers exchange, small and picklable.

A :class:`Task` is one attempt at one mini-batch; a :class:`TaskResult` is what
the worker reports back. Both are plain named tuples so that pickling them on
the hot path costs next to nothing.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from mlpipe.data.minibatch import MiniBatch


class Task(NamedTuple):
    """Attempt number ``picked_count`` (1-based) at ``mini_batch``; ``task_id`` is unique per
    step run."""

    task_id: int
    mini_batch: MiniBatch
    picked_count: int


class TaskResult(NamedTuple):
    """What one run of one mini-batch gave.

    ``status`` is "Succeeded" or "Failed" (the worker never reports timeouts or
    deaths: the backend and the driver see those). ``rows`` is the append_row text
    of this mini-batch (``None`` when the step is summary-only or run() failed)
    and ``header`` the DataFrame header line when one was asked for.
    """

    task_id: int
    status: str
    total: int
    succeeded: int
    failed: int
    start_time: float  # wall clock (time.time()) when the worker took the task
    elapsed_seconds: float  # load + run + result handling
    process_seconds: float  # CPU time of the worker process during the task
    run_method_seconds: float  # the run() call alone
    error_category: str | None = None
    error_message: str | None = None
    traceback: str | None = None
    rows: str | None = None
    header: str | None = None
    warning: str | None = None
    detail: Any = None
    load_seconds: float = 0.0  # loading the mini-batch, before run()
    run_delay_seconds: float | None = None  # waiting for a core (Linux run-delay), if known


def task_wire(task: Task) -> tuple[Any, ...]:
    """``task`` as a plain tuple for a worker's socket (cheap to pickle): the mini-batch
    without its ``detail``, which only the driver's reports use."""
    mb = task.mini_batch
    return (task.task_id, task.picked_count, mb.id, mb.index, mb.kind, mb.payload, mb.items,
            mb.size_bytes, mb.partition_key_value)


def task_from_wire(wire: tuple[Any, ...]) -> Task:
    """The :class:`Task` :func:`task_wire` gave (its mini-batch's ``detail`` empty)."""
    task_id, picked_count, *fields = wire
    return Task(task_id, MiniBatch.of(*fields), picked_count)


__all__ = ["Task", "TaskResult", "task_from_wire", "task_wire"]
