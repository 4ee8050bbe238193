"""How many workers a parallel step runs, and their names (node and process)."""

from __future__ import annotations

from mlpipe.cores import core_count
from mlpipe.plan import ParallelStep
from mlpipe.runtime.records import WorkerInfo

START_BARRIER_SECONDS = 2.0  # the driver waits this long at most for the other workers
                             # after the first is up before it hands out mini-batches


def worker_names(step: ParallelStep) -> list[WorkerInfo]:
    """``instance_count x max_concurrency_per_instance`` workers: nodes 0.., process000.. each."""
    per_node = step.max_concurrency_per_instance or default_concurrency()
    return [WorkerInfo(node, f"process{index:03d}")
            for node in range(step.instance_count) for index in range(per_node)]


def default_concurrency() -> int:
    """Workers per node when ``max_concurrency_per_instance`` is unset: the cores this
    process may use (:func:`mlpipe.cores.core_count`, the one core count of mlpipe)."""
    return core_count()


__all__ = ["START_BARRIER_SECONDS", "default_concurrency", "worker_names"]
