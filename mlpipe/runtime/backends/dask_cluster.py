"""One LocalCluster for a whole job on the dask backend, with its dashboard on the console.

Without a scheduler (``$MLPIPE_DASK_SCHEDULER``), each parallel step would start a
LocalCluster of its own, on a random dashboard port that dies with the step. For a job,
:func:`job_cluster` starts one LocalCluster before the first step, prints its dashboard
link, points ``$MLPIPE_DASK_SCHEDULER`` at it while the job runs (so every step uses it
as it would use an external cluster: workers claimed per step, restarted clean after
it) and closes it when the job ends.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator

from mlpipe.plan import ExecutionPlan, ParallelStep
from mlpipe.runtime.backends.dask_logs import DaskLogRoute
from mlpipe.runtime.concurrency import worker_names

Say = Callable[[str], None]


def cluster_size(plan: ExecutionPlan, cores: int) -> int:
    """Worker processes for the job: the largest step's, or more (up to ``cores``) when
    several parallel steps could run at once."""
    wanted = [len(worker_names(step)) for step in plan.steps if isinstance(step, ParallelStep)]
    if not wanted:
        return 0
    return max(max(wanted), min(sum(wanted), cores))


@contextlib.contextmanager
def job_cluster(plan: ExecutionPlan, backend: str, say: Say, cores: int) -> Iterator[str | None]:
    """For ``backend == "dask"`` with no scheduler set: a LocalCluster for the job (its
    scheduler address is yielded, and in ``$MLPIPE_DASK_SCHEDULER`` until the end).
    Otherwise, or when it cannot start (each step then reports why), ``None``."""
    from mlpipe.runtime.backends.dask import SCHEDULER_ENV, dashboard_text  # noqa: PLC0415

    size = cluster_size(plan, cores)
    if backend != "dask" or os.environ.get(SCHEDULER_ENV) or not size:
        yield None
        return
    with DaskLogRoute():
        try:
            from distributed import LocalCluster  # noqa: PLC0415

            cluster = LocalCluster(n_workers=size, threads_per_worker=1, processes=True,
                                   dashboard_address=":0", silence_logs=logging.ERROR)
        except Exception as error:  # noqa: BLE001 - each step says why it cannot use Dask
            say(f"warning: cannot start a Dask LocalCluster for the job "
                f"({type(error).__name__}: {error}); each step starts its own")
            yield None
            return
        say(f"Dask dashboard: {dashboard_text(cluster.dashboard_link)} "
            f"(a LocalCluster of {size} worker processes, open until the job ends)")
        os.environ[SCHEDULER_ENV] = cluster.scheduler_address
        try:
            yield cluster.scheduler_address
        finally:
            os.environ.pop(SCHEDULER_ENV, None)
            with contextlib.suppress(Exception):
                cluster.close()


__all__ = ["cluster_size", "job_cluster"]
