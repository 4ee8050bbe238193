"""The driver: owns the queue, attempts, timeouts, thresholds and finished mini-batches.

It pulls mini-batch descriptors lazily from the data layer, hands tasks to a
:class:`~mlpipe.runtime.backends.base.Backend`, turns what the backend reports
into :class:`~mlpipe.runtime.records.AttemptRecord` for the observers, retries
failed attempts, kills a worker whose run() overruns ``retry_settings.timeout``
or whose loading / result handling overruns ``--task_overhead_timeout``, fails a
step without progress for ``--progress_update_timeout``, stops on a threshold or
on cancel, and records every finished mini-batch in the
:class:`~mlpipe.runtime.journal.Journal`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timezone
from typing import Any

from mlpipe.data.minibatch import MiniBatch
from mlpipe.plan import ParallelStep
from mlpipe.runtime.backends.base import (
    Backend,
    BackendEvent,
    BackendFailed,
    TaskDone,
    TaskLost,
    TasksReturned,
    WorkerInitFailed,
    WorkerLost,
    WorkerStarted,
    WorkerStopped,
)
from mlpipe.runtime.concurrency import START_BARRIER_SECONDS
from mlpipe.runtime.error_groups import ErrorGroups
from mlpipe.runtime.error_keys import Signature
from mlpipe.runtime.faults import describe_fault
from mlpipe.runtime.input_count import InputCounter, settle_totals
from mlpipe.runtime.journal import Finished, Journal
from mlpipe.runtime.records import (
    AttemptRecord,
    StepObserver,
    StepSummary,
    WorkerInfo,
    takes_batches,
)
from mlpipe.runtime.step_logs import StepLogs, attempt_header, init_failure_header
from mlpipe.runtime.tasks import Task, TaskResult
from mlpipe.runtime.thresholds import Thresholds, describe
from mlpipe.runtime.timeouts import (
    Overrun,
    attempt_deadline,
    overrun,
    progress_text,
    progress_update_timeout,
)
from mlpipe.runtime.worker import WorkerConfig

TIMEOUT_CHECK_SECONDS = 0.05
IDLE_WAIT_SECONDS = 0.2
SHUTDOWN_GRACE_SECONDS = 5.0
SCHEDULED_NOTICE_SECONDS = 0.5
# one of each per attempt: from a tuple of every field (a named tuple's own __new__ costs more)
_attempt_record = AttemptRecord._make
_finished = Finished._make
# what a mini-batch awaiting its retry failed with: (its last error, every error it hit)
Retry = tuple[Signature, frozenset[Signature]]


class Driver:
    """Runs one parallel step's mini-batches on a backend; :meth:`run` returns the summary."""

    def __init__(self, step: ParallelStep, backend: Backend, workers: Sequence[WorkerInfo],
                 config: WorkerConfig, mini_batches: Iterable[MiniBatch], store: Journal, *,
                 observers: Sequence[StepObserver] = (), cancel: threading.Event | None = None,
                 logger: logging.Logger | None = None,
                 data_errors: tuple[type[BaseException], ...] = (),
                 counter: InputCounter | None = None):
        self.step = step
        self.backend = backend
        self.workers = list(workers)
        self.config = config
        self.mini_batches: Iterator[MiniBatch] = iter(mini_batches)
        self.store = store
        self.observers = list(observers)
        # told of every attempt: those that do something with it, a batch at a time when
        # they take batches (attempts_finished), else one call per attempt
        self._batch_observers = [observer for observer in self.observers
                                 if takes_batches(observer)]
        self._attempt_observers = [observer for observer in self.observers
                                   if observer not in self._batch_observers
                                   and _overrides(observer, "attempt_finished")]
        self._untold: list[AttemptRecord] = []  # successful attempts the observers await
        self.cancel = cancel
        self.log = logger or logging.getLogger("mlpipe.runtime")
        self.data_errors = data_errors
        self.listing_errors: tuple[type[BaseException], ...] = (*data_errors, OSError)
        self.thresholds = Thresholds.of(step)
        self.max_retries = step.retry.max_retries
        self.timeout = float(step.retry.timeout)
        self.overhead = float(step.prs.task_overhead_timeout)
        self.quiet_limit = min(self.timeout, self.overhead)  # below it no attempt can overrun
        self.progress_limit = progress_update_timeout(step)[0]

        self.counter = counter  # the counting pass (started with the step)
        self._counted = False  # its total was told to the observers
        self.listed = 0  # mini-batches listed so far (the journal keeps their order)
        self.listing_complete = False  # the listing reached the input's end
        self.reusable = 0  # mini-batches an earlier run finished (a resume reuses them)
        # (mini-batch, picked count, what its failed attempts hit: None before one failed)
        self.pending: deque[tuple[MiniBatch, int, Retry | None]] = deque()  # to send
        self.inflight: dict[int, tuple[MiniBatch, int, Retry | None]] = {}
        self.timed_out: dict[int, tuple[Overrun, float]] = {}  # task id -> (why, since)
        # workers stopped by a cancel: what they held is not finished, and no attempt
        self.canceled: set[tuple[int, str]] = set()
        self._next_deadline = float("inf")
        self._last_progress = 0.0
        # item counts learnt from attempts of mini-batches not finished yet (tabular batches)
        self.items_seen: dict[str, int] = {}
        self._unflushed: list[tuple[int, int, int, bool]] = []  # counts committed, not written
        self.next_task_id = 0
        self.all_scheduled = False
        self.stopping = False
        self.init_failures: list[WorkerInitFailed] = []
        self.summary = StepSummary(status="Completed")
        self.errors: ErrorGroups = self.summary.errors  # every failure, by signature
        self._last_notice = 0.0
        self._starting = len(self.workers)  # workers whose first start has not ended yet
        self._started: set[tuple[int, str]] = set()
        self._first_ready = 0.0

    # -- main loop ---------------------------------------------------------------------
    def run(self, started_at: datetime | None = None) -> StepSummary:
        """Run every mini-batch (or until a threshold, an error or cancel) and never raise:
        a fault of the driver itself (an I/O error, a broken backend) ends the step
        ``Failed`` with that fault as its reason; finished mini-batches stay committed.
        ``started_at``: when the step began (its set-up before the driver counts), else now."""
        summary = self.summary
        summary.started_at = started_at or _now()
        try:
            self.log.info("Starting %d workers (%d nodes x %d processes) on the %s backend.",
                          len(self.workers), self.step.instance_count,
                          len(self.workers) // max(1, self.step.instance_count),
                          self.backend.name)
            self._notify("errors_kept", self.errors)
            self._notify("step_started", self.step, self.workers, summary.started_at)
            self.reusable = self.store.reusable()  # a resume's done work, known before listing
            if self.reusable:
                self._notify("mini_batches_reused", self.reusable)
            if self.counter is not None:
                self.counter.start()
            if not self.stopping:
                self.backend.logger = self.log
                self.backend.start(self.workers, self.config)
                self._loop()
                self._finish_workers()
        except Exception as error:  # noqa: BLE001 - the step ends with the fault as its reason
            self._fault(error)
        finally:
            self.backend.close()
        try:
            self._tell_attempts()
            self._flush()
        except Exception as error:  # noqa: BLE001 - the step ends with the fault as its reason
            self._fault(error)
        self._unretried()
        count = None
        if self.counter is not None:  # waited for only when the listing stopped early
            count = self.counter.count if self.listing_complete else self.counter.result()
        settle_totals(summary, self.listed, self.listing_complete, count)
        if summary.breach is not None:  # said with the step's final counts, as every report
            stopped_it = summary.reason == describe(summary.breach)
            summary.breach = self.thresholds.final(summary.breach, summary)
            if stopped_it:  # not a fault that came after it
                summary.reason = describe(summary.breach)
        summary.ended_at = _now()
        return summary

    def _loop(self) -> None:
        last_timeout_check = 0.0
        began = time.monotonic()
        first_task_limit = float(self.step.prs.first_task_creation_timeout)
        while True:
            if not self._first_ready and not self.stopping \
                    and time.monotonic() - began > first_task_limit:
                self._stop("Failed", "No worker finished init() within "
                                     f"--first_task_creation_timeout = {first_task_limit:g} "
                                     "seconds, so no mini-batch could start.")
            if not self.stopping and self.cancel is not None and self.cancel.is_set():
                self._stop("Canceled", "The job was canceled.")
            if not self.stopping:
                self._schedule()
            if not self._counted:
                self._tell_count()
            if self._done():
                return
            now = time.monotonic()
            self._handle_all(self.backend.events(self._wait_seconds(now)))
            now = time.monotonic()
            if now - last_timeout_check >= TIMEOUT_CHECK_SECONDS:
                last_timeout_check = now
                self._enforce_timeouts(now)
                self._check_progress(now)

    def _done(self) -> bool:
        if self.stopping:
            return not self.inflight or self.backend.active_workers() == 0
        if self.all_scheduled and not self.pending and not self.inflight:
            return True
        if self.backend.active_workers() == 0:
            self._no_workers_left()
            return True
        return False

    def _wait_seconds(self, now: float) -> float:
        return min(IDLE_WAIT_SECONDS, max(0.0, self._next_deadline - now) + 0.01)

    # -- scheduling --------------------------------------------------------------------
    def _schedule(self) -> None:
        if self._starting > 0 and (not self._first_ready or
                                   time.monotonic() - self._first_ready < START_BARRIER_SECONDS):
            return  # all workers begin together (bounded): no early worker hoarding the queue
        free = self.backend.free_slots()
        if free <= 0:
            return
        tasks: list[Task] = []
        inflight = self.inflight
        listed = self.listed
        while free > 0:
            if self.pending:
                entry = self.pending.popleft()
                mini_batch, picked = entry[0], entry[1]
            elif self.all_scheduled:
                break
            else:
                new = self._next_mini_batch()
                if new is None:
                    break
                mini_batch, picked = new, 1
                entry = (new, 1, None)
            task_id = self.next_task_id
            self.next_task_id += 1
            inflight[task_id] = entry
            tasks.append(Task(task_id, mini_batch, picked))
            free -= 1
        if self.listed != listed and not self.all_scheduled:
            self._notice_scheduled()
        if tasks and self.stopping:  # the input's end crossed a threshold (or failed) meanwhile
            for task in tasks:
                entry = inflight.pop(task.task_id)
                if entry[2] is not None:  # a retry: its failure counts at the end
                    self.pending.append(entry)
            return
        if tasks:
            self.backend.submit(tasks)

    def _next_mini_batch(self) -> MiniBatch | None:
        while True:
            try:
                mini_batch = next(self.mini_batches)
            except StopIteration:
                self.all_scheduled = self.listing_complete = True
                self._notice_scheduled(force=True)
                self.log.info("All %d mini-batches are scheduled.", self.listed)
                self._check_thresholds()
                return None
            except self.listing_errors as error:
                # the listing ends here; what it listed still runs and keeps its rows
                self.all_scheduled = True
                reason = describe_fault(error) if isinstance(error, OSError) else str(error)
                self.log.error("The input data cannot be read: %s", reason)
                self.log.info("Failing the step once the %d listed mini-batch(es) are done.",
                              self.listed)
                self.summary.status = "Failed"
                self.summary.reason = reason
                return None
            self.listed += 1
            done = self.store.reuse(mini_batch.id, mini_batch.index)
            if done is None:
                return mini_batch
            self.summary.mini_batches_reused += 1
            self._count_finished(done.total, done.succeeded, done.failed, failed=False)
            self._notice_scheduled()  # a resume may skip many in a row: keep telling

    def _tell_count(self) -> None:
        """Tell the observers the counting pass's total, once it is there (from this thread:
        they are never called from another)."""
        count = self.counter.count if self.counter is not None else None
        if count is not None:
            self._counted = True
            self._notify("mini_batches_counted", count.mini_batches)

    def _notice_scheduled(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last_notice >= SCHEDULED_NOTICE_SECONDS:
            self._last_notice = now
            self._notify("mini_batches_scheduled", self.listed, self.all_scheduled)
            reused = self.summary.mini_batches_reused
            if not self.listing_complete:  # those the listing has not reached yet count too
                reused = max(reused, self.reusable)
            if reused:  # resume
                self._notify("mini_batches_reused", reused)

    # -- events ------------------------------------------------------------------------
    def _handle_all(self, events: list[BackendEvent]) -> None:
        """Handle a batch of events, tell the observers of the attempts they ended, then
        write the mini-batches they finished to the journal in one go."""
        if not events:
            return
        inflight, canceled = self.inflight, self.canceled
        for event in events:
            if type(event) is TaskDone and not canceled:  # after a cancel: _handle decides
                entry = inflight.pop(event.result.task_id, None)
                if entry is not None:
                    self._attempt_finished(entry, event.worker, event.result)
            else:
                self._tell_attempts()  # the observers hear of events in the order they came
                self._handle(event)
        self._tell_attempts()
        self._flush()

    def _tell_attempts(self) -> None:
        """Tell the observers of the successful attempts gathered so far: one call per
        batch to those that take batches, one per attempt to the others."""
        if not self._untold:
            return
        records, self._untold = self._untold, []
        for observer in self._batch_observers:
            try:
                observer.attempts_finished(records)
            except Exception as error:  # noqa: BLE001 - reported as the step's failure
                self._observer_failed(observer, "attempts_finished", error)
        for observer in self._attempt_observers:
            for record in records:
                try:
                    observer.attempt_finished(record)
                except Exception as error:  # noqa: BLE001 - reported as the step's failure
                    self._observer_failed(observer, "attempt_finished", error)

    def _flush(self) -> None:
        """Write the gathered finished mini-batches to the journal; when that fails they are
        not finished (they run again on resume): their counts are taken back."""
        if not self._unflushed:
            return
        unflushed, self._unflushed = self._unflushed, []
        try:
            self.store.flush()
        except BaseException:
            s = self.summary
            for total, succeeded, failed_items, failed in unflushed:
                s.mini_batches_failed -= failed
                s.mini_batches_succeeded -= not failed
                s.items_total -= total
                s.items_succeeded -= succeeded
                s.items_failed -= failed_items
            raise

    def _handle(self, event: BackendEvent) -> None:
        if isinstance(event, TaskDone):
            entry = self.inflight.pop(event.result.task_id, None)
            stopped = (event.worker.node, event.worker.process) in self.canceled \
                and event.result.status != "Succeeded"
            if entry is not None and not stopped:  # a run() stopped by cancel is no attempt
                self._attempt_finished(entry, event.worker, event.result)
            elif entry is not None and entry[2] is not None:  # its failed attempt was the last
                self.pending.append(entry)
        elif isinstance(event, TaskLost):
            entry = self.inflight.pop(event.task_id, None)
            if entry is not None and (event.worker.node, event.worker.process) not in self.canceled:
                self._attempt_lost(entry, event)
            elif entry is not None and entry[2] is not None:  # stopped by the cancel: as above
                self.pending.append(entry)
        elif isinstance(event, TasksReturned):
            for task_id in reversed(event.task_ids):
                entry = self.inflight.pop(task_id, None)
                if entry is not None and (not self.stopping or entry[2] is not None):
                    self.pending.appendleft(entry)  # stopping: a failed one's failure counts
        elif isinstance(event, WorkerStarted):
            self._first_start_ended(event.worker, ready=True)
            kind = "replaced" if event.replaced else "started"
            self.log.info("Worker %s/%s (pid %s) %s: init() done.", event.worker.node_name,
                          event.worker.process, event.worker.pid, kind)
            self._notify("worker_event", event.worker, kind, f"pid {event.worker.pid}")
        elif isinstance(event, WorkerInitFailed):
            self._first_start_ended(event.worker, ready=False)
            self.init_failures.append(event)
            ran = event.stage == "init"  # init() ran and raised, else the worker never started
            self.errors.add("InitError" if ran else "StartError", event.message, event.traceback,
                            where=StepLogs.error_file(event.worker),
                            first=init_failure_header(event.worker, ran=ran), seen=None)
            self.log.error("Worker %s/%s could not start: %s\n%s", event.worker.node_name,
                           event.worker.process, event.message, event.traceback)
            self._notify("worker_event", event.worker,
                         "init_failed" if event.stage == "init" else "start_failed",
                         f"{event.message}\n{event.traceback}")
        elif isinstance(event, WorkerLost):
            if (event.worker.node, event.worker.process) in self.canceled:
                # stopped because the job was canceled: said as the cancel, not as a death
                self.log.info("%s: the job was canceled.", event.message)
                self._notify("worker_event", event.worker, "stopped", "the job was canceled")
                return
            self.log.warning("%s; %s.", event.message,
                             "it is stopped" if self.stopping else "starting a replacement")
            self._notify("worker_event", event.worker, "died", event.message)
        elif isinstance(event, BackendFailed):
            self.log.error("%s", event.message)
            self._stop("Failed", event.message)
        elif isinstance(event, WorkerStopped):
            if event.shutdown_error:
                self.log.error("shutdown() raised in worker %s/%s:\n%s", event.worker.node_name,
                               event.worker.process, event.shutdown_error)
            self._notify("worker_event", event.worker, "stopped", event.shutdown_error or "")

    def _first_start_ended(self, worker: WorkerInfo, *, ready: bool) -> None:
        key = (worker.node, worker.process)
        if key not in self._started:
            self._started.add(key)
            self._starting -= 1
        if ready and not self._first_ready:
            self._first_ready = time.monotonic()
        if ready:
            self._last_progress = time.monotonic()

    def _attempt_lost(self, entry: tuple[MiniBatch, int, Retry | None], event: TaskLost) -> None:
        mini_batch = entry[0]
        since = event.since
        timed_out = self.timed_out.pop(event.task_id, None)
        if timed_out is not None:
            (category, message), since = timed_out
            status = "Timeout"
        else:
            status, category, message = "ProcessDied", "ProcessDied", event.message
        seen = self.items_seen.get(mini_batch.id)
        total = seen if seen is not None else self._planned_items(mini_batch)
        now = time.monotonic()
        elapsed = max(0.0, now - since) if since is not None else 0.0
        run_seconds, phase = 0.0, None
        if since is not None:
            phase = self.backend.task_phase(event.task_id, event.worker)
            if phase is not None and phase.stage == "run":
                run_seconds = max(0.0, elapsed - phase.load_seconds)
            elif phase is not None and phase.stage == "result":
                run_seconds = phase.run_seconds
        result = TaskResult(event.task_id, status, total, 0, total, time.time() - elapsed,
                            elapsed, 0.0, run_seconds, category, message,
                            load_seconds=phase.load_seconds if phase is not None else 0.0)
        self._attempt_finished(entry, event.worker, result)

    def _planned_items(self, mini_batch: MiniBatch) -> int:
        """The items a mini-batch stands for when no attempt loaded it (its files, the rows
        of its byte ranges): a lost attempt fails them all, never zero."""
        if mini_batch.items is not None:
            return mini_batch.items
        from mlpipe.data import item_count  # noqa: PLC0415 - tabular counting on demand

        return item_count(mini_batch)

    def _attempt_finished(self, entry: tuple[MiniBatch, int, Retry | None], worker: WorkerInfo,
                          result: TaskResult) -> None:
        self._last_progress = time.monotonic()
        mini_batch, picked, retry = entry
        (_, status, total, succeeded, failed_items, start_time, elapsed, process_seconds,
         run_seconds, category, message, traceback, rows, header, warning, _,
         load_seconds, run_delay) = result
        failed_attempt = status != "Succeeded"
        final = not failed_attempt or self.stopping or picked > self.max_retries
        if mini_batch.items is None:
            if final:
                self.items_seen.pop(mini_batch.id, None)
            elif total:
                self.items_seen[mini_batch.id] = total
        record = _attempt_record((
            mini_batch.id, mini_batch.index, picked, worker,
            datetime.fromtimestamp(start_time, timezone.utc), total, succeeded, failed_items,
            elapsed, process_seconds, run_seconds, status, category, message, traceback,
            mini_batch.detail, final, load_seconds, mini_batch.size_bytes, run_delay,
        ))
        if failed_attempt or warning:  # logged and told as it happens, after the attempts
            self._tell_attempts()      # that ended before it
            if warning:
                self.log.warning("Mini-batch %s: %s", mini_batch.id, warning)
            if failed_attempt:
                self.log.warning("Mini-batch %s (attempt %d) on %s/%s: %s: %s%s", mini_batch.id,
                                 picked, worker.node_name, worker.process, status, message,
                                 "" if final else "; it will be retried")
            self._untold.append(record)
            self._tell_attempts()
        else:  # told with the others of its batch (_handle_all)
            self._untold.append(record)
        if failed_attempt:  # every failed attempt, under its signature
            seen = retry[1] if retry is not None else frozenset()
            key = self.errors.add_attempt(record, where=StepLogs.error_file(worker),
                                          first=attempt_header(record), seen=seen)
            if not final:
                self.pending.append((mini_batch, picked + 1, (key, seen | {key})))
                return
        self.store.commit(_finished((mini_batch.id, mini_batch.index, status, total, succeeded,
                                     failed_items, header)), rows)
        self._unflushed.append((total, succeeded, failed_items, failed_attempt))
        self._count_finished(total, succeeded, failed_items, failed=failed_attempt)
        if failed_attempt and self.summary.failed_example is None:
            self.summary.failed_example = mini_batch.id
        if failed_attempt and not self.stopping:
            self._check_thresholds()

    def _unretried(self) -> None:
        """The mini-batches whose retry the step's end dropped (a threshold, a cancel, no
        worker left): their last attempt failed, so they failed, with that error."""
        s = self.summary
        for mini_batch, _picked, retry in [*self.pending, *self.inflight.values()]:
            if retry is None:
                continue  # never tried (or returned untried): not processed
            total = self.items_seen.pop(mini_batch.id, None)
            if total is None:
                total = mini_batch.items if mini_batch.items is not None else 0
            s.mini_batches_failed += 1
            s.items_total += total
            s.items_failed += total
            self.errors.fail(retry[0])
            if s.failed_example is None:
                s.failed_example = mini_batch.id
        self.pending.clear()
        self.inflight.clear()

    def _count_finished(self, total: int, succeeded: int, failed_items: int, *,
                        failed: bool) -> None:
        s = self.summary
        if failed:
            s.mini_batches_failed += 1
        else:
            s.mini_batches_succeeded += 1
        s.items_total += total
        s.items_succeeded += succeeded
        s.items_failed += failed_items

    def _check_thresholds(self) -> None:
        s = self.summary
        breach = self.thresholds.check(s.mini_batches_failed, s.items_failed, self.listed,
                                       self.all_scheduled)
        if breach is not None and not self.stopping:
            s.breach = breach
            self._stop("Failed", describe(breach))

    # -- timeouts, stopping ------------------------------------------------------------
    def _enforce_timeouts(self, now: float) -> None:
        """Kill the worker of each attempt past its deadline; note the next deadline.

        Attempts younger than ``min(timeout, task_overhead_timeout)`` cannot have
        overrun anything, so only older ones cost a look at their phase.
        """
        next_deadline = float("inf")
        for task_id, worker, since in self.backend.running():
            if task_id in self.timed_out:
                continue
            if now - since <= self.quiet_limit:
                next_deadline = min(next_deadline, since + self.quiet_limit)
                continue
            deadline, stage = attempt_deadline(since, self.backend.task_phase(task_id, worker),
                                               self.timeout, self.overhead)
            if now <= deadline:
                next_deadline = min(next_deadline, deadline)
                continue
            why = overrun(stage, self.timeout, self.overhead, self.backend.kill_effect)
            self.timed_out[task_id] = (why, since)
            entry = self.inflight.get(task_id)
            self.log.warning("Mini-batch %s on %s/%s: %s Killing that worker.",
                             entry[0].id if entry else task_id, worker.node_name,
                             worker.process, why.message.split(";")[0] + ".")
            self.backend.kill(worker)
        self._next_deadline = next_deadline

    def _check_progress(self, now: float) -> None:
        """Fail the step when nothing progressed for ``--progress_update_timeout`` seconds."""
        if self.stopping or not self._last_progress or not (self.inflight or self.pending):
            return
        quiet = now - self._last_progress
        if quiet <= self.progress_limit:
            return
        reason = (f"No progress for {quiet:.1f} seconds, more than --progress_update_timeout = "
                  f"{progress_text(self.step)}: no mini-batch attempt ended while "
                  f"{len(self.inflight)} were on workers and {len(self.pending)} waiting.")
        for task_id, worker, since in self.backend.running():
            if task_id not in self.timed_out:
                self.timed_out[task_id] = (Overrun("ProgressTimeout", reason), since)
                self.backend.kill(worker)
        self._stop("Failed", reason)

    def _stop(self, status: str, reason: str) -> None:
        if self.stopping:
            return
        self.stopping = True
        self.summary.status = status  # type: ignore[assignment]
        self.summary.reason = reason
        self.log.info("Stopping the step (%s): %s", status, reason)
        self._drop_pending()
        self.backend.stop()
        if status == "Canceled":  # a canceled job stops now, as in Azure: no run() is awaited
            for _task_id, worker, _since in list(self.backend.running()):
                key = (worker.node, worker.process)
                if key in self.canceled:
                    continue
                self.canceled.add(key)
                self.log.info("Stopping worker %s/%s: its run() is not finished.",
                              worker.node_name, worker.process)
                self.backend.kill(worker)

    def _drop_pending(self) -> None:
        """Nothing waiting is sent any more; the mini-batches awaiting a retry stay, to be
        counted as failed at the end (:meth:`_unretried`)."""
        self.pending = deque(entry for entry in self.pending if entry[2] is not None)

    def _fault(self, error: BaseException) -> None:
        """End the step ``Failed`` because the driver's own machinery raised ``error``."""
        reason = describe_fault(error)
        self.summary.status = "Failed"
        self.summary.reason = reason
        self.stopping = True
        self._drop_pending()
        self.log.exception("The step stopped on a fault of the driver: %s", reason)

    def _no_workers_left(self) -> None:
        if self.init_failures:
            first = self.init_failures[-1]
            ran = first.stage == "init"  # "init() failed" only when init() ran and raised
            what = ("The entry script's init() failed and no worker could start" if ran
                    else "No worker could start")
            reason = f"{what}: {first.message}\n{first.traceback.rstrip()}".rstrip()
        else:
            reason = "No worker process is left to run the remaining mini-batches."
        self.summary.status = "Failed"
        self.summary.reason = reason
        self.log.error(reason)

    def _finish_workers(self) -> None:
        """Let workers finish their attempt, call shutdown() and end; kill what overruns.

        Attempts still running are bounded by their own deadlines; shutdown() gets
        ``retry_settings.timeout`` + a grace period after the last of them ended.
        """
        if not self.stopping:
            self.stopping = True
            self.backend.stop()
        allowance = self.timeout + SHUTDOWN_GRACE_SECONDS
        deadline = time.monotonic() + allowance
        while self.backend.active_workers() and time.monotonic() < deadline:
            self._handle_all(self.backend.events(0.1))
            now = time.monotonic()
            self._enforce_timeouts(now)
            if self.backend.running():
                deadline = max(deadline, now + allowance)
        if self.backend.active_workers():
            self.log.warning("Workers still running %gs after their last attempt; killing them.",
                             allowance)

    def _notify(self, method: str, *args: Any) -> None:
        """Tell every observer (of the attempts they await first); one that raises fails the
        step (its reports would be wrong) while the attempts already running end and keep
        their rows."""
        self._tell_attempts()
        for observer in self.observers:
            try:
                getattr(observer, method)(*args)  # StepObserver has every method
            except Exception as error:  # noqa: BLE001 - reported as the step's failure
                self._observer_failed(observer, method, error)

    def _observer_failed(self, observer: StepObserver, method: str, error: Exception) -> None:
        where = f"{type(observer).__name__}.{method}"
        self.log.exception("Observer %s failed", where)  # logging never raises
        self._stop("Failed", f"{where} failed: {describe_fault(error)}")


def _overrides(observer: StepObserver, method: str) -> bool:
    """Does ``observer`` (a StepObserver or any object with its methods) define ``method``
    other than as StepObserver's no-op?"""
    bound = getattr(observer, method, None)
    return bound is not None and getattr(bound, "__func__", bound) is not getattr(StepObserver,
                                                                                   method)


def _now() -> datetime:
    return datetime.now(timezone.utc)


__all__ = ["Driver"]
