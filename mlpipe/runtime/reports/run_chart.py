"""What report.html draws of one run of a parallel step, kept in bounded memory whatever its
number of attempts: :class:`RunChart`, and the running steps of this process
(:func:`live_run`).

A step's reports (:class:`~mlpipe.runtime.reports.observer.StepReports`) keep, while the
step runs, a :class:`~mlpipe.runtime.reports.timeline.Timeline`, the profile's sums, the
error groups and the :class:`Slowest` attempts. From them a :class:`RunChart` gives the
task stream's buckets, the throughput and the slowest attempts on the run's time axis: a
few kilobytes for a million attempts. ``runs.json`` keeps each finished run's chart, and a
step running in this process offers its run so far (:func:`show_live`), so report.html,
rewritten while the job runs and at its end, never reads ``processed_mini-batches.csv``
back for a large step (that read held ~130 bytes per attempt: a million-mini-batch job's
peak memory).
"""

from __future__ import annotations

import heapq
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from mlpipe.runtime.records import AttemptRecord
from mlpipe.runtime.reports.charts import BUCKETS, SPARSE_ATTEMPTS, THROUGHPUT_BUCKETS, Axis
from mlpipe.runtime.reports.job_report import detail_text
from mlpipe.runtime.step_logs import Attempt, RunEntry, StepLogs

if TYPE_CHECKING:
    from mlpipe.runtime.reports.timeline import Timeline

SLOWEST_SHOWN = 10


@dataclass(frozen=True)
class RunChart:
    """One run's charts on its axis (``start``, ``span``: epoch seconds): per worker process
    (``processes``, sorted) its totals (attempts, failed, busy seconds) and, in each of
    ``BUCKETS`` parts of the axis, its busy seconds and failed attempts; the attempts
    finished in each of ``THROUGHPUT_BUCKETS`` parts; the slowest attempts, longest first;
    and, for a run of at most ``SPARSE_ATTEMPTS`` attempts, every attempt (``rows``: drawn
    one bar each)."""

    start: float
    span: float
    attempts: int
    processes: tuple[str, ...]
    totals: tuple[tuple[int, int, float], ...]
    busy: tuple[tuple[float, ...], ...]
    failed: tuple[tuple[int, ...], ...]
    finished: tuple[int, ...]
    slowest: tuple[Attempt, ...]
    rows: tuple[Attempt, ...] = ()

    @classmethod
    def of(cls, timeline: Timeline, slowest: Sequence[Attempt], start: float,
           end: float, rows: Sequence[Attempt] = ()) -> RunChart:
        """The chart of ``timeline``'s attempts on the axis ``start`` .. ``end``."""
        axis = (start, max(end - start, 1e-3))
        processes = tuple(sorted(timeline.totals))
        totals = tuple((t.attempts, t.failed, round(t.busy, 6))
                       for t in map(timeline.totals.__getitem__, processes))
        busy = tuple(tuple(round(value, 6) for value in timeline.busy(name, BUCKETS, axis))
                     for name in processes)
        failed = tuple(tuple(timeline.started(name, BUCKETS, axis)[1]) for name in processes)
        finished = tuple(timeline.finished(THROUGHPUT_BUCKETS, axis)) if timeline.count \
            else (0,) * THROUGHPUT_BUCKETS
        return cls(axis[0], axis[1], timeline.count, processes, totals, busy, failed,
                   finished, tuple(slowest), tuple(rows))

    def __len__(self) -> int:
        return self.attempts

    def axis(self, name: str) -> Axis:
        return Axis(self.start, self.span, name)

    def as_json(self) -> dict[str, Any]:
        """Plain lists and dicts (built directly: ``dataclasses.asdict`` deep-copies each of a
        few thousand values, milliseconds of the driver at each report)."""
        return {"start": self.start, "span": self.span, "attempts": self.attempts,
                "processes": list(self.processes), "totals": [list(t) for t in self.totals],
                "busy": [list(row) for row in self.busy],
                "failed": [list(row) for row in self.failed], "finished": list(self.finished),
                "slowest": [_attempt_json(a) for a in self.slowest],
                "rows": [_attempt_json(a) for a in self.rows]}

    @classmethod
    def from_json(cls, data: Any) -> RunChart | None:
        """The chart ``runs.json`` keeps (``None`` for a run written without one, or one
        that does not read)."""
        if not isinstance(data, dict) or not data:
            return None
        try:
            return cls(float(data["start"]), float(data["span"]), int(data["attempts"]),
                       tuple(map(str, data["processes"])),
                       tuple((int(a), int(f), float(b)) for a, f, b in data["totals"]),
                       tuple(tuple(map(float, row)) for row in data["busy"]),
                       tuple(tuple(map(int, row)) for row in data["failed"]),
                       tuple(map(int, data["finished"])),
                       tuple(Attempt(**attempt) for attempt in data["slowest"]),
                       tuple(Attempt(**attempt) for attempt in data.get("rows") or ()))
        except (KeyError, TypeError, ValueError):
            return None


_ATTEMPT_FIELDS = tuple(f.name for f in fields(Attempt))


def _attempt_json(attempt: Attempt) -> dict[str, Any]:
    return {name: getattr(attempt, name) for name in _ATTEMPT_FIELDS}


class Slowest:
    """The ``count`` longest attempts seen, as :class:`Attempt` rows (a handful of records
    kept, whatever the number of attempts)."""

    def __init__(self, count: int = SLOWEST_SHOWN) -> None:
        self.count = count
        self._heap: list[tuple[float, int, AttemptRecord, str, float]] = []
        self._seen = 0

    def add_all(self, records: Sequence[AttemptRecord], processes: Sequence[str],
                epochs: Sequence[float]) -> None:
        """``records`` (``processes``: their lanes' names, ``epochs``: their starts)."""
        heap = self._heap
        if len(heap) >= self.count and max(r.elapsed_seconds for r in records) <= heap[0][0]:
            self._seen += len(records)
            return  # none of them is among the slowest (most batches of a large step)
        for record, process, epoch in zip(records, processes, epochs, strict=True):
            self._seen += 1
            entry = (record.elapsed_seconds, -self._seen, record, process, epoch)
            if len(heap) < self.count:
                heapq.heappush(heap, entry)
            elif entry[0] > heap[0][0]:
                heapq.heapreplace(heap, entry)

    def attempts(self) -> list[Attempt]:
        """The kept attempts, longest first, as their rows of processed_mini-batches.csv."""
        return [attempt_row(r, process, epoch)
                for _, _, r, process, epoch in sorted(self._heap, reverse=True)]


class FirstAttempts:
    """Every attempt of a run while there are at most ``SPARSE_ATTEMPTS`` (drawn one bar
    each); none past that."""

    def __init__(self) -> None:
        self._kept: list[tuple[AttemptRecord, str, float]] | None = []

    def add_all(self, records: Sequence[AttemptRecord], processes: Sequence[str],
                epochs: Sequence[float]) -> None:
        if self._kept is None:
            return
        self._kept.extend(zip(records, processes, epochs, strict=True))
        if len(self._kept) > SPARSE_ATTEMPTS:
            self._kept = None

    def attempts(self) -> list[Attempt]:
        return [attempt_row(*kept) for kept in self._kept or ()]


def attempt_row(record: AttemptRecord, process: str, epoch: float) -> Attempt:
    """``record`` as its row of processed_mini-batches.csv reads back."""
    r = record
    return Attempt(r.mini_batch_id, r.picked_count, process, round(epoch, 6), r.total,
                   r.succeeded, r.failed, round(r.elapsed_seconds, 6),
                   round(r.process_seconds, 6), round(r.run_method_seconds, 6), r.status,
                   r.error_category or "", r.error_message or "",
                   detail_text(r.detail) if r.detail else "{}")


# -- the running steps of this process ---------------------------------------------------------
_LIVE: dict[str, Callable[[], RunEntry]] = {}
_LIVE_LOCK = threading.Lock()


def _key(logs: StepLogs) -> str:
    return os.path.abspath(logs.root)


def show_live(logs: StepLogs, run: Callable[[], RunEntry]) -> None:
    """While its step runs in this process, ``run()`` gives its current run so far (its
    chart, tally, errors and counts as ``runs.json`` will keep them at its end)."""
    with _LIVE_LOCK:
        _LIVE[_key(logs)] = run


def hide_live(logs: StepLogs) -> None:
    with _LIVE_LOCK:
        _LIVE.pop(_key(logs), None)


def live_run(logs: StepLogs) -> RunEntry | None:
    """The current run of the step whose logs are ``logs``, when it runs in this process."""
    with _LIVE_LOCK:
        run = _LIVE.get(_key(logs))
    return run() if run is not None else None


__all__ = ["SLOWEST_SHOWN", "FirstAttempts", "RunChart", "Slowest", "attempt_row", "hide_live",
           "live_run", "show_live"]
