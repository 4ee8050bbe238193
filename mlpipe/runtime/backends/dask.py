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
fairly (:mod:`.dask_share`). Paths in the plan are used as they are on every worker: a
multi-host cluster needs the run folder and the data on a path shared by all hosts (as
Azure mounts them).
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
    TasksReturned,
    WorkerInitFailed,
    WorkerStopped,
)
from mlpipe.runtime.backends.dask_cluster import (
    CONNECT_TIMEOUT_SECONDS,
    RESTART_TIMEOUT_SECONDS,
    SCHEDULER_ENV,
    ClusterSession,
    JobCluster,
    host_of,
)
from mlpipe.runtime.backends.dask_logs import DaskLogRoute, Tagged
from mlpipe.runtime.backends.dask_share import CHECK_SECONDS, Demand, ShareBoard, fair_shares
from mlpipe.runtime.backends.dask_worker import (
    SlotFiles,
    bundle_results,
    read_bundle_results,
    read_task_marker,
    run_tasks,
    slot_files,
    start_worker,
    stop_worker,
)
from mlpipe.runtime.backends.queueing import QueueingBackend
from mlpipe.runtime.phases import TaskPhase, read_phase
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

    def __init__(self, address: str | None = None, *, cluster: JobCluster | None = None,
                 connect_timeout: float = CONNECT_TIMEOUT_SECONDS,
                 wait_for_workers: float = WAIT_FOR_WORKERS_SECONDS) -> None:
        backend_spec(self.name).require()
        if address is None and cluster is not None:
            address, owned = cluster.address, cluster.owned
        else:
            address = address or os.environ.get(SCHEDULER_ENV) or None
            owned = address is None
        self.address = address
        self.owned = owned
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
                                                 self.wait_for_workers, self.logger)
        try:
            available, pool = session.connect(len(workers), self._on_cluster_event)
        except Exception as error:  # noqa: BLE001 - any connection problem fails the step cleanly
            where = session.where
            message = f"cannot use the Dask cluster ({where}): {type(error).__name__}: {error}"
            if where == "a LocalCluster":
                message += (" (a LocalCluster starts its workers with 'spawn', which imports the "
                            "__main__ script again: a script that runs mlpipe must guard its top "
                            "level with `if __name__ == \"__main__\":`)")
            self.logger.error("%s", message)
            for slot in self._slots:
                self._fail_later(slot, message)
            return
        self._client = session.client
        self._pool = pool
        claimed = [(address, meta) for address, meta in available
                   if session.holds(address)][:len(self._slots)]
        for slot, (address, meta) in zip(self._slots, claimed, strict=False):  # maybe fewer
            self._assign(slot, address, meta)
            self._spawn(slot)
        self._spares = [address for address, _ in available if address not in self._by_address]
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
            self.logger.warning("%s; %s will not start.", message,
                                plural(len(never), "mlpipe worker"))
            for slot in never:
                self._fail_later(slot, message)
        if session.shared:
            self._board = ShareBoard(self._client, self._run_id, self._tag, self.logger)
            self._board.join(self._wanted(), self._holding())

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
        self._by_address[address] = slot
        assert self._session is not None
        self._session.use(address, slot.nanny)

    def _spawn(self, slot: _Slot) -> None:
        assert self._config is not None and slot.address is not None
        slot.generation += 1
        slot.state = "starting"
        slot.killed = False
        slot.queue.clear()
        slot.tasks.clear()
        slot.bundles.clear()
        slot.stop_error = None
        slot.files = slot_files(self._config, slot.info, f"{self._run_id}-{slot.generation}")
        slot.control = self._submit(start_worker, slot, "init", None, slot.key, self._config,
                                    slot.info, slot.files)

    def _submit(self, function: Any, slot: _Slot, kind: str, bundle: _Bundle | None,
                *args: Any, after: Any = None) -> Any:
        suffix = f"{bundle.task_ids[0]:09d}" if bundle is not None else \
            f"{slot.info.node_name}-{slot.info.process}"
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
        _halt(slot)
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
        for thread in self._restarts:
            thread.join(timeout=RESTART_TIMEOUT_SECONDS)
        if self._board is not None:
            self._board.leave()
        if self._session is not None:
            self._session.close()
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
        if not slot.bundles or slot.files is None:
            return None
        head = slot.bundles[0].task_ids
        if len(head) == 1 and len(slot.bundles) == 1:
            return (head[0], slot.since) if head[0] in slot.queue else None
        marker = read_task_marker(slot.files.marker)
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
        path = lost or (slot.files.phase if slot.files is not None else None)
        return read_phase(Path(path), task_id) if path is not None else None

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
        assert slot.address is not None and slot.files is not None
        from distributed import fire_and_forget  # noqa: PLC0415

        address = slot.address
        current = self._current(slot, time.monotonic())
        lost, since = current if current is not None else (None, None)
        _halt(slot)
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
        self._rebalance()
        self._replace_lost(out)
        out.extend(self._ready_events)
        self._ready_events = []
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
            else:
                slot.stop_error = value if isinstance(value, str) else (
                    None if value is None else _future_error(future))
                if not slot.queue:
                    self._wound_down(slot, out)

    def _bundle_done(self, slot: _Slot, bundle: _Bundle, future: Any, value: Any,
                     out: list[BackendEvent]) -> None:
        """Report each mini-batch of a finished bundle: its result, or why it has none."""
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
        if isinstance(value, tuple) and value and value[0] == "ready":
            self._worker_ready(slot, value[1], out)
            return
        if isinstance(value, tuple) and value and value[0] == "busy":
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
        if isinstance(value, tuple) and value and value[0] == "init_failed":
            message, text = value[1], value[2]
        else:
            message = f"the Dask task that starts the worker failed: {_future_error(value)}"
            text = message + "\n"
        slot.state = "failed"
        out.append(WorkerInitFailed(slot.info, message, text))

    def _wound_down(self, slot: _Slot, out: list[BackendEvent]) -> None:
        """``slot``'s worker ran shutdown(): the step's end, or a worker given back."""
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
        marker = read_task_marker(slot.files.marker) if slot.files is not None else None
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
        meta: dict[str, Any] = {}
        if self._spares:
            try:
                meta = self._client.scheduler_info(n_workers=-1)["workers"]
            except Exception:  # noqa: BLE001
                meta = {}
            self._spares = [address for address in self._spares if address in meta]
        now = time.monotonic()
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


def _halt(slot: _Slot) -> None:
    """Tell ``slot``'s bundles to end after the current mini-batch (its halt file): the one
    running returns what it ran, those queued behind it return at once."""
    if slot.files is not None and slot.bundles:
        with contextlib.suppress(OSError):
            Path(slot.files.halt).touch()


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
