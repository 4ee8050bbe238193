"""The Dask backend: mlpipe workers living in the worker processes of a dask.distributed cluster.

One mlpipe worker (node N, processNNN) is one Dask worker *process*: the
entry script, its init() state and the captured stdout/stderr are process-wide,
so two mlpipe workers never share a Dask worker. mlpipe worker ``i`` (in node
order: node 0's processes, then node 1's, ...) takes the ``i``-th Dask worker
sorted by host then name, so with ``instance_count`` hosts of
``max_concurrency_per_instance`` worker processes each, nodes are hosts; on one
machine (a LocalCluster) nodes are consecutive groups of worker processes.

Everything goes through Dask's own scheduling, so the dashboard shows the work as
tasks: an ``mlpipe-init`` task pinned to the worker (``workers=[address]``,
``allow_other_workers=False``) builds the
:class:`~mlpipe.runtime.worker.WorkerRuntime` and keeps it in that process;
``mlpipe-run`` tasks pinned the same way run a *bundle* of mini-batches each; an
``mlpipe-stop`` task calls shutdown() (the task functions, the worker side, are in
:mod:`.dask_worker`). A bundle holds as many mini-batches as it takes to make Dask's
measured cost per task a small share of the work (one while mini-batches are slow);
each mini-batch in it is still its own attempt, with its own result, timeout and
retry. The driver learns of finished tasks from future callbacks and of dead workers
from the scheduler's ``remove-worker`` events, so no process tree is shared.

The cluster (:mod:`.dask_cluster`): ``DaskBackend(address)``, else the job's cluster
handed down by the runner (:class:`~.dask_cluster.JobCluster`), else
``$MLPIPE_DASK_SCHEDULER``, else a ``LocalCluster`` that the backend starts and closes.
On workers mlpipe started, a run() past its timeout is stopped by restarting that worker
process through its Nanny, which brings a fresh process (same worker name, new address)
that gets a fresh mlpipe worker and init(). Workers of a cluster mlpipe did not start are
never restarted, retired or closed: a timed-out run() is left to finish there (its
mini-batch is retried on another worker), and a worker that dies or leaves is Dask's
business (its mini-batches go to the other workers). Steps sharing a cluster divide it
fairly (:mod:`.dask_share`).

Nothing but the scheduler need be shared: each worker is asked first (the preflight,
:mod:`.dask_preflight`) and is not used when it differs from the driver; a worker that
does not see the run folder gets the code through Dask (:mod:`.dask_code`), runs in a
folder of its own and sends back what it wrote (:mod:`.dask_transfer`), which the driver
writes into the run folder; the driver asks it through ``client.run`` which mini-batch
it runs. A scheduler lost for SCHEDULER_LOST_SECONDS ends the step (:class:`BackendFailed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import queue
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlpipe.runtime.backends import backend_spec
from mlpipe.runtime.backends.base import (
    BackendEvent,
    BackendFailed,
    TasksReturned,
    WorkerInitFailed,
    WorkerStopped,
)
from mlpipe.runtime.backends.dask_cluster import (
    CONNECT_TIMEOUT_SECONDS,
    RESTART_TIMEOUT_SECONDS,
    ClusterSession,
    JobCluster,
    host_of,
)
from mlpipe.runtime.backends.dask_logs import DaskLogRoute, Tagged
from mlpipe.runtime.backends.dask_options import (
    SCHEDULER_ENV,
    DaskOptions,
    DaskOptionsError,
    chosen_options,
)
from mlpipe.runtime.backends.dask_preflight import (
    PreflightReport,
    PreflightRequest,
    busy_elsewhere,
    differences,
    inspect_worker,
    preflight_request,
)
from mlpipe.runtime.backends.dask_share import CHECK_SECONDS, Demand, ShareBoard, fair_shares
from mlpipe.runtime.backends.dask_transfer import Inbox
from mlpipe.runtime.backends.dask_worker import (
    Marker,
    SlotFiles,
    bundle_results,
    drain_worker,
    halt_worker,
    parse_marker,
    probe_workers,
    read_bundle_results,
    read_task_marker,
    run_tasks,
    slot_files,
    start_worker,
    stop_worker,
    transfer_roots,
)
from mlpipe.runtime.backends.queueing import QueueingBackend
from mlpipe.runtime.phases import TaskPhase, decode_phase, read_phase
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.tasks import Task, TaskResult
from mlpipe.runtime.worker import WorkerConfig
from mlpipe.wording import plural

WAIT_FOR_WORKERS_SECONDS = 10.0  # an external cluster may still be starting workers
REPLACEMENT_TIMEOUT_SECONDS = 60.0  # a lost worker's slot waits this long for another
GATHER_TIMEOUT_SECONDS = 5.0  # results are append_row text: small; a lost one must not hang us
KILL_GRACE_SECONDS = 0.5  # the Nanny asks the process to close, then SIGKILLs it after 80% of this
TASK_OVERHEAD_SECONDS = 0.005  # Dask's cost per task until measured
OVERHEAD_SHARE = 0.1  # bundles make Dask's cost per task at most this share of their work
BUNDLE_SECONDS = 0.25  # and hold at most this much work (a lost worker re-runs no more)
MAX_BUNDLE = 100  # mini-batches per Dask task
BUNDLES_AHEAD = 2  # bundles on each worker: one running, one waiting behind it
PEEK_SECONDS = 0.2  # a bundle older than this: its marker file says which mini-batch runs
PROBE_SECONDS = 1.0  # a worker on another machine is asked which mini-batch runs at most this often
PREFLIGHT_TIMEOUT_SECONDS = 10.0  # workers that do not answer the preflight by then are not used
SCHEDULER_LOST_SECONDS = 5.0  # the client disconnected this long: the step ends (well within 20 s)
BUSY_CHECK_SECONDS = 2.0  # how often a worker busy with another run's run() is looked at again
NOT_OURS = "mlpipe restarts no worker of a cluster it did not start"
LEFT_RUNNING = ("mlpipe left run() to finish on its Dask worker (" + NOT_OURS + ") and retries "
                "the mini-batch on another worker.")


class _Bundle:
    """One ``mlpipe-run`` Dask task: mini-batches ``task_ids`` run in order."""

    __slots__ = ("future", "key", "submitted", "task_ids")

    def __init__(self, key: str, task_ids: tuple[int, ...], future: Any) -> None:
        self.key = key
        self.task_ids = task_ids
        self.future = future
        self.submitted = time.monotonic()


class _Slot:
    """The driver's view of one mlpipe worker and the Dask worker it lives in."""

    def __init__(self, info: WorkerInfo, key: str):
        self.info = info
        self.key = key  # the name of its WorkerRuntime in the Dask worker process
        self.address: str | None = None  # Dask worker address
        self.dask_name: Any = None  # survives Nanny restarts
        self.nanny: str | None = None
        self.host = ""
        self.threads = 1
        # starting, ready, stopping, yielding (giving its Dask worker back to a fair share),
        # waiting (for a Dask worker), failing (not reported yet), failed, ended
        self.state = "new"
        self.waiting_for = "replacement"  # or "share": no time limit
        self.queue: deque[int] = deque()  # submitted task ids, oldest (running) first
        self.tasks: dict[int, Task] = {}
        self.bundles: deque[_Bundle] = deque()
        self.control: Any = None  # the init or stop Future
        self.files: SlotFiles | None = None
        self.stop_error: str | None = None
        self.since = 0.0
        self.last_result = 0.0
        self.waiting_since = 0.0
        self.killed = False
        self.replaced = False
        self.generation = 0
        self.avoid: set[str] = set()  # Dask workers it must not take again (left running, busy)
        self.remote = False  # its Dask worker does not see the run folder (another machine)
        self.evict: tuple[str, ...] = ()  # stale mlpipe workers its Dask worker hosts
        self.probed: tuple[float, Marker | None, bytes | None] | None = None  # a remote peek

    @property
    def source(self) -> str:
        """This generation's name as a sender of files (:class:`~.dask_transfer.Inbox`)."""
        return f"{self.key}#{self.generation}"


class DaskBackend(QueueingBackend[_Slot]):
    """mlpipe workers in the processes of a Dask cluster (see the module docstring).

    ``address``: a scheduler (``tcp://host:port``) mlpipe did not start; default the
    job's ``cluster`` (handed down by the runner), else ``$MLPIPE_DASK_SCHEDULER``, else
    a LocalCluster started and closed by the backend. ``connect_timeout``: seconds to
    reach the scheduler; ``wait_for_workers``: seconds an external cluster gets to have
    one Dask worker per mlpipe worker before the step starts on those it has.
    """

    name = "dask"
    queued_seconds = 0.1
    max_depth = 16

    def __init__(self, address: str | None = None, *, security: Any = None,
                 scheduler_file: str | None = None, cluster: JobCluster | None = None,
                 connect_timeout: float = CONNECT_TIMEOUT_SECONDS,
                 wait_for_workers: float = WAIT_FOR_WORKERS_SECONDS) -> None:
        backend_spec(self.name).require()
        self._problem: str | None = None
        if address is None and scheduler_file is None and cluster is not None:
            address, owned = cluster.address, cluster.owned
            security = cluster.security if security is None else security
            self._problem = cluster.problem
        else:
            try:
                options = chosen_options(DaskOptions(scheduler=address,
                                                     scheduler_file=scheduler_file))
                address = options.address()
                security = options.security() if security is None else security
            except DaskOptionsError as error:
                self._problem = str(error)
            owned = address is None and self._problem is None
        self.address = address
        self.owned = owned
        self.security = security
        self._say = cluster.say if cluster is not None else None
        self._resume = cluster.resume if cluster is not None else ""
        if not owned:
            self.kill_effect = LEFT_RUNNING
        self.connect_timeout = connect_timeout
        self.wait_for_workers = wait_for_workers
        super().__init__()
        self._session: ClusterSession | None = None
        self._board: ShareBoard | None = None
        self._pool = 0  # Dask workers mlpipe may use on the cluster
        self._share = 0  # of them, this step's fair share (0: not computed)
        self._client: Any = None  # the session's client, once connected
        self._run_id = uuid.uuid4().hex[:8]
        self._tag = self._run_id
        self._by_address: dict[str, _Slot] = {}
        # future key -> (slot, kind, bundle of a run task)
        self._by_key: dict[str, tuple[_Slot, str, _Bundle | None]] = {}
        self._spares: list[str] = []  # Dask workers no mlpipe worker of this step uses
        self._inbox: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._completed: set[str] = set()  # keys whose task ended (callback thread adds)
        self._fetching: set[str] = set()  # keys whose result is being fetched
        self._fetched: dict[str, Any] = {}  # key -> result fetched, not yet handled
        self._ready_events: list[BackendEvent] = []
        self._lost_phases: dict[int, str] = {}  # lost task id -> the phase file it ran with
        self._restarts: list[threading.Thread] = []
        self._closed = False
        self._log_route = DaskLogRoute()  # Dask's logs to master_role.txt while the step runs
        self._overhead = TASK_OVERHEAD_SECONDS  # measured Dask cost per task (moving average)
        self._bundle = 1  # mini-batches per Dask task now
        self._sequence = 0  # tasks submitted so far
        self._reports: dict[str, PreflightReport] = {}  # Dask worker -> its passed preflight
        self._request: PreflightRequest | None = None
        self._token_path: Path | None = None
        self._packed: tuple[str, bytes] | None = None  # the code snapshot: digest, archive
        self._archive_future: Any = None
        self._files_in: Inbox | None = None  # files of workers that do not see the run folder
        self._unusable: dict[str, str] = {}  # Dask worker -> why the step does not use it
        self._busy: dict[str, float] = {}  # Dask worker busy with another run -> next look
        self._prober: threading.Thread | None = None
        self._probe_wanted = threading.Event()
        self._disconnected = 0.0  # when the client lost the scheduler
        self._lost: str | None = None  # the scheduler is gone: why

    @classmethod
    def for_job(cls, cluster: JobCluster | None) -> DaskBackend:
        """The backend of one step of a job whose Dask cluster is ``cluster`` (the factory of
        the backends' table)."""
        return cls(cluster=cluster)

    @property
    def bundle_size(self) -> int:
        """Mini-batches per Dask task now (1 until the first results are measured)."""
        return self._bundle

    # -- lifecycle ---------------------------------------------------------------------
    def start(self, workers: Sequence[WorkerInfo], config: WorkerConfig) -> None:
        self._config = config
        self._tag = f"{_key_word(Path(config.logs_dir).parent.name)}-{self._run_id}"
        self._log_route = DaskLogRoute(tuple(Tagged(h) for h in self.logger.handlers)).open()
        self._slots = [_Slot(info, f"{self._run_id}/{info.node_name}/{info.process}")
                       for info in workers]
        session = self._session = ClusterSession(self.address, self.owned, self.connect_timeout,
                                                 self.wait_for_workers, self.logger,
                                                 self.security)
        try:
            if self._problem is not None:
                raise DaskOptionsError(self._problem)
            available, pool = session.connect(len(workers), self._on_cluster_event)
            self._request = self._preflight_request(config)
        except Exception as error:  # noqa: BLE001 - any connection problem fails the step cleanly
            where = session.where
            message = f"cannot use the Dask cluster ({where}): {type(error).__name__}: {error}"
            if isinstance(error, DaskOptionsError):  # which cluster is not known: say why
                message = f"cannot use the Dask cluster: {error}"
            elif where == "a LocalCluster":
                message += (" (a LocalCluster starts its workers with 'spawn', which imports the "
                            "__main__ script again: a script that runs mlpipe must guard its top "
                            "level with `if __name__ == \"__main__\":`)")
            self.logger.error("%s", message)
            for slot in self._slots:
                self._fail_later(slot, message)
            return
        self._client = session.client
        self._pool = pool
        usable = self._usable(available)
        claimed = [(address, meta) for address, meta in usable
                   if session.holds(address) or session.claim(address)][:len(self._slots)]
        for address, _ in available:
            if address not in dict(claimed) and session.holds(address) and session.shared:
                session.release(address)  # claimed by connect(), but not used
        for slot, (address, meta) in zip(self._slots, claimed, strict=False):  # maybe fewer
            self._assign(slot, address, meta)
            self._spawn(slot)
        self._spares = [address for address, _ in usable if address not in self._by_address]
        pool = max(0, pool - len(self._unusable))
        self._pool = pool
        missing = self._slots[len(claimed):]
        later = missing[:max(0, pool - len(claimed))]  # held by other steps now
        never = missing[len(later):]
        now = time.monotonic()
        for slot in later:
            slot.state, slot.waiting_for, slot.waiting_since = "waiting", "share", now
        if later:
            self.logger.info("Dask: %s wait for Dask workers that other mlpipe steps hold now "
                             "(the cluster is shared fairly).", plural(len(later), "mlpipe worker"))
        if never:
            free = plural(pool, "worker process")
            message = (f"the Dask cluster has {free} mlpipe may use and each "
                       f"mlpipe worker needs its own ({len(self._slots)} wanted: instance_count x "
                       f"max_concurrency_per_instance); start more Dask workers or ask for fewer")
            if self._unusable:
                message += f" ({plural(len(self._unusable), 'worker')} not used: " + "; ".join(
                    f"{address}: {why}" for address, why in self._unusable.items()) + ")"
            self.logger.warning("%s; %s will not start.", message,
                                plural(len(never), "mlpipe worker"))
            for slot in never:
                self._fail_later(slot, message)
        if session.shared:
            self._board = ShareBoard(self._client, self._run_id, self._tag, self.logger)
            self._board.join(self._wanted(), self._holding())
        if not self.owned:  # workers on other machines: which mini-batch runs, asked there
            self._prober = threading.Thread(target=self._probe_loop, daemon=True,
                                            name=f"mlpipe-dask-probe-{self._run_id}")
            self._prober.start()

    # -- the preflight -----------------------------------------------------------------
    def _preflight_request(self, config: WorkerConfig) -> PreflightRequest:
        """Write the token that tells a worker it sees the run folder."""
        token = uuid.uuid4().hex
        path = self._token_path = Path(config.working_root).parent / "dask" / \
            f"visible-{self._run_id}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(token, encoding="ascii")
        self._files_in = Inbox(transfer_roots(config))
        return preflight_request(token_path=str(path), token=token,
                                 code_dir=config.code_dir, inputs=config.inputs)

    def _code(self) -> tuple[str, bytes]:
        """The code snapshot's digest and archive, packed the first time a worker that does
        not see the run folder needs it (workers on a shared file system never do)."""
        if self._packed is None:
            from mlpipe.runtime.backends.dask_code import pack_code  # noqa: PLC0415

            assert self._config is not None
            self._packed = pack_code(self._config.code_dir)
        return self._packed

    def _inspect(self, addresses: Sequence[str]) -> dict[str, Any]:
        """The preflight reports of ``addresses`` (an exception for a worker that failed)."""
        if not addresses or self._request is None:
            return {}
        client = self._client
        request = self._request

        async def ask() -> Any:
            return await asyncio.wait_for(
                client._run(inspect_worker, request, workers=list(addresses), nanny=False,
                            on_error="return"), PREFLIGHT_TIMEOUT_SECONDS)

        try:
            return dict(client.sync(ask))
        except Exception as error:  # noqa: BLE001 - every worker is then unknown
            return {address: error for address in addresses}

    def _usable(self, candidates: Sequence[tuple[str, dict[str, Any]]],
                ) -> list[tuple[str, dict[str, Any]]]:
        """The ``candidates`` whose preflight passed, in order; the others are noted (driver
        log and console) and kept out of this step."""
        reports = self._inspect([address for address, _ in candidates
                                 if address not in self._unusable])
        usable = []
        for address, meta in candidates:
            report = reports.get(address)
            why = self._unusable.get(address) or self._verdict(address, report)
            if why is None:
                usable.append((address, meta))
        return usable

    def _verdict(self, address: str, report: Any) -> str | None:
        """Why the step does not use the worker at ``address`` (None: it does)."""
        assert self._request is not None
        if not isinstance(report, PreflightReport):
            why = f"it did not answer the preflight ({_error_text(report)})"
            if isinstance(report, ModuleNotFoundError) and report.name == "mlpipe":
                why = "mlpipe is not installed there (pip install 'mlpipe-azure[dask]')"
            self._not_used(address, "?", [why])
            return why
        problems = differences(report, self._request)
        if problems:
            self._not_used(address, report.host, problems)
            return "; ".join(problems)
        busy = busy_elsewhere(report, self._run_id)
        if busy is not None:
            assert self._session is not None
            if self._session.taken(address):  # a live step's worker: not ours to note
                return "held by another mlpipe step"
            if address not in self._busy:
                self._note(f"Dask worker {address} (host {report.host}) is still in a run() "
                           f"that an earlier mlpipe run left there ({busy.busy_seconds:.0f} s "
                           "so far); this step takes it once it is free")
            self._busy[address] = time.monotonic() + BUSY_CHECK_SECONDS
            return "busy"
        self._busy.pop(address, None)
        self._reports[address] = report
        return None

    def _not_used(self, address: str, host: str, problems: Sequence[str]) -> None:
        self._unusable[address] = "; ".join(problems)
        self._note(f"Dask worker {address} (host {host}) is not used: " + "; ".join(problems))

    def _note(self, line: str) -> None:
        """A line for the driver log and the job's console."""
        self.logger.warning("Dask: %s", line)
        if self._say is not None:
            self._say(f"step {Path(self._config.logs_dir).parent.name if self._config else ''}: "
                      f"{line}")

    def _fail_later(self, slot: _Slot, message: str) -> None:
        """Report at the next :meth:`events` that ``slot`` cannot start (active until then)."""
        slot.state = "failing"
        self._ready_events.append(WorkerInitFailed(slot.info, message, message + "\n"))

    def _on_cluster_event(self, event: tuple[float, Any]) -> None:
        message = event[1]
        if isinstance(message, dict) and message.get("action") in ("add-worker", "remove-worker"):
            self._inbox.put(("cluster", message))

    def _assign(self, slot: _Slot, address: str, meta: dict[str, Any]) -> None:
        slot.address = address
        slot.dask_name = meta.get("name")
        slot.nanny = meta.get("nanny")
        slot.threads = int(meta.get("nthreads") or 1)
        slot.host = host_of(address)
        report = self._reports.get(address)
        slot.remote = report is not None and not report.shared
        slot.evict = tuple(hosted.key for hosted in report.hosted
                           if hosted.run_id != self._run_id) if report is not None else ()
        if slot.remote and report is not None:
            self.logger.info("Dask: %s/%s runs on %s (host %s), which does not see the run "
                             "folder: the code goes there through Dask (sent where its cache "
                             "lacks it), the files it writes come back through Dask.",
                             slot.info.node_name, slot.info.process, address, report.host)
        self._by_address[address] = slot
        assert self._session is not None
        self._session.use(address, slot.nanny)

    def _spawn(self, slot: _Slot, *, send_code: bool = False) -> None:
        assert self._config is not None and slot.address is not None
        slot.generation += 1
        slot.state = "starting"
        slot.killed = False
        slot.probed = None
        slot.queue.clear()
        slot.tasks.clear()
        slot.bundles.clear()
        slot.stop_error = None
        archive: Any = None
        digest = None
        if slot.remote:
            slot.files = None
            digest = self._code()[0]
            if send_code:  # its cache lacks the snapshot: send it (else it runs its copy)
                archive = self._code_future()
        else:
            slot.files = slot_files(self._config, slot.info, f"{self._run_id}-{slot.generation}")
        slot.control = self._submit(start_worker, slot, "init", None, slot.key, self._config,
                                    slot.info, slot.files, self._run_id, digest, archive,
                                    slot.evict)

    def _code_future(self) -> Any:
        """The code snapshot as data on the cluster (sent once; workers fetch it from there)."""
        if self._archive_future is None:
            self._archive_future = self._client.scatter(self._code()[1], hash=False)
        return self._archive_future

    def _submit(self, function: Any, slot: _Slot, kind: str, bundle: _Bundle | None,
                *args: Any, after: Any = None) -> Any:
        suffix = f"{bundle.task_ids[0]:09d}" if bundle is not None else \
            f"{slot.info.node_name}-{slot.info.process}-{self._sequence}"
        key = f"mlpipe-{kind}-{self._tag}-{slot.generation}-{suffix}"
        extra = {"after": after} if after is not None else {}
        assert self._session is not None
        self._sequence += 1  # Dask runs a worker's tasks by priority: these in submission order
        future = self._client.submit(function, *args, key=key, workers=[slot.address],
                                     allow_other_workers=False, retries=0,
                                     priority=-self._sequence,
                                     resources=self._session.resources, **extra)
        self._by_key[key] = (slot, kind, bundle)
        future.add_done_callback(self._on_done)
        return future

    def _after(self, slot: _Slot) -> Any:
        """On a Dask worker with several threads, the last bundle not yet done: the next task
        depends on it, so Dask runs the slot's tasks in order and no thread waits."""
        if slot.threads > 1 and slot.bundles:
            last = slot.bundles[-1].future
            if last.key not in self._completed:
                return last
        return None

    def _on_done(self, future: Any) -> None:
        # remembered now: a finished task whose worker dies later turns back to "pending"
        self._completed.add(future.key)
        self._inbox.put(("done", future))

    def stop(self) -> None:
        self._stopping = True
        for slot in self._slots:
            if slot.state == "ready":
                self._stop_slot(slot)
            elif slot.state == "waiting":
                slot.state = "ended"
            elif slot.state == "yielding":
                slot.state = "stopping"

    def _stop_slot(self, slot: _Slot) -> None:
        self._wind_down(slot, "stopping")

    def _wind_down(self, slot: _Slot, state: str) -> None:
        """Stop the worker (shutdown()) once its current mini-batch ends: its bundles are
        halted (what they have not run comes back as returned) and the stop task runs after
        them; ``state`` is "stopping" (the step ends) or "yielding" (a fair share)."""
        _halt(slot, self._client)
        slot.state = state
        slot.control = self._submit(stop_worker, slot, "stop", None, slot.key,
                                    after=self._after(slot))

    def active_workers(self) -> int:
        return sum(slot.state in ("starting", "ready", "stopping", "yielding", "waiting",
                                  "failing") for slot in self._slots)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._probe_wanted.set()
        if self._lost is None:
            for thread in self._restarts:
                thread.join(timeout=RESTART_TIMEOUT_SECONDS)
            if self._board is not None:
                self._board.leave()
            if self._archive_future is not None:
                _release_future(self._archive_future)
        if self._session is not None:
            self._session.close()
        if self._files_in is not None:
            self._files_in.close_all()
        if self._token_path is not None:
            with contextlib.suppress(OSError):
                self._token_path.unlink()
        self._log_route.close()
        self._by_key.clear()
        for slot in self._slots:
            slot.bundles.clear()
            slot.control = None
        if self._config is not None:  # results files of bundles halted or given up
            for path in (Path(self._config.working_root).parent / "dask").glob(
                    f"*-{self._run_id}-*.results"):
                with contextlib.suppress(OSError):
                    path.unlink()

    # -- tasks -------------------------------------------------------------------------
    def submit(self, tasks: Sequence[Task]) -> None:
        per_slot: dict[int, tuple[_Slot, list[Task]]] = {}
        for slot, task in self._queue(tasks):
            slot.tasks[task.task_id] = task
            per_slot.setdefault(id(slot), (slot, []))[1].append(task)
        size = self._bundle
        for slot, queued in per_slot.values():
            for first in range(0, len(queued), size):
                part = tuple(queued[first:first + size])
                bundle = _Bundle("", tuple(task.task_id for task in part), None)
                bundle.future = self._submit(run_tasks, slot, "run", bundle, slot.key, part,
                                             after=self._after(slot))
                bundle.key = bundle.future.key
                slot.bundles.append(bundle)

    def _resize(self) -> None:
        """Size the bundles and the queues from the average: a bundle long enough that
        Dask's measured cost per task is at most OVERHEAD_SHARE of it, and BUNDLES_AHEAD of
        them per worker; slow mini-batches one at a time."""
        super()._resize()
        average = max(self._average, 1e-6)
        if average >= self.slow_task_seconds:
            self._bundle = 1
            return
        wanted = math.ceil(self._overhead * (1 - OVERHEAD_SHARE) / OVERHEAD_SHARE / average)
        self._bundle = max(1, min(MAX_BUNDLE, wanted, int(BUNDLE_SECONDS / average)))
        if self._bundle > 1:
            self._depth = self._bundle * BUNDLES_AHEAD

    def _measure(self, slot: _Slot, bundle: _Bundle, results: Sequence[TaskResult]) -> None:
        """Dask's cost of one task: the time from when the bundle could start (submitted, or
        the slot's previous results) to its results, less the work in it."""
        now = time.monotonic()
        if results:
            began = max(bundle.submitted, slot.last_result)
            sample = max(0.0, now - began - sum(r.elapsed_seconds for r in results))
            self._overhead = 0.8 * self._overhead + 0.2 * sample
        slot.last_result = now

    def running(self) -> list[tuple[int, WorkerInfo, float]]:
        now = time.monotonic()
        found = []
        for slot in self._slots:
            if not slot.queue or slot.state not in ("ready", "stopping", "yielding"):
                continue
            current = self._current(slot, now) if now - slot.since > PEEK_SECONDS else None
            task_id, since = current or (slot.queue[0], slot.since)
            found.append((task_id, slot.info, since))
        return found

    def _current(self, slot: _Slot, now: float) -> tuple[int, float] | None:
        """The mini-batch ``slot`` runs now and since when, from its marker file; ``None``
        when the file does not say (not written yet, unreadable) or no bundle is out."""
        if not slot.bundles or (slot.files is None and not slot.remote):
            return None
        head = slot.bundles[0].task_ids
        if len(head) == 1 and len(slot.bundles) == 1:
            return (head[0], slot.since) if head[0] in slot.queue else None
        marker = self._marker(slot)
        if marker is None or marker.task_id not in slot.queue:
            return None
        if marker.task_id not in head:  # the head's results are on their way: it just began
            return marker.task_id, now
        if marker.state == "R":
            return marker.task_id, slot.since + marker.start
        following = [t for t in head[head.index(marker.task_id) + 1:] if t in slot.queue]
        if following:
            return following[0], slot.since + marker.end
        return marker.task_id, slot.since + marker.start

    def task_phase(self, task_id: int, worker: WorkerInfo) -> TaskPhase | None:
        lost = self._lost_phases.pop(task_id, None)  # its worker is gone, maybe replaced
        slot = self._slot(worker)
        if lost is None and slot.remote:  # its phase file is on the worker's own disk
            self._probe_wanted.set()
            probed = slot.probed
            return decode_phase(probed[2], task_id) if probed is not None \
                and probed[2] is not None else None
        path = lost or (slot.files.phase if slot.files is not None else None)
        return read_phase(Path(path), task_id) if path is not None else None

    def _marker(self, slot: _Slot) -> Marker | None:
        """Which mini-batch ``slot``'s worker runs: its marker file, or on a worker that does
        not see the run folder, the last probe of it (asked for, for the next look)."""
        if not slot.remote:
            return read_task_marker(slot.files.marker) if slot.files is not None else None
        if time.monotonic() - slot.since > PROBE_SECONDS:  # a bundle that is taking a while
            self._probe_wanted.set()
        return slot.probed[1] if slot.probed is not None else None

    def _probe_loop(self) -> None:
        """In the background, while a remote worker's bundle runs longer than PROBE_SECONDS:
        ask those workers which mini-batch they run and in which phase (``client.run``
        answers while the task runs), at most every PROBE_SECONDS (a question costs the
        workers' event loops a little: short mini-batches never cause one)."""
        while not self._closed:
            if not self._probe_wanted.wait(0.5):
                continue
            self._probe_wanted.clear()
            slots = [slot for slot in self._slots if slot.remote and slot.address is not None
                     and slot.state in ("ready", "stopping", "yielding") and slot.bundles]
            if slots and self._lost is None:
                self._probe(slots)
            time.sleep(PROBE_SECONDS)

    def _probe(self, slots: Sequence[_Slot]) -> None:
        client = self._client
        keys = [slot.key for slot in slots]
        addresses = list(dict.fromkeys(slot.address for slot in slots if slot.address))

        async def ask() -> Any:
            return await asyncio.wait_for(
                client._run(probe_workers, keys, workers=addresses, on_error="return"),
                PREFLIGHT_TIMEOUT_SECONDS)

        try:
            answers = client.sync(ask)
        except Exception:  # noqa: BLE001 - a worker gone meanwhile: its removal decides
            return
        now = time.monotonic()
        for slot in slots:
            found = answers.get(slot.address)
            if isinstance(found, dict) and slot.key in found:
                marker, phase = found[slot.key]
                slot.probed = (now, parse_marker(marker), phase)

    def kill(self, worker: WorkerInfo) -> None:
        slot = self._slot(worker)
        if slot.address is None or slot.killed \
                or slot.state not in ("starting", "ready", "stopping", "yielding"):
            return
        slot.killed = True
        if not self.owned:
            self._leave_running(slot)
            return
        thread = threading.Thread(target=self._kill, args=(slot, slot.address, slot.nanny),
                                  daemon=True,
                                  name=f"mlpipe-kill-{worker.node_name}-{worker.process}")
        self._restarts.append(thread)
        thread.start()

    def _kill(self, slot: _Slot, address: str, nanny: str | None) -> None:
        assert self._session is not None
        problem = self._session.restart(address, nanny, KILL_GRACE_SECONDS)
        if problem:
            self.logger.warning("Killing %s/%s: %s", slot.info.node_name, slot.info.process,
                                problem)

    def _leave_running(self, slot: _Slot) -> None:
        """Give up on ``slot``'s Dask worker without touching it (a cluster mlpipe did not
        start): its running mini-batch is lost to its timeout, the rest are returned, the rest
        of its bundle is skipped, and a stop task gives the process back once run() returns."""
        assert slot.address is not None
        from distributed import fire_and_forget  # noqa: PLC0415

        address = slot.address
        current = self._current(slot, time.monotonic())
        lost, since = current if current is not None else (None, None)
        _halt(slot, self._client)
        stop = self._submit(stop_worker, slot, "stop", None, slot.key)
        self._by_key.pop(stop.key, None)
        fire_and_forget(stop)
        self.logger.warning("Dask: %s/%s's run() stays on %s until it returns (%s); the "
                            "mini-batch is retried on another worker.", slot.info.node_name,
                            slot.info.process, address, NOT_OURS)
        slot.avoid.add(address)
        reason = (f"worker {slot.info.node_name}/{slot.info.process} (pid {slot.info.pid}, Dask "
                  f"worker {address}) was given up by mlpipe: {LEFT_RUNNING}")
        self._forget(slot, address, lost, since, reason, self._ready_events)

    # -- events ------------------------------------------------------------------------
    def events(self, timeout: float | None) -> list[BackendEvent]:
        if self._lost is None and self._scheduler_gone():
            return self._scheduler_lost()
        out, self._ready_events = self._ready_events, []
        for slot in self._slots:
            if slot.state == "failing":
                slot.state = "failed"
        items: list[tuple[str, Any]] = []
        if not out:
            with contextlib.suppress(queue.Empty):
                items.append(self._inbox.get_nowait() if timeout is not None and timeout <= 0
                             else self._inbox.get(timeout=timeout))
        while True:
            try:
                items.append(self._inbox.get_nowait())
            except queue.Empty:
                break
        removed = {message["worker"] for kind, message in items
                   if kind == "cluster" and message["action"] == "remove-worker"}
        done = [future for kind, future in items if kind == "done"]
        for kind, payload in items:
            if kind == "fetched":
                done.extend(self._fetch_ended(*payload))
        self._finished(done, removed, out)
        for kind, message in items:
            if kind == "cluster":
                if message["action"] == "remove-worker":
                    keys = message.get("processing-tasks")
                    self._worker_removed(message["worker"],
                                         None if keys is None else {str(k) for k in keys}, out)
                elif message["worker"] not in self._by_address:
                    self._spares.append(message["worker"])
        if self._client is None or self._client.status == "running":  # else it would block
            self._rebalance()
            self._replace_lost(out)
        out.extend(self._ready_events)
        self._ready_events = []
        return out

    def _scheduler_gone(self) -> bool:
        """True once the client has been cut off from the scheduler for
        SCHEDULER_LOST_SECONDS (it reconnects by itself before that)."""
        if self._client is None:
            return False
        if self._client.status == "running":
            self._disconnected = 0.0
            return False
        now = time.monotonic()
        if not self._disconnected:
            self._disconnected = now
        return now - self._disconnected >= SCHEDULER_LOST_SECONDS

    def _scheduler_lost(self) -> list[BackendEvent]:
        """End the step: every task held is returned (the resume runs it), every worker
        ends, one line says what happened and how to go on."""
        where = self._session.where if self._session is not None else "?"
        self._lost = where
        if self._session is not None:
            self._session.lost = True
        out: list[BackendEvent] = []
        for slot in self._slots:
            if slot.queue:
                out.append(TasksReturned(slot.info, tuple(slot.queue)))
            slot.queue.clear()
            slot.tasks.clear()
            slot.bundles.clear()
            slot.control = None
            if slot.state not in ("failed", "ended"):
                slot.state = "ended"
        self._by_key.clear()
        self._ready_events = []
        then = self._resume or ("run the step again with resume=True: the mini-batches that "
                                "finished are kept")
        out.append(BackendFailed(
            f"lost the Dask scheduler at {where} (no connection for "
            f"{SCHEDULER_LOST_SECONDS:g} s); the finished mini-batches are kept: {then}"))
        return out

    def _finished(self, futures: list[Any], removed: set[str], out: list[BackendEvent]) -> None:
        runs: list[tuple[Any, tuple[_Slot, str, _Bundle | None]]] = []
        controls: list[tuple[Any, tuple[_Slot, str, _Bundle | None]]] = []
        for future in futures:
            entry = self._by_key.get(future.key)
            if entry is None or entry[0].address in removed:
                self._fetched.pop(future.key, None)
                continue  # released, or its worker is gone (its removal decides)
            (runs if entry[1] == "run" else controls).append((future, entry))
        results = {future.key: self._fetched.pop(future.key) for future, _ in runs + controls
                   if future.key in self._fetched}
        self._fetch([future for future, _ in runs + controls if future.status == "finished"
                     and future.key not in results and future.key not in self._fetching])
        for future, (slot, _, bundle) in runs:
            assert bundle is not None
            if not _settled(future, results):
                continue  # not fetched, or lost since: the worker's removal or the timeout decides
            self._by_key.pop(future.key, None)
            self._completed.discard(future.key)
            with contextlib.suppress(ValueError):
                slot.bundles.remove(bundle)
            self._bundle_done(slot, bundle, future, results.get(future.key), out)
            if slot.state in ("stopping", "yielding") and not slot.queue and slot.control is None:
                self._wound_down(slot, out)
        for future, (slot, kind, _) in controls:
            if not _settled(future, results):
                continue
            self._by_key.pop(future.key, None)
            slot.control = None
            value = results.get(future.key, future)
            if kind == "init":
                self._init_done(slot, value, out)
                continue
            more = False
            if kind == "stop" and isinstance(value, tuple):
                slot.stop_error, ended, shipment, more = value
                self._said_ended(slot, ended)
                self._receive(slot, shipment)
            elif kind == "drain" and isinstance(value, tuple):
                shipment, more = value
                self._receive(slot, shipment)
            elif kind == "stop":
                slot.stop_error = None if value is None else _future_error(future)
            if more:  # more files than one shipment: fetched by drain tasks, one at a time
                slot.control = self._submit(drain_worker, slot, "drain", None, slot.key)
            elif not slot.queue:
                self._wound_down(slot, out)

    def _bundle_done(self, slot: _Slot, bundle: _Bundle, future: Any, value: Any,
                     out: list[BackendEvent]) -> None:
        """Report each mini-batch of a finished bundle: its result, or why it has none."""
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], list):
            value, shipment = value
            self._receive(slot, shipment)
        results = {result.task_id: result for result in value} \
            if isinstance(value, list) else {}
        self._measure(slot, bundle, list(results.values()))
        if slot.files is not None:
            with contextlib.suppress(OSError):
                os.unlink(bundle_results(slot.files, bundle.task_ids[0]))
        returned = []
        for task_id in bundle.task_ids:
            task = slot.tasks.pop(task_id, None)
            if task_id not in slot.queue:
                continue  # reported already (returned)
            result = results.get(task_id)
            if result is None and isinstance(value, list):
                returned.append(task_id)  # never ran: the bundle was halted before it
                slot.queue.remove(task_id)
                continue
            if result is None:
                result = _system_failure(task, task_id, future)
            self._task_finished(slot, result, out)
        if returned:
            out.append(TasksReturned(slot.info, tuple(returned)))

    def _fetch(self, futures: list[Any]) -> None:
        """Fetch the results of finished futures in one round trip, in the background.

        The values come back through the inbox (``fetched``), so the driver never waits
        on a fetch: a result whose worker died meanwhile turns back to pending and
        would stall the fetch until :data:`GATHER_TIMEOUT_SECONDS`, while the other
        workers' results keep flowing (fetched one by one after such a failure).
        """
        if not futures:
            return
        self._fetching.update(future.key for future in futures)
        client = self._client

        async def gather() -> Any:
            return await asyncio.wait_for(client._gather(futures), GATHER_TIMEOUT_SECONDS)

        try:
            fetch = asyncio.run_coroutine_threadsafe(gather(), client.loop.asyncio_loop)
        except Exception as error:  # noqa: BLE001 - the client is closing
            self._inbox.put(("fetched", (futures, error)))
            return
        fetch.add_done_callback(lambda done: self._inbox.put(("fetched", (futures, done))))

    def _fetch_ended(self, futures: list[Any], done: Any) -> list[Any]:
        """The futures whose results a background fetch brought (kept in ``_fetched``);
        after a failed fetch, each still-finished future is fetched again on its own."""
        for future in futures:
            self._fetching.discard(future.key)
        try:
            if isinstance(done, BaseException):
                raise done
            values = done.result()
        except BaseException:  # noqa: BLE001 - timeout, lost data, a closing client
            alive = [future for future in futures
                     if future.key in self._by_key and future.status == "finished"]
            if len(alive) > 1:
                for future in alive:
                    self._fetch([future])
            elif alive and not self._closed:  # one result on a worker about to be removed
                self._fetch(alive)
            return []
        self._fetched.update((future.key, value)
                             for future, value in zip(futures, values, strict=True))
        return futures

    def _init_done(self, slot: _Slot, value: Any, out: list[BackendEvent]) -> None:
        answer = value[0] if isinstance(value, tuple) and value else None
        if answer == "ready":
            self._receive(slot, value[2])
            self._worker_ready(slot, value[1], out)
            return
        if answer == "no_code":  # not in its cache yet: send it (once per cache)
            self.logger.info("Dask: sending the code snapshot (%s) to %s, whose cache lacks it.",
                             _size_text(len(self._code()[1])), slot.address)
            self._spawn(slot, send_code=True)
            return
        if answer == "busy":
            assert slot.address is not None and self._session is not None
            self.logger.info("Dask: %s already hosts an mlpipe worker (%s); %s/%s looks for "
                             "another.", slot.address, value[1], slot.info.node_name,
                             slot.info.process)
            address = slot.address
            slot.avoid.add(address)
            self._by_address.pop(address, None)
            self._session.release(address)
            slot.address = None
            slot.state, slot.waiting_since = "waiting", time.monotonic()
            return
        if answer == "init_failed":
            message, text, stage = value[1], value[2], value[3]
            self._receive(slot, value[4])
            self._said_ended(slot, value[5])
        else:
            message = f"the Dask task that starts the worker failed: {_future_error(value)}"
            text, stage = message + "\n", "start"
        if self._files_in is not None:
            self._files_in.close(slot.source)
        slot.state = "failed"
        out.append(WorkerInitFailed(slot.info, message, text, stage))

    def _receive(self, slot: _Slot, shipment: Any) -> None:
        """Write the files ``slot``'s worker sent (it does not see the run folder)."""
        if shipment is not None and self._files_in is not None:
            self._files_in.receive(slot.source, shipment)

    def _said_ended(self, slot: _Slot, ended: Sequence[str]) -> None:
        for process in ended or ():
            self.logger.warning("Ended %s on Dask worker %s, started by the step's code and "
                                "still running when the step ended.", process, slot.address)

    def _wound_down(self, slot: _Slot, out: list[BackendEvent]) -> None:
        """``slot``'s worker ran shutdown(): the step's end, or a worker given back."""
        if self._files_in is not None:
            self._files_in.close(slot.source)
        if slot.state == "stopping" or self._stopping:
            slot.state = "ended"
            out.append(WorkerStopped(slot.info, slot.stop_error))
            return
        address = slot.address
        assert address is not None and self._session is not None
        if slot.stop_error:
            self.logger.error("shutdown() raised in worker %s/%s:\n%s", slot.info.node_name,
                              slot.info.process, slot.stop_error)
        self._by_address.pop(address, None)
        self._session.release(address)
        slot.address = None
        slot.replaced = True  # its next process is a new one, with a new init()
        slot.state, slot.waiting_for, slot.waiting_since = "waiting", "share", time.monotonic()
        self.logger.info("Dask: %s/%s gave %s back to the cluster (fair share: %d of %s).",
                         slot.info.node_name, slot.info.process, address, self._share,
                         plural(self._pool, "worker"))

    def _worker_removed(self, address: str, processing: set[str] | None,
                        out: list[BackendEvent]) -> None:
        self._spares = [a for a in self._spares if a != address]
        self._reports.pop(address, None)
        self._busy.pop(address, None)
        slot = self._by_address.get(address)
        if slot is None or slot.address != address or slot.state in ("failed", "ended", "waiting"):
            self._by_address.pop(address, None)
            return
        lost, since = self._running_when_lost(slot, processing)
        self._forget(slot, address, lost, since, _lost_reason(slot, address, self.owned), out)
        assert self._session is not None
        self._session.release(address)

    def _forget(self, slot: _Slot, address: str, lost: int | None, since: float | None,
                reason: str, out: list[BackendEvent]) -> None:
        """Drop ``slot``'s hold on the Dask worker at ``address`` (gone, or given up): the
        ``lost`` task is one attempt, the others are returned; the slot waits for another
        worker unless the step is stopping."""
        self._by_address.pop(address, None)
        was = slot.state
        self._recover(slot, out)
        if self._files_in is not None:  # what it sent arrived; what it had not is lost with it
            self._files_in.close(slot.source)
        if lost not in slot.queue:  # it had finished after all
            lost = since = None
        rest = tuple(task_id for task_id in slot.queue if task_id != lost)
        if lost is not None and slot.files is not None:
            self._lost_phases[lost] = slot.files.phase
        for bundle in list(slot.bundles):
            self._release_bundle(slot, bundle)
        if slot.control is not None:
            self._by_key.pop(slot.control.key, None)
            _release_future(slot.control)
            slot.control = None
        slot.queue.clear()
        slot.tasks.clear()
        slot.address = None
        if self._worker_lost(slot, was, reason, lost, since, rest, out):
            slot.state, slot.waiting_for = "waiting", "replacement"
            slot.waiting_since = time.monotonic()

    def _recover(self, slot: _Slot, out: list[BackendEvent]) -> None:
        """Report the mini-batches of ``slot``'s outstanding bundles that finished before its
        worker was lost (their results files): they are not run again."""
        if slot.files is None:
            return
        for bundle in list(slot.bundles):
            path = bundle_results(slot.files, bundle.task_ids[0])
            for result in read_bundle_results(path):
                if result.task_id in slot.queue and result.task_id in bundle.task_ids:
                    slot.tasks.pop(result.task_id, None)
                    self._task_finished(slot, result, out)
            with contextlib.suppress(OSError):
                os.unlink(path)

    def _running_when_lost(self, slot: _Slot, processing: set[str] | None,
                           ) -> tuple[int | None, float | None]:
        """The task a lost worker was running and since when: its marker file says, else the
        scheduler (its first task still processing there).

        Tasks that finished but whose results died with the worker are not it: they
        are returned (run again, no attempt charged).
        """
        marker = self._marker(slot)
        if marker is not None:
            if marker.state != "R" or marker.task_id not in slot.queue:
                return None, None
            current = self._current(slot, time.monotonic())
            return marker.task_id, current[1] if current and current[0] == marker.task_id \
                else None
        # no shared folder: the first task the scheduler still had as processing there
        if processing is None:
            processing = {bundle.key for bundle in slot.bundles
                          if bundle.key not in self._completed}
        for bundle in slot.bundles:
            if bundle.key in processing:
                unfinished = [t for t in bundle.task_ids if t in slot.queue]
                if unfinished:
                    since = slot.since if slot.queue[0] == unfinished[0] else None
                    return unfinished[0], since
        return None, None

    def _replace_lost(self, out: list[BackendEvent]) -> None:
        waiting = [slot for slot in self._slots if slot.state == "waiting"]
        if not waiting or self._stopping:
            return
        now = time.monotonic()
        for address, when in list(self._busy.items()):  # another run's run() may have ended
            if when <= now and address not in self._spares:
                self._spares.append(address)
        meta: dict[str, Any] = {}
        if self._spares:
            try:
                meta = self._client.scheduler_info(n_workers=-1)["workers"]
            except Exception:  # noqa: BLE001
                meta = {}
            self._spares = [address for address in self._spares if address in meta
                            and address not in self._unusable]
            unknown = [(address, meta[address]) for address in self._spares
                       if address not in self._reports]
            if unknown:  # a worker new to this step: its preflight first
                passed = {address for address, _ in self._usable(unknown)}
                self._spares = [address for address in self._spares
                                if address in self._reports or address in passed]
        session = self._session
        assert session is not None
        for slot in waiting:
            if self._share and self._holding() >= self._share and session.shared:
                choice = None  # at its fair share: what is free goes to the others first
            else:
                choice = _pick_spare(slot, self._spares, meta)
                while choice is not None and not session.holds(choice) \
                        and not session.claim(choice):
                    self._spares.remove(choice)
                    choice = _pick_spare(slot, self._spares, meta)
            if choice is not None:
                self._spares.remove(choice)
                self._assign(slot, choice, meta.get(choice, {}))
                self._spawn(slot)
            elif slot.waiting_for == "replacement" \
                    and now - slot.waiting_since > REPLACEMENT_TIMEOUT_SECONDS:
                slot.state = "failed"
                why = NOT_OURS if not self.owned else \
                    "workers without a Nanny are not restarted"
                message = (f"no Dask worker replaced {slot.info.node_name}/{slot.info.process} "
                           f"within {REPLACEMENT_TIMEOUT_SECONDS:g} s ({why})")
                out.append(WorkerInitFailed(slot.info, message, message + "\n"))

    def _holding(self) -> int:
        """How many Dask workers this step's mlpipe workers hold now."""
        return sum(slot.address is not None for slot in self._slots)

    def _wanted(self) -> int:
        """How many Dask workers this step wants now (mlpipe workers not failed or ended)."""
        return sum(slot.state in ("starting", "ready", "stopping", "yielding", "waiting")
                   for slot in self._slots)

    def _rebalance(self) -> None:
        """On a shared cluster, now and then: publish this step's demand, give workers back
        while another step holds less than its fair share, look for free ones while this step
        holds less than its own."""
        board, session = self._board, self._session
        now = time.monotonic()
        if board is None or session is None or self._stopping \
                or now - board.checked < CHECK_SECONDS:
            return
        board.checked = now
        me = Demand(self._run_id, self._wanted(), self._holding(), board.since)
        board.publish(me.wanted, me.held)
        others = board.others()
        shares = fair_shares([*others, me], self._pool)
        self._share = shares[me.run_id]
        starved = [o for o in others if o.held < min(o.wanted, shares[o.run_id])]
        holding = [slot for slot in self._slots if slot.state == "ready"]
        extra = me.held - self._share - sum(slot.state == "yielding" for slot in self._slots)
        if starved and extra > 0:
            for slot in reversed(holding[-extra:]):
                self.logger.info("Dask: %s wants workers (fair share %d of %s for %s); "
                                 "%s/%s gives its Dask worker back after its current mini-batch.",
                                 starved[0].label or starved[0].run_id, shares[starved[0].run_id],
                                 plural(self._pool, "worker"), plural(len(others) + 1, "step"),
                                 slot.info.node_name, slot.info.process)
                self._wind_down(slot, "yielding")
        elif me.held < self._share and any(s.state == "waiting" for s in self._slots):
            self._look_for_free(session)

    def _look_for_free(self, session: ClusterSession) -> None:
        """Add the cluster's workers nobody holds to the spares."""
        try:
            pool = session.pool()
        except Exception:  # noqa: BLE001
            return
        avoid = set().union(*(slot.avoid for slot in self._slots))
        for address, _ in pool:
            if address not in self._by_address and address not in self._spares \
                    and address not in avoid and not session.taken(address):
                self._spares.append(address)

    def _release_bundle(self, slot: _Slot, bundle: _Bundle) -> None:
        with contextlib.suppress(ValueError):
            slot.bundles.remove(bundle)
        self._by_key.pop(bundle.key, None)
        self._completed.discard(bundle.key)
        self._fetched.pop(bundle.key, None)
        _release_future(bundle.future)


def _halt(slot: _Slot, client: Any) -> None:
    """Tell ``slot``'s bundles to end after the current mini-batch (its halt file, on the
    worker's own disk when it does not see the run folder): the one running returns what
    it ran, those queued behind it return at once."""
    if not slot.bundles:
        return
    if slot.files is not None:
        with contextlib.suppress(OSError):
            Path(slot.files.halt).touch()
    elif slot.address is not None and client is not None:
        with contextlib.suppress(Exception):  # a worker gone: its removal decides
            client.run(halt_worker, slot.key, workers=[slot.address], wait=False)


def _pick_spare(slot: _Slot, spares: list[str], meta: dict[str, Any]) -> str | None:
    """The lost worker's own restarted process (same name) first, then one on its host, then any."""
    usable = [address for address in spares if address not in slot.avoid]
    for address in usable:
        if slot.dask_name is not None and meta.get(address, {}).get("name") == slot.dask_name:
            return address
    for address in usable:
        if host_of(address) == slot.host:
            return address
    return usable[0] if usable else None


def _key_word(name: str) -> str:
    """A step name as a word of a Dask key (the dashboard groups tasks by those words)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "step"


def _settled(future: Any, results: dict[str, Any]) -> bool:
    """True when ``future``'s outcome is known: its value was fetched, or its task raised."""
    return future.key in results or future.status == "error"


def _release_future(future: Any) -> None:
    with contextlib.suppress(Exception):  # the client may be closing
        future.cancel()


def _system_failure(task: Task | None, task_id: int, future: Any) -> TaskResult:
    total = (task.mini_batch.items or 0) if task is not None else 0
    message = (f"the Dask task of this mini-batch failed: {_future_error(future)}"
               if future.status != "finished" else
               "the Dask worker no longer holds this mlpipe worker (was it restarted?)")
    return TaskResult(task_id, "Failed", total, 0, total, time.time(), 0.0, 0.0, 0.0,
                      "SystemError", message, None)


def _size_text(size: int) -> str:
    return f"{size / 1024:.0f} KB" if size < 1 << 20 else f"{size / (1 << 20):.1f} MB"


def _error_text(error: Any) -> str:
    if isinstance(error, BaseException):
        return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return "no answer"


def _future_error(future: Any) -> str:
    try:
        error = future.exception(timeout=1)
    except Exception as fetch_error:  # noqa: BLE001
        return f"{type(fetch_error).__name__}: {fetch_error}"
    return f"{type(error).__name__}: {error}" if error is not None else f"status {future.status}"


def _lost_reason(slot: _Slot, address: str, owned: bool) -> str:
    who = (f"worker {slot.info.node_name}/{slot.info.process} (pid {slot.info.pid}, "
           f"Dask worker {address})")
    if slot.killed:
        return f"{who} was stopped by mlpipe"
    if owned:
        return f"{who} died or left the Dask cluster"
    return (f"{who} died or left the Dask cluster; its mini-batches are retried on the other "
            f"workers ({NOT_OURS})")


__all__ = ["DaskBackend", "SCHEDULER_ENV"]
