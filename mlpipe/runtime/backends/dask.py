"""The Dask backend: mlpipe workers living in the worker processes of a dask.distributed cluster.

One mlpipe worker (node N, processNNN) is one Dask worker *process*: the
entry script, its init() state and the captured stdout/stderr are process-wide,
so two mlpipe workers never share a Dask worker. mlpipe worker ``i`` (in node
order: node 0's processes, then node 1's, ...) takes the ``i``-th Dask worker
sorted by host then name, so with ``instance_count`` hosts of
``max_concurrency_per_instance`` worker processes each, nodes are hosts; on one
machine (a LocalCluster) nodes are consecutive groups of worker processes.

Everything goes through Dask's own scheduling, so the dashboard shows each
mini-batch as a task (``mlpipe-run-...``): an ``mlpipe-init`` task pinned to the
worker (``workers=[address]``, ``allow_other_workers=False``) builds the
:class:`~mlpipe.runtime.worker.WorkerRuntime` and keeps it in that process;
``mlpipe-run`` tasks pinned the same way run one mini-batch each; an
``mlpipe-stop`` task calls shutdown() (those task functions, the worker side, are in
:mod:`.dask_worker`). The driver learns of finished tasks from
future callbacks and of dead workers from the scheduler's ``remove-worker``
events, so no process tree is shared. A run() past its timeout is stopped by
restarting that worker process through its Nanny; a worker that dies (``os._exit``,
a segfault, the Nanny's memory limit) is restarted by its Nanny; either way the
restarted process (same worker name, new address) gets a fresh mlpipe worker
and init(), and only the mini-batch it was running loses an attempt.

The cluster: ``DaskBackend(address)``, else ``$MLPIPE_DASK_SCHEDULER``
(``tcp://host:port``), else a ``LocalCluster`` (processes, one thread each, one
worker per mlpipe worker) that the backend starts and closes. Workers of an
external cluster are restarted when the step ends (through their Nannies) so
the next step gets clean processes (connecting, claiming and restarting workers:
:class:`~.dask_cluster.ClusterSession`). Paths in the plan are used as they are on
every worker: a multi-host cluster needs the run folder and the data on a path
shared by all hosts (as Azure mounts them).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
import uuid
from collections import deque
from collections.abc import Sequence
from typing import Any

from mlpipe.runtime.backends.base import (
    BackendError,
    BackendEvent,
    TasksReturned,
    WorkerInitFailed,
    WorkerStopped,
)
from mlpipe.runtime.backends.dask_cluster import (
    RESTART_TIMEOUT_SECONDS,
    SCHEDULER_ENV,
    ClusterSession,
    host_of,
)
from mlpipe.runtime.backends.dask_logs import DaskLogRoute, Tagged
from mlpipe.runtime.backends.dask_worker import (
    read_task_marker,
    run_task,
    start_worker,
    stop_worker,
    task_marker,
)
from mlpipe.runtime.backends.queueing import QueueingBackend
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.tasks import Task, TaskResult
from mlpipe.runtime.worker import WorkerConfig
from mlpipe.wording import plural

INSTALL_HINT = "pip install 'mlpipe-azure[dask]'"
CONNECT_TIMEOUT_SECONDS = 10.0
WAIT_FOR_WORKERS_SECONDS = 10.0  # an external cluster may still be starting workers
REPLACEMENT_TIMEOUT_SECONDS = 60.0  # a lost worker's Nanny must bring a new process by then
GATHER_TIMEOUT_SECONDS = 5.0  # results are append_row text: small; a lost one must not hang us
KILL_GRACE_SECONDS = 0.5  # the Nanny asks the process to close, then SIGKILLs it after 80% of this


class _Slot:
    """The driver's view of one mlpipe worker and the Dask worker it lives in."""

    def __init__(self, info: WorkerInfo, key: str):
        self.info = info
        self.key = key  # the name of its WorkerRuntime in the Dask worker process
        self.address: str | None = None  # Dask worker address
        self.dask_name: Any = None  # survives Nanny restarts
        self.nanny: str | None = None
        self.host = ""
        # starting, ready, stopping, waiting (for a replacement), failing (not reported yet),
        # failed, ended
        self.state = "new"
        self.queue: deque[int] = deque()  # submitted task ids, oldest (running) first
        self.tasks: dict[int, Task] = {}
        self.futures: dict[int, Any] = {}  # task id -> Future
        self.control: Any = None  # the init or stop Future
        self.stop_error: str | None = None
        self.since = 0.0
        self.waiting_since = 0.0
        self.killed = False
        self.replaced = False
        self.generation = 0


class DaskBackend(QueueingBackend[_Slot]):
    """mlpipe workers in the processes of a Dask cluster (see the module docstring).

    ``address``: a scheduler (``tcp://host:port``); default ``$MLPIPE_DASK_SCHEDULER``,
    else a LocalCluster started and closed by the backend. ``connect_timeout``:
    seconds to reach the scheduler; ``wait_for_workers``: seconds an external
    cluster gets to have one Dask worker per mlpipe worker before the step starts
    on those it has.
    """

    name = "dask"
    queued_seconds = 0.1
    max_depth = 16

    def __init__(self, address: str | None = None, *,
                 connect_timeout: float = CONNECT_TIMEOUT_SECONDS,
                 wait_for_workers: float = WAIT_FOR_WORKERS_SECONDS) -> None:
        try:
            import distributed  # noqa: F401, PLC0415
        except ImportError as error:
            raise BackendError(f"the dask backend needs dask.distributed, which is not installed "
                               f"({error}); install it with: {INSTALL_HINT}") from None
        self.address = address
        self.connect_timeout = connect_timeout
        self.wait_for_workers = wait_for_workers
        super().__init__()
        self._session: ClusterSession | None = None
        self._client: Any = None  # the session's client, once connected
        self._run_id = uuid.uuid4().hex[:8]
        self._by_address: dict[str, _Slot] = {}
        # future key -> (slot, kind, task id)
        self._by_key: dict[str, tuple[_Slot, str, int | None]] = {}
        self._spares: list[str] = []  # Dask workers no mlpipe worker uses
        self._inbox: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._completed: set[str] = set()  # keys whose task ended (callback thread adds)
        self._fetching: set[str] = set()  # keys whose result is being fetched
        self._fetched: dict[str, Any] = {}  # key -> result fetched, not yet handled
        self._ready_events: list[BackendEvent] = []
        self._restarts: list[threading.Thread] = []
        self._closed = False
        self._log_route = DaskLogRoute()  # Dask's logs to master_role.txt while the step runs

    # -- lifecycle ---------------------------------------------------------------------
    def start(self, workers: Sequence[WorkerInfo], config: WorkerConfig) -> None:
        self._config = config
        self._log_route = DaskLogRoute(tuple(Tagged(h) for h in self.logger.handlers)).open()
        self._slots = [_Slot(info, f"{self._run_id}/{info.node_name}/{info.process}")
                       for info in workers]
        session = self._session = ClusterSession(self.address, self.connect_timeout,
                                                 self.wait_for_workers, self.logger)
        try:
            available = session.connect(len(workers), self._on_cluster_event)
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
        claimed = [(address, meta) for address, meta in available
                   if session.holds(address)][:len(self._slots)]
        for slot, (address, meta) in zip(self._slots, claimed, strict=False):  # maybe fewer
            self._assign(slot, address, meta)
            self._spawn(slot)
        self._spares = [address for address, _ in available if address not in self._by_address]
        missing = self._slots[len(claimed):]
        if missing:
            free = plural(len(claimed), "free worker process")
            message = (f"the Dask cluster has {free} and each "
                       f"mlpipe worker needs its own ({len(self._slots)} wanted: instance_count x "
                       f"max_concurrency_per_instance); start more Dask workers or ask for fewer")
            self.logger.warning("%s; %s will not start.", message,
                                plural(len(missing), "mlpipe worker"))
            for slot in missing:
                self._fail_later(slot, message)

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
        slot.futures.clear()
        slot.stop_error = None
        future = self._submit(start_worker, slot, "init", None, slot.key, self._config, slot.info)
        slot.control = future

    def _submit(self, function: Any, slot: _Slot, kind: str, task_id: int | None,
                *args: Any) -> Any:
        suffix = f"{task_id:09d}" if task_id is not None else \
            f"{slot.info.node_name}-{slot.info.process}"
        key = f"mlpipe-{kind}-{self._run_id}-{slot.generation}-{suffix}"
        future = self._client.submit(function, *args, key=key, workers=[slot.address],
                                     allow_other_workers=False, retries=0)
        self._by_key[key] = (slot, kind, task_id)
        future.add_done_callback(self._on_done)
        return future

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

    def _stop_slot(self, slot: _Slot) -> None:
        queued = list(slot.queue)[1:]
        if queued:
            for task_id in queued:
                self._release(slot, task_id)
                slot.queue.remove(task_id)
            self._ready_events.append(TasksReturned(slot.info, tuple(queued)))
        slot.state = "stopping"
        slot.control = self._submit(stop_worker, slot, "stop", None, slot.key)

    def active_workers(self) -> int:
        return sum(slot.state in ("starting", "ready", "stopping", "waiting", "failing")
                   for slot in self._slots)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for thread in self._restarts:
            thread.join(timeout=RESTART_TIMEOUT_SECONDS)
        if self._session is not None:
            self._session.close()
        self._log_route.close()
        self._by_key.clear()
        for slot in self._slots:
            slot.futures.clear()
            slot.control = None

    # -- tasks -------------------------------------------------------------------------
    def submit(self, tasks: Sequence[Task]) -> None:
        for slot, task in self._queue(tasks):
            slot.tasks[task.task_id] = task
            slot.futures[task.task_id] = self._submit(run_task, slot, "run", task.task_id,
                                                      slot.key, task)

    def kill(self, worker: WorkerInfo) -> None:
        slot = self._slot(worker)
        if slot.address is None or slot.killed \
                or slot.state not in ("starting", "ready", "stopping"):
            return
        slot.killed = True
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
        self._replace_lost(out)
        out.extend(self._ready_events)
        self._ready_events = []
        return out

    def _finished(self, futures: list[Any], removed: set[str], out: list[BackendEvent]) -> None:
        runs: list[tuple[Any, tuple[_Slot, str, int | None]]] = []
        controls: list[tuple[Any, tuple[_Slot, str, int | None]]] = []
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
        for future, (slot, _, task_id) in runs:
            assert task_id is not None
            if not _settled(future, results):
                continue  # not fetched, or lost since: the worker's removal or the timeout decides
            self._by_key.pop(future.key, None)
            self._completed.discard(future.key)
            slot.futures.pop(task_id, None)
            task = slot.tasks.pop(task_id, None)
            result = results.get(future.key)
            if not isinstance(result, TaskResult):
                result = _system_failure(task, task_id, future)
            self._task_finished(slot, result, out)
            if slot.state == "stopping" and not slot.queue and slot.control is None:
                self._stopped(slot, out)
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
                    self._stopped(slot, out)

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
        if isinstance(value, tuple) and value and value[0] == "init_failed":
            message, text = value[1], value[2]
        else:
            message = f"the Dask task that starts the worker failed: {_future_error(value)}"
            text = message + "\n"
        slot.state = "failed"
        out.append(WorkerInitFailed(slot.info, message, text))

    def _stopped(self, slot: _Slot, out: list[BackendEvent]) -> None:
        slot.state = "ended"
        out.append(WorkerStopped(slot.info, slot.stop_error))

    def _worker_removed(self, address: str, processing: set[str] | None,
                        out: list[BackendEvent]) -> None:
        self._spares = [a for a in self._spares if a != address]
        slot = self._by_address.pop(address, None)
        if slot is None or slot.address != address or slot.state in ("failed", "ended", "waiting"):
            return
        reason = _lost_reason(slot, address)
        was = slot.state
        lost = self._running_when_lost(slot, processing)
        since = slot.since if slot.queue and slot.queue[0] == lost else None
        rest = tuple(task_id for task_id in slot.queue if task_id != lost)
        for task_id in list(slot.futures):
            self._release(slot, task_id)
        if slot.control is not None:
            self._by_key.pop(slot.control.key, None)
            _release_future(slot.control)
            slot.control = None
        slot.queue.clear()
        slot.tasks.clear()
        slot.address = None
        if self._worker_lost(slot, was, reason, lost, since, rest, out):
            slot.state = "waiting"  # for a replacement process (_replace_lost)
            slot.waiting_since = time.monotonic()

    def _running_when_lost(self, slot: _Slot, processing: set[str] | None) -> int | None:
        """The task a lost worker was running: its marker file says, else the scheduler.

        Tasks that finished but whose results died with the worker are not it: they
        are returned (run again, no attempt charged).
        """
        assert self._config is not None
        marker = read_task_marker(task_marker(self._config, slot.info))
        if marker is not None:
            task_id, state = marker
            return task_id if state == "R" and task_id in slot.queue else None
        # no shared folder: the first task the scheduler still had as processing there
        if processing is None:
            processing = {future.key for future in slot.futures.values()
                          if future.key not in self._completed}
        unfinished = [task_id for task_id in slot.queue
                      if getattr(slot.futures.get(task_id), "key", None) in processing]
        return unfinished[0] if unfinished else None

    def _replace_lost(self, out: list[BackendEvent]) -> None:
        waiting = [slot for slot in self._slots if slot.state == "waiting"]
        if not waiting:
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
            choice = _pick_spare(slot, self._spares, meta)
            while choice is not None and not session.holds(choice) and not session.claim(choice):
                self._spares.remove(choice)
                choice = _pick_spare(slot, self._spares, meta)
            if choice is not None:
                self._spares.remove(choice)
                self._assign(slot, choice, meta.get(choice, {}))
                self._spawn(slot)
            elif now - slot.waiting_since > REPLACEMENT_TIMEOUT_SECONDS:
                slot.state = "failed"
                message = (f"no Dask worker replaced {slot.info.node_name}/{slot.info.process} "
                           f"within {REPLACEMENT_TIMEOUT_SECONDS:g} s (workers without a Nanny "
                           f"are not restarted)")
                out.append(WorkerInitFailed(slot.info, message, message + "\n"))

    def _release(self, slot: _Slot, task_id: int) -> None:
        future = slot.futures.pop(task_id, None)
        slot.tasks.pop(task_id, None)
        if future is not None:
            self._by_key.pop(future.key, None)
            self._completed.discard(future.key)
            self._fetched.pop(future.key, None)
            _release_future(future)


def _pick_spare(slot: _Slot, spares: list[str], meta: dict[str, Any]) -> str | None:
    """The lost worker's own restarted process (same name) first, then one on its host, then any."""
    for address in spares:
        if slot.dask_name is not None and meta.get(address, {}).get("name") == slot.dask_name:
            return address
    for address in spares:
        if host_of(address) == slot.host:
            return address
    return spares[0] if spares else None


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


def _lost_reason(slot: _Slot, address: str) -> str:
    who = (f"worker {slot.info.node_name}/{slot.info.process} (pid {slot.info.pid}, "
           f"Dask worker {address})")
    if slot.killed:
        return f"{who} was stopped by mlpipe"
    return f"{who} died or left the Dask cluster"


__all__ = ["DaskBackend", "SCHEDULER_ENV"]
