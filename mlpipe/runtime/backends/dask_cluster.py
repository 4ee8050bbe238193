"""The Dask cluster of the dask backend: the job's cluster, and one step's session on it.

**The job's cluster** (:func:`job_cluster`, the dask backend's job scope): the runner
enters it once per job and hands the :class:`JobCluster` it yields to every parallel
step. With ``$MLPIPE_DASK_SCHEDULER`` set it is that scheduler (the user's cluster:
mlpipe prints its dashboard and never restarts, retires or closes its workers);
otherwise one LocalCluster that mlpipe starts before the first step, prints the
dashboard of, and closes when the job ends.

**A step's session** (:class:`ClusterSession`): the step's client, the Dask worker
processes it claimed (a cluster-wide lock each, so two steps never share one), and
what it may do to them. Workers mlpipe started (a LocalCluster: the job's or the
step's own) are restarted through their Nannies to stop a run() past its timeout and
to be clean for the next step. Workers of a cluster mlpipe did not start are left
alone: a timed-out run() is left to finish there while its mini-batch is retried
elsewhere, and the worker is given back as it was found
(:mod:`~mlpipe.runtime.backends.dask_worker`).

Workers that declare a Dask resource named ``mlpipe`` (``dask worker --resources
mlpipe=1``) are the only ones mlpipe takes when any worker declares it, and mlpipe's
tasks then ask for it, so a team can set some workers aside for mlpipe jobs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shlex
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlpipe.plan import ExecutionPlan, ParallelStep
from mlpipe.runs import resolve_runs_dir
from mlpipe.runtime.backends.dask_logs import DaskLogRoute
from mlpipe.runtime.backends.dask_options import (
    SCHEDULER_ENV,
    DaskOptions,
    DaskOptionsError,
    chosen_options,
)
from mlpipe.runtime.concurrency import worker_names
from mlpipe.wording import plural

Say = Callable[[str], None]
RESOURCE = "mlpipe"
CONNECT_TIMEOUT_SECONDS = 10.0
RESTART_TIMEOUT_SECONDS = 30.0
CLEAN_GRACE_SECONDS = 3.0  # idle workers restarted after a step close well within this


def _quiet(_line: str) -> None:
    return None


@dataclass(frozen=True)
class JobCluster:
    """The job's Dask cluster, held by the runner and handed to each step.

    ``owned``: mlpipe started it (its workers may be restarted); ``say`` prints a line on
    the job's console.
    """

    address: str
    owned: bool
    say: Say = _quiet
    resume: str = ""  # how the user resumes the job (the command), for a lost scheduler
    security: Any = None  # Dask's Security (TLS) for the user's scheduler
    problem: str | None = None  # why the job's cluster cannot be used (each step says it)


def resume_command(plan: ExecutionPlan) -> str:
    """``mlpipe job create --file F --name N`` (with ``--runs-dir`` unless the default one)
    resumes the job of ``plan``."""
    run_dir = Path(plan.run_dir)
    words = ["mlpipe", "job", "create", "--file", plan.source, "--name", run_dir.name]
    if run_dir.parent != resolve_runs_dir():
        words += ["--runs-dir", str(run_dir.parent)]
    return "resume with: " + " ".join(shlex.quote(word) for word in words)


def cluster_size(plan: ExecutionPlan, cores: int) -> int:
    """Worker processes for the job: the largest step's, or more (up to ``cores``) when
    several parallel steps could run at once."""
    wanted = [len(worker_names(step)) for step in plan.steps if isinstance(step, ParallelStep)]
    if not wanted:
        return 0
    return max(max(wanted), min(sum(wanted), cores))


@contextlib.contextmanager
def job_cluster(plan: ExecutionPlan, say: Say, cores: int,
                options: DaskOptions | None = None) -> Iterator[JobCluster | None]:
    """The dask backend's job scope: the job's :class:`JobCluster` (``None`` for a job with
    no parallel step, or when a LocalCluster cannot start: each step then says why).

    ``options`` (the backend's, given on the command line or in Python) name the user's
    scheduler, over the ``[dask]`` table of the job's ``mlpipe.toml`` and
    ``$MLPIPE_DASK_SCHEDULER`` (:func:`~.dask_options.chosen_options`); without one the job
    starts a LocalCluster. The dashboard link is printed for either kind of cluster.
    """
    size = cluster_size(plan, cores)
    if not size:
        yield None
        return
    chosen = options or DaskOptions()
    try:
        chosen = chosen_options(options, plan.base_dir)
        address, security = chosen.address(), chosen.security()
    except DaskOptionsError as error:
        yield JobCluster(chosen.scheduler or chosen.scheduler_file or "?", owned=False,
                         say=say, resume=resume_command(plan), problem=str(error))
        return
    if address:
        say(_external_dashboard_line(address, security))
        yield JobCluster(address, owned=False, say=say, resume=resume_command(plan),
                         security=security)
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
        try:
            yield JobCluster(cluster.scheduler_address, owned=True, say=say,
                             resume=resume_command(plan))
        finally:
            with contextlib.suppress(Exception):
                from distributed import Client  # noqa: PLC0415

                with Client(cluster, set_as_default=False, timeout=5) as client:
                    quiet_teardown(client)
            with contextlib.suppress(Exception):
                cluster.close()


def quiet_teardown(client: Any) -> None:
    """Before mlpipe closes a LocalCluster of its own: its worker processes log nothing more
    (a worker whose heartbeat meets the closing scheduler logs a traceback at ERROR on the
    user's stderr, on a loaded machine; mlpipe has said all there is to say by then)."""
    with contextlib.suppress(Exception):
        client.run(_silence_distributed)


def _silence_distributed() -> None:
    logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)


def _external_dashboard_line(address: str, security: Any = None) -> str:
    """``Dask dashboard: <link> (the scheduler at <address>, N workers)``, or why not."""
    from distributed import Client  # noqa: PLC0415

    with DaskLogRoute():
        try:
            with Client(address, timeout=CONNECT_TIMEOUT_SECONDS, set_as_default=False,
                        security=security) as client:
                link = client.dashboard_link
                workers = len(client.scheduler_info(n_workers=-1)["workers"])
        except Exception as error:  # noqa: BLE001 - each step says why it cannot use Dask
            return (f"warning: cannot reach the Dask scheduler at {address} "
                    f"({type(error).__name__}: {error})")
    return (f"Dask dashboard: {dashboard_text(link)} (the scheduler at {address}, "
            f"{plural(workers, 'worker')}; mlpipe leaves its workers running)")


class ClusterSession:
    """One step's hold on a Dask cluster (see the module docstring).

    :meth:`connect` starts it; ``client`` is then the step's client, ``cluster`` the
    LocalCluster it started (``None`` otherwise) and ``owned`` whether mlpipe started the
    cluster's workers; :meth:`close` cleans the workers it used (restarts them when
    owned), releases its claims and disconnects.
    """

    def __init__(self, address: str | None, owned: bool, connect_timeout: float,
                 wait_for_workers: float, logger: logging.Logger, security: Any = None) -> None:
        self.address = address
        self.security = security
        self.owned = owned or not address
        self.connect_timeout = connect_timeout
        self.wait_for_workers = wait_for_workers
        self.logger = logger
        self.client: Any = None
        self.cluster: Any = None
        self.resources: dict[str, float] | None = None  # what each task asks for
        self._used: dict[str, str | None] = {}  # Dask worker address -> its Nanny
        self._claims: dict[str, Any] = {}  # Dask worker address -> the Lock that holds it
        self.lost = False  # the scheduler is gone: nothing more is asked of it

    @property
    def where(self) -> str:
        """The scheduler's address, or ``"a LocalCluster"``."""
        return self.address or "a LocalCluster"

    @property
    def shared(self) -> bool:
        """True when other steps may use the cluster at the same time (not the step's own)."""
        return self.cluster is None

    def connect(self, wanted: int, on_event: Callable[[tuple[float, Any]], None],
                ) -> tuple[list[tuple[str, dict[str, Any]]], int]:
        """Connect (or start a LocalCluster of ``wanted`` processes), send the cluster's
        events to ``on_event``, and claim up to ``wanted`` Dask workers.

        Returns ``(workers, pool)``: ``(address, scheduler metadata)`` of the claimed
        workers first, in host then name order, then the other workers mlpipe may use;
        ``pool`` is how many workers mlpipe may use on the cluster.
        """
        from distributed import Client, LocalCluster  # noqa: PLC0415

        if self.address:
            self.client = Client(self.address, timeout=self.connect_timeout,
                                 set_as_default=False, security=self.security)
            with contextlib.suppress(TimeoutError):  # use the workers there are
                self.client.wait_for_workers(wanted, timeout=self.wait_for_workers)
            whose = "started by mlpipe for the job" if self.owned else "not started by mlpipe"
            self.logger.info("Dask: connected to the scheduler at %s (%s); dashboard: %s",
                             self.address, whose, dashboard_text(self.client.dashboard_link))
        else:
            self.cluster = LocalCluster(n_workers=wanted, threads_per_worker=1, processes=True,
                                        dashboard_address=":0", silence_logs=logging.ERROR)
            self.client = Client(self.cluster, set_as_default=False)
            self.logger.info("Dask: started a LocalCluster of %d worker processes at %s; "
                             "dashboard: %s", wanted, self.cluster.scheduler_address,
                             dashboard_text(self.cluster.dashboard_link))
        self.client.subscribe_topic("all", on_event)
        ordered = self.pool()
        chosen: list[tuple[str, dict[str, Any]]] = []
        for address, meta in ordered:
            if len(chosen) < wanted and self.claim(address):
                chosen.append((address, meta))
        taken = [a for a, _ in ordered if a not in self._claims and a not in dict(chosen)
                 and self.taken(a)]
        if taken and len(chosen) < wanted:
            self.logger.info("Dask: %s of the cluster's %d are held by other mlpipe steps.",
                             plural(len(taken), "worker"), len(ordered))
        rest = [(a, m) for a, m in ordered if a not in dict(chosen) and a not in taken]
        return chosen + rest, len(ordered)

    def pool(self) -> list[tuple[str, dict[str, Any]]]:
        """The workers mlpipe may use (those with the ``mlpipe`` resource when any declares
        it), in host then name order, with their scheduler metadata."""
        info = self.client.scheduler_info(n_workers=-1)["workers"]
        marked = {a: m for a, m in info.items() if RESOURCE in (m.get("resources") or {})}
        if marked:
            self.resources = {RESOURCE: 1}
            info = marked
        return sorted(info.items(), key=lambda item: (host_of(item[0]),
                                                      _natural(item[1].get("name")), item[0]))

    def holds(self, address: str) -> bool:
        """True when this step has claimed ``address`` (every worker of its own cluster)."""
        return not self.shared or address in self._claims

    def taken(self, address: str) -> bool:
        """True when another step holds ``address``."""
        from mlpipe.runtime.backends.dask_share import lock_held  # noqa: PLC0415

        return self.shared and address not in self._claims and \
            lock_held(self.client, _claim_name(address))

    def claim(self, address: str) -> bool:
        """Take ``address`` for this step (a cluster-wide lock on a shared cluster).

        Two steps running at once on one cluster (a pipeline's parallel branches,
        two jobs) must never put two mlpipe workers in one Dask worker process.
        """
        if not self.shared or address in self._claims:
            return True
        from distributed import Lock  # noqa: PLC0415

        lock = Lock(_claim_name(address), scheduler_rpc=self.client.scheduler,
                    loop=self.client.loop)
        try:
            taken = lock.acquire(blocking=False)
        except Exception:  # noqa: BLE001
            taken = False
        if taken:
            self._claims[address] = lock
        return bool(taken)

    def release(self, address: str) -> None:
        """Give ``address`` back to the cluster (another step may claim it)."""
        lock = self._claims.pop(address, None)
        self._used.pop(address, None)
        if lock is not None:
            with contextlib.suppress(Exception):  # its lease expires anyway
                lock.release()

    def use(self, address: str, nanny: str | None) -> None:
        """Note that the step runs an mlpipe worker at ``address`` (cleaned at :meth:`close`)."""
        self._used[address] = nanny

    def restart(self, address: str, nanny: str | None, grace: float) -> str | None:
        """Kill the worker process at ``address`` through its Nanny, which starts a new one.

        Only for workers mlpipe started (``owned``). The Nanny asks the worker to close
        and SIGKILLs it after ``0.8 * grace`` seconds (a run() stuck in C code or sleep
        does not stop it). Returns what went wrong, or None.
        """
        problems = self.restart_all({address: nanny}, grace)
        return problems[0] if problems else None

    def restart_all(self, workers: dict[str, str | None], grace: float) -> list[str]:
        """:meth:`restart` each worker (address -> Nanny) at once; what went wrong with each."""
        if not self.owned:
            return [f"{a}: mlpipe restarts no worker of a cluster it did not start"
                    for a in workers]
        from distributed.core import rpc  # noqa: PLC0415

        client = self.client

        async def kill(address: str, nanny: str | None) -> None:
            if nanny is None:
                await client.scheduler.restart_workers(
                    workers=[address], timeout=RESTART_TIMEOUT_SECONDS, wait_for_workers=False,
                    on_error="return", stimulus_id=f"mlpipe-restart-{time.time()}")
                return
            async with rpc(nanny, connection_args=client.connection_args) as remote:
                await remote.kill(timeout=grace, reason="mlpipe-restart")

        async def kill_all() -> list[BaseException | None]:
            return list(await asyncio.gather(*(kill(a, n) for a, n in workers.items()),
                                             return_exceptions=True))

        try:
            outcomes = client.sync(kill_all, callback_timeout=RESTART_TIMEOUT_SECONDS)
        except Exception as error:  # noqa: BLE001
            outcomes = [error] * len(workers)
        return [f"{address} (Nanny {nanny}): {type(outcome).__name__}: {outcome}"
                for (address, nanny), outcome in zip(workers.items(), outcomes, strict=True)
                if isinstance(outcome, BaseException)]

    def close(self) -> None:
        """Restart the used workers of the job's own cluster, release the claims, disconnect,
        close the step's own LocalCluster. Workers of a cluster mlpipe did not start are
        left running (each was given back clean by its stop task)."""
        client, cluster = self.client, self.cluster
        if client is not None and self.lost:  # no lease to give back, no scheduler to tell
            for lock in self._claims.values():
                with contextlib.suppress(Exception):
                    lock.refresh_callback.stop()  # else it logs a failure every few seconds
            self._claims.clear()
            with contextlib.suppress(Exception):
                client.close(timeout=2)
            client = None
        if client is not None:
            if cluster is None:
                if self.owned:
                    self._clean_used_workers()
                for address in list(self._claims):
                    self.release(address)
            with contextlib.suppress(Exception):
                client.unsubscribe_topic("all")
            if cluster is not None:
                quiet_teardown(client)
            client.close()
        if cluster is not None:
            cluster.close()

    def _clean_used_workers(self) -> None:
        """Restart the job cluster's workers this step used (C-level state, threads)."""
        try:
            live = set(self.client.scheduler_info(n_workers=-1)["workers"])
        except Exception:  # noqa: BLE001
            return
        used = {address: nanny for address, nanny in sorted(self._used.items())
                if address in live}
        problems = self.restart_all(used, CLEAN_GRACE_SECONDS) if used else []
        if problems:
            self.logger.warning("Dask workers not restarted after the step (they keep this "
                                "step's entry script state): %s", "; ".join(problems))


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


def _claim_name(address: str) -> str:
    return f"mlpipe-worker-{address}"


def _natural(name: Any) -> tuple[int, Any]:
    return (0, name) if isinstance(name, int) else (1, str(name))


__all__ = ["RESOURCE", "SCHEDULER_ENV", "ClusterSession", "JobCluster", "cluster_size",
           "dashboard_text", "host_of", "job_cluster"]
