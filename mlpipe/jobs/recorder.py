"""The runner's writer of one job's record (``job.json``), and the observer that keeps a
parallel step's progress in it while the step runs."""

from __future__ import annotations

import errno
import threading
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mlpipe.jobs.atomic_json import write_json_atomic
from mlpipe.jobs.record import JobRecord, ProgressRecord, StepRecord, WorkerRecord
from mlpipe.jobs.store import JobStore
from mlpipe.jobs.timestamps import iso
from mlpipe.plan import ParallelStep
from mlpipe.runtime.records import AttemptRecord, StepObserver, StepSummary, WorkerInfo

RESERVE_FILE = ".space-reserve"
RESERVE_BYTES = 256 * 1024


class JobRecorder:
    """Thread-safe writer of one job's record; every change is written atomically.

    While the job runs, :meth:`reserve` keeps a small file of disk space next to the
    record: when the disk fills up, the record gives that space back to itself, so
    the job can still be recorded as failed (with the cause) instead of staying
    ``running``. :meth:`release` removes it when the job ends.
    """

    def __init__(self, store: JobStore, name: str, record: JobRecord):
        self.store = store
        self.name = name
        self.path = store.record_path(name)
        self.record = record
        self._lock = threading.RLock()
        self._reserve = self.path.with_name(RESERVE_FILE)

    def save(self) -> None:
        with self._lock:
            data = self.record.to_json()
            try:
                write_json_atomic(self.path, data)
            except OSError as error:
                if error.errno != errno.ENOSPC or not self.release():
                    raise
                write_json_atomic(self.path, data)

    def reserve(self) -> None:
        """Set :data:`RESERVE_BYTES` of disk aside for the record (best effort)."""
        try:
            with open(self._reserve, "wb") as handle:
                handle.write(b"\0" * RESERVE_BYTES)
        except OSError:
            self._reserve.unlink(missing_ok=True)

    def release(self) -> bool:
        """Give the reserved space back; ``True`` when there was some."""
        try:
            self._reserve.unlink()
        except OSError:
            return False
        return True

    def update(self, **fields: Any) -> None:
        """Set the job's ``fields`` (each validated as the record's type) and save."""
        with self._lock:
            for key, value in fields.items():
                setattr(self.record, key, value)
            self.save()

    def update_step(self, step: str, **fields: Any) -> None:
        """Set step ``step``'s ``fields`` (each validated as the record's type) and save."""
        with self._lock:
            entry = self.record.steps[step]
            for key, value in fields.items():
                setattr(entry, key, value)
            self.save()

    def step(self, step: str) -> StepRecord:
        """A copy of step ``step``'s record as it is now."""
        with self._lock:
            return self.record.steps[step].model_copy(deep=True)

    def snapshot(self) -> JobRecord:
        """A copy of the whole record as it is now."""
        with self._lock:
            return self.record.clone()


SAVE_INTERVAL_SECONDS = 0.5


class RecordObserver(StepObserver):
    """A :class:`~mlpipe.runtime.records.StepObserver` writing counts to ``job.json``.

    The step record gets ``progress`` (mini-batches known/finished/failed, items
    succeeded/failed; ``mini_batches_total`` once counted, ``mini_batches_reused`` on a
    resumed step) and ``workers`` (node, process, pid of every worker started),
    saved at most twice a second and once more at the end. A change that falls inside the
    interval is saved when it ends (a trailing save), so the record never lags behind a
    step that goes quiet (every running run() hung, say) by more than the interval.
    """

    def __init__(self, recorder: JobRecorder, step: str):
        self.recorder = recorder
        self.step = step
        self.progress = ProgressRecord(
            mini_batches_known=0, listing_done=False, mini_batches_done=0,
            mini_batches_failed=0, items_succeeded=0, items_failed=0)
        self.workers: list[WorkerRecord] = []
        self._last_save = 0.0
        self._trailing: threading.Timer | None = None  # the save at the interval's end
        self._ended = False
        self._lock = threading.Lock()  # the trailing save runs on a timer's thread
        self._saving = threading.Lock()

    def step_started(self, step: ParallelStep, workers: list[WorkerInfo], at: datetime) -> None:
        for worker in workers:
            self._add_worker(worker)
        self._save(force=True)

    def mini_batches_scheduled(self, count: int, done: bool) -> None:
        with self._lock:
            progress = self.progress
            progress.mini_batches_known = max(count, progress.finished)
            progress.listing_done = done
            if done:
                progress.mini_batches_total = progress.mini_batches_known
        self._save(force=done)

    def mini_batches_counted(self, total: int) -> None:
        with self._lock:
            if not self.progress.listing_done:
                self.progress.mini_batches_total = max(total, self.progress.mini_batches_known)
        self._save(force=True)

    def mini_batches_reused(self, count: int) -> None:
        with self._lock:
            progress = self.progress
            progress.mini_batches_reused = count
            progress.mini_batches_known = max(progress.mini_batches_known, progress.finished)

    def attempt_finished(self, record: AttemptRecord) -> None:
        self.attempts_finished((record,))

    def attempts_finished(self, records: Sequence[AttemptRecord]) -> None:
        """Count the mini-batches the attempts finished; saved at most once."""
        final = [record for record in records if record.final]
        if not final:
            return
        with self._lock:
            progress = self.progress
            progress.mini_batches_done += len(final)
            progress.mini_batches_failed += sum(
                attempt.status != "Succeeded" or attempt.failed > 0 for attempt in final)
            progress.items_succeeded += sum(attempt.succeeded for attempt in final)
            progress.items_failed += sum(attempt.failed for attempt in final)
            # what finished was scheduled, whatever the throttled listing count says
            progress.mini_batches_known = max(progress.mini_batches_known, progress.finished)
            if progress.mini_batches_total is not None:
                progress.mini_batches_total = max(progress.mini_batches_total,
                                                  progress.mini_batches_known)
        self._save()

    def worker_event(self, worker: WorkerInfo, event: str, message: str) -> None:
        self._add_worker(worker)
        self._save(force=event in ("started", "replaced"))

    def step_finished(self, summary: StepSummary) -> None:
        """The last save: the progress ends at the step's totals (the summary's), so every
        count of the record agrees."""
        with self._lock:
            self._ended = True
            trailing, self._trailing = self._trailing, None
            reused = summary.mini_batches_reused
            ended = summary.mini_batches_succeeded + summary.mini_batches_failed
            progress = self.progress
            progress.mini_batches_total = summary.mini_batches_total
            progress.mini_batches_known = max(progress.mini_batches_known, ended)
            progress.mini_batches_done = ended - reused
            progress.mini_batches_failed = summary.mini_batches_failed
            progress.items_succeeded = summary.items_succeeded
            progress.items_failed = summary.items_failed
            if reused:
                progress.mini_batches_reused = reused
            progress.ended_at = iso(summary.ended_at)
        if trailing is not None:
            trailing.cancel()
        self._save(force=True)

    def flush(self) -> None:
        self._save(force=True)

    def _save_trailing(self) -> None:
        with self._lock:
            if self._trailing is None:  # the step ended meanwhile: its last save is done
                return
            self._trailing = None
        self._save(force=True, trailing=True)

    def _add_worker(self, worker: WorkerInfo) -> None:
        """Keep one entry per worker process (a replaced worker adds its new pid)."""
        same = [w for w in self.workers if (w.node, w.process) == (worker.node, worker.process)]
        if worker.pid is None:
            if not same:
                self.workers.append(WorkerRecord(node=worker.node, process=worker.process,
                                                 pid=None))
            return
        if any(w.pid == worker.pid for w in same):
            return
        placeholder = next((w for w in same if w.pid is None), None)
        if placeholder is not None:
            placeholder.pid = worker.pid
        else:
            self.workers.append(WorkerRecord(node=worker.node, process=worker.process,
                                             pid=worker.pid))

    def _save(self, force: bool = False, trailing: bool = False) -> None:
        moment = time.monotonic()
        wait = SAVE_INTERVAL_SECONDS - (moment - self._last_save)
        if not force and wait > 0:
            with self._lock:
                if self._trailing is None and not self._ended:
                    self._trailing = threading.Timer(wait, self._save_trailing)
                    self._trailing.daemon = True
                    self._trailing.start()
            return
        self._last_save = moment
        with self._saving:  # one writer at a time: a late trailing save never undoes the last
            with self._lock:
                if trailing and self._ended:
                    return
                progress = self.progress.model_copy()
                workers = [worker.model_copy() for worker in self.workers]
            self.recorder.update_step(self.step, progress=progress, workers=workers)
