"""The Dask cluster of the dask backend: which one, a step's session on it, the job's LocalCluster.

A step uses the scheduler at ``DaskBackend(address)``, else ``$MLPIPE_DASK_SCHEDULER``,
else a LocalCluster of its own. :class:`ClusterSession` is one step's hold on it: the
client, the worker processes it claimed (a cluster-wide lock each, so two steps never
share one), restarts through their Nannies, and the clean-up when the step ends.

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
import time
from collections.abc import Callable, Iterator
from typing import Any

from mlpipe.plan import ExecutionPlan, ParallelStep
from mlpipe.runtime.backends.dask_logs import DaskLogRoute
from mlpipe.runtime.concurrency import worker_names

Say = Callable[[str], None]
SCHEDULER_ENV = "MLPIPE_DASK_SCHEDULER"
RESTART_TIMEOUT_SECONDS = 30.0
CLEAN_GRACE_SECONDS = 3.0  # idle workers restarted after a step close well within this


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


class ClusterSession:
    """One step's hold on a Dask cluster (see the module docstring).

    :meth:`connect` starts it; ``client`` is then the step's client and ``cluster``
    the LocalCluster it started (``None`` on an external cluster); :meth:`close`
    restarts the external workers it used, releases its claims and disconnects.
    """

    def __init__(self, address: str | None, connect_timeout: float, wait_for_workers: float,
                 logger: logging.Logger) -> None:
        self.address = address or os.environ.get(SCHEDULER_ENV) or None
        self.connect_timeout = connect_timeout
        self.wait_for_workers = wait_for_workers
        self.logger = logger
        self.client: Any = None
        self.cluster: Any = None
        self._used: dict[str, str | None] = {}  # Dask worker address -> its Nanny
        self._claims: dict[str, Any] = {}  # Dask worker address -> the Lock that holds it
        self._taken_elsewhere: set[str] = set()

    @property
    def where(self) -> str:
        """The scheduler's address, or ``"a LocalCluster"``."""
        return self.address or "a LocalCluster"

    def connect(self, wanted: int, on_event: Callable[[tuple[float, Any]], None],
                ) -> list[tuple[str, dict[str, Any]]]:
        """Connect (or start a LocalCluster of ``wanted`` processes), send the cluster's
        events to ``on_event``, and claim up to ``wanted`` Dask workers.

        Returns ``(address, scheduler metadata)`` of the claimed workers first, in
        host then name order, then the other workers not taken by another step.
        """
        from distributed import Client, LocalCluster  # noqa: PLC0415

        if self.address:
            self.client = Client(self.address, timeout=self.connect_timeout,
                                 set_as_default=False)
            with contextlib.suppress(TimeoutError):  # use the workers there are
                self.client.wait_for_workers(wanted, timeout=self.wait_for_workers)
            self.logger.info("Dask: connected to the scheduler at %s; dashboard: %s",
                             self.address, dashboard_text(self.client.dashboard_link))
        else:
            self.cluster = LocalCluster(n_workers=wanted, threads_per_worker=1, processes=True,
                                        dashboard_address=":0", silence_logs=logging.ERROR)
            self.client = Client(self.cluster, set_as_default=False)
            self.logger.info("Dask: started a LocalCluster of %d worker processes at %s; "
                             "dashboard: %s", wanted, self.cluster.scheduler_address,
                             dashboard_text(self.cluster.dashboard_link))
        self.client.subscribe_topic("all", on_event)
        info = self.client.scheduler_info(n_workers=-1)["workers"]
        ordered = sorted(info.items(), key=lambda item: (host_of(item[0]),
                                                         _natural(item[1].get("name")), item[0]))
        chosen: list[tuple[str, dict[str, Any]]] = []
        for address, meta in ordered:
            if len(chosen) < wanted and self.claim(address):
                chosen.append((address, meta))
        if len(chosen) < len(ordered) and len(chosen) < wanted:
            self.logger.warning("Dask: %d of the cluster's %d workers are taken by other mlpipe "
                                "steps.", len(ordered) - len(chosen), len(ordered))
        return chosen + [(a, m) for a, m in ordered if a not in dict(chosen) and
                         a not in self._taken_elsewhere]

    def holds(self, address: str) -> bool:
        """True when this step has claimed ``address`` (every worker of its own cluster)."""
        return self.cluster is not None or address in self._claims

    def claim(self, address: str) -> bool:
        """Take ``address`` for this step (a cluster-wide lock on an external cluster).

        Two steps running at once on one cluster (a pipeline's parallel branches,
        two jobs) must never put two mlpipe workers in one Dask worker process.
        """
        if self.cluster is not None:
            return True
        from distributed import Lock  # noqa: PLC0415

        lock = Lock(f"mlpipe-worker-{address}", scheduler_rpc=self.client.scheduler,
                    loop=self.client.loop)
        try:
            taken = lock.acquire(blocking=False)
        except Exception:  # noqa: BLE001
            taken = False
        if taken:
            self._claims[address] = lock
        else:
            self._taken_elsewhere.add(address)
        return bool(taken)

    def use(self, address: str, nanny: str | None) -> None:
        """Note that the step runs an mlpipe worker at ``address`` (restarted at :meth:`close`)."""
        self._used[address] = nanny

    def restart(self, address: str, nanny: str | None, grace: float) -> str | None:
        """Kill the worker process at ``address`` through its Nanny, which starts a new one.

        The Nanny asks the worker to close and SIGKILLs it after ``0.8 * grace``
        seconds (a run() stuck in C code or sleep does not stop it). Without a
        Nanny the scheduler closes the worker and nothing replaces it. Returns
        what went wrong, or None.
        """
        from distributed.core import rpc  # noqa: PLC0415

        client = self.client

        async def kill() -> None:
            if nanny is None:
                await client.scheduler.restart_workers(
                    workers=[address], timeout=RESTART_TIMEOUT_SECONDS, wait_for_workers=False,
                    on_error="return", stimulus_id=f"mlpipe-restart-{time.time()}")
                return
            async with rpc(nanny, connection_args=client.connection_args) as remote:
                await remote.kill(timeout=grace, reason="mlpipe-restart")

        try:
            client.sync(kill, callback_timeout=RESTART_TIMEOUT_SECONDS)
        except Exception as error:  # noqa: BLE001
            return f"{address} (Nanny {nanny}): {type(error).__name__}: {error}"
        return None

    def close(self) -> None:
        """Restart the external workers used and release the claims; disconnect; close the
        step's own LocalCluster."""
        client, cluster = self.client, self.cluster
        if client is not None:
            if cluster is None:
                self._clean_used_workers()
                self._release_claims()
            with contextlib.suppress(Exception):
                client.unsubscribe_topic("all")
            client.close()
        if cluster is not None:
            cluster.close()

    def _clean_used_workers(self) -> None:
        """Restart the external cluster's workers this step used (cwd, sys.path, modules, fds)."""
        try:
            live = set(self.client.scheduler_info(n_workers=-1)["workers"])
        except Exception:  # noqa: BLE001
            return
        used = {address: nanny for address, nanny in self._used.items() if address in live}
        problems = [problem for address, nanny in sorted(used.items())
                    if (problem := self.restart(address, nanny, CLEAN_GRACE_SECONDS))]
        if problems:
            self.logger.warning("Dask workers not restarted after the step (they keep this "
                                "step's entry script state): %s", "; ".join(problems))

    def _release_claims(self) -> None:
        for lock in self._claims.values():
            with contextlib.suppress(Exception):  # its lease expires anyway
                lock.release()
        self._claims.clear()


def dashboard_text(link: str | None) -> str:
    """The dashboard link, and what its plots need when that is not installed."""
    if not link:
        return "(none: the scheduler serves no dashboard)"
    try:
        import bokeh  # noqa: F401, PLC0415
    except ImportError:
        return f"{link} (its plots need bokeh: pip install 'mlpipe-azure[report]')"
    return link


def host_of(address: str) -> str:
    """The host of a Dask worker address (``tcp://host:port``)."""
    return address.split("://", 1)[-1].rsplit(":", 1)[0]


def _natural(name: Any) -> tuple[int, Any]:
    return (0, name) if isinstance(name, int) else (1, str(name))


__all__ = ["SCHEDULER_ENV", "ClusterSession", "cluster_size", "dashboard_text", "host_of",
           "job_cluster"]
