"""A parallel step's attempts over time, kept while it runs in bounded memory whatever their
number, for its task stream.

:class:`Timeline` takes the attempts one by one from the driver's records and keeps what a
dense task stream needs (``charts.bucketed_task_stream``): per-process totals, and a grid of
:data:`FINE` time buckets (busy seconds, attempts started and failed per process; the
earliest start and latest end of the attempts starting in each bucket). The grid doubles
its bucket width (merging neighbours) whenever an attempt falls outside it, so a million
attempts cost what a few thousand do, and reading ``processed_mini-batches.csv`` back at the
end of a large step (every row in memory) is not needed.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from mlpipe.runtime.records import AttemptRecord

KEPT = 500  # attempts kept as they are before the grid starts (its first span comes from them)
FINE = 8192  # grid buckets; a drawn bucket spans at least FINE / 2 / its count of them
_INF = float("inf")
_ELAPSED, _STATUS = operator.attrgetter("elapsed_seconds"), operator.attrgetter("status")
_START, _END = operator.itemgetter(1), operator.itemgetter(2)


@dataclass
class ProcessTotals:
    """What one worker process did: attempts, failed ones, busy seconds."""

    attempts: int = 0
    failed: int = 0
    busy: float = 0.0


class Timeline:
    """Attempts added with :meth:`add`; read :attr:`count`, :attr:`first` / :attr:`last`
    (epoch seconds), :attr:`totals`, :meth:`busy`, :meth:`started` and :meth:`run_starts`."""

    def __init__(self) -> None:
        self.count = 0
        self.first = _INF  # earliest start
        self.last = -_INF  # latest end
        self.totals: dict[str, ProcessTotals] = {}
        self._kept: list[tuple[str, float, float, bool]] | None = []  # until KEPT attempts
        self._origin = 0.0
        self._width = 0.0
        self._busy: dict[str, array[float]] = {}
        self._started: dict[str, array[int]] = {}
        self._failed: dict[str, array[int]] = {}
        self._ended: array[int] = array("q")  # attempts whose end falls in each bucket
        self._min_start = array("d")
        self._max_end = array("d")

    @property
    def span(self) -> float:
        """Seconds from the first start to the last end (0 without attempts)."""
        return max(self.last - self.first, 0.0) if self.count else 0.0

    def add(self, process: str, start: float, seconds: float, status: str) -> None:
        """One attempt on ``process`` from ``start`` (epoch seconds) for ``seconds``."""
        self.add_all((process,), (start,), (seconds,), (status,))

    def add_all(self, processes: Sequence[str], starts: Sequence[float],
                seconds: Sequence[float], statuses: Sequence[str]) -> None:
        """Attempts, in order: the i-th on ``processes[i]`` from ``starts[i]`` for
        ``seconds[i]`` with ``statuses[i]``."""
        rows = zip(processes, starts, map(operator.add, starts, seconds), seconds, statuses,
                   strict=True)
        if self._kept is not None:  # until the grid starts (its span from them): one by one
            for process, start, end, busy, status in rows:
                self._keep(process, start, end, busy, status != "Succeeded")
                if self._kept is None:
                    break
            else:
                return
        rest = list(rows)
        if not rest:
            return
        self.count += len(rest)
        self.first = min(self.first, min(map(_START, rest)))
        self.last = max(self.last, max(map(_END, rest)))
        lane, grid_add = self._lane, self._grid_add
        for process, start, end, busy, status in rest:
            bad = status != "Succeeded"
            lane(process, busy, bad)
            grid_add(process, start, end, busy, bad)

    def _keep(self, process: str, start: float, end: float, seconds: float, bad: bool) -> None:
        """One of the first attempts, kept as it is; the grid starts past :data:`KEPT`."""
        assert self._kept is not None
        self.count += 1
        if start < self.first:
            self.first = start
        if end > self.last:
            self.last = end
        self._lane(process, seconds, bad)
        self._kept.append((process, start, seconds, bad))
        if len(self._kept) > KEPT:
            self._start_grid()

    def _lane(self, process: str, seconds: float, bad: bool) -> None:
        """Count an attempt in its process's totals."""
        totals = self.totals.get(process)
        if totals is None:
            totals = self.totals[process] = ProcessTotals()
        totals.attempts += 1
        totals.failed += bad
        totals.busy += seconds

    def add_records(self, records: Sequence[AttemptRecord], processes: Sequence[str],
                    epochs: Sequence[float]) -> None:
        """Attempts as the driver reported them (``processes``: their lanes' names;
        ``epochs``: their start times' ``timestamp()``), with the seconds their CSV rows hold."""
        self.add_all(processes, epochs, [round(seconds, 6) for seconds in map(_ELAPSED, records)],
                     list(map(_STATUS, records)))

    def add_record(self, record: AttemptRecord, process: str, epoch: float | None = None) -> None:
        """An attempt as the driver reported it (``process``: its lane's name; ``epoch``: its
        start time's ``timestamp()``, when known), with the seconds its CSV row holds."""
        self.add_records((record,), (process,),
                         (record.start_time.timestamp() if epoch is None else epoch,))

    def busy(self, process: str, buckets: int,
             axis: tuple[float, float] | None = None) -> list[float]:
        """Busy seconds of ``process`` in each of ``buckets`` equal parts of ``axis``
        (``(start, span)`` in epoch seconds; default :attr:`first` and :attr:`span`): a
        grid bucket straddling two parts is shared in proportion, what lies outside the
        axis is counted in its first or last part."""
        out = [0.0] * buckets
        self._start_grid()
        values = self._busy.get(process)
        if values is None:
            return out
        origin, span = axis or (self.first, self.span)
        width, part = self._width, (span or 1.0) / buckets
        first, last, grid, top = self.first, self.last, self._origin, buckets - 1
        # one grid bucket at a time, in plain comparisons (no min/max calls: a million of
        # them made a chart take a tenth of a second)
        for bucket, value in enumerate(values):
            if not value:
                continue
            # what a grid bucket holds lies between the first start and the last end
            low = grid + bucket * width
            high = low + width
            low = (first if low < first else low) - origin
            high = (last if high > last else high) - origin
            low = 0.0 if low < 0.0 else span if low > span else low
            high = 0.0 if high < 0.0 else span if high > span else high
            index, end = int(low / part), int(high / part)
            if index > top:
                index = top
            if end > top:
                end = top
            if high <= low or index == end:
                out[index] += value
                continue
            share = value / (high - low)
            for at in range(index, end + 1):
                overlap = ((at + 1) * part if (at + 1) * part < high else high) - (
                    at * part if at * part > low else low)
                if overlap > 0:
                    out[at] += share * overlap
        return out

    def started(self, process: str, buckets: int,
                axis: tuple[float, float] | None = None) -> tuple[list[int], list[int]]:
        """Attempts of ``process`` started, and failed among them, per part of ``axis``
        (as in :meth:`busy`; each grid bucket counted in the part of its earliest start)."""
        counts, failed = [0] * buckets, [0] * buckets
        self._start_grid()
        origin, span = axis or (self.first, self.span)
        part = (span or 1.0) / buckets
        for bucket, value in _nonzero(self._started.get(process, array("q"))):
            index = min(max(int((self._min_start[bucket] - origin) / part), 0), buckets - 1)
            counts[index] += int(value)
            failed[index] += self._failed[process][bucket]
        return counts, failed

    def finished(self, buckets: int, axis: tuple[float, float]) -> list[int]:
        """Attempts (of every process) that ended in each of ``buckets`` equal parts of
        ``axis`` (each grid bucket counted in the part of its middle: a grid bucket is
        thousands of times narrower than the axis)."""
        counts = [0] * buckets
        self._start_grid()
        origin, span = axis
        part = (span or 1.0) / buckets
        for bucket, value in _nonzero(self._ended):
            middle = min(max(self._origin + (bucket + 0.5) * self._width, self.first), self.last)
            index = min(max(int((middle - origin) / part), 0), buckets - 1)
            counts[index] += int(value)
        return counts

    def run_starts(self, gap_seconds: float, gap_share: float) -> list[float]:
        """Where a later run begins (epoch seconds): the end of an idle gap longer than
        ``gap_seconds`` and than ``gap_share`` of the span. Exact on the grid: a bucket is
        far narrower than such a gap."""
        self._start_grid()
        starts, busy_until, span = [], self.first, self.span
        for bucket in range(FINE if self.count else 0):
            start = self._min_start[bucket]
            if start == _INF:
                continue
            gap = start - busy_until
            if gap > gap_seconds and gap > gap_share * span:
                starts.append(start)
            busy_until = max(busy_until, self._max_end[bucket])
        return starts

    # -- the grid -----------------------------------------------------------------------
    def _part(self, buckets: int) -> float:
        return (self.span or 1.0) / buckets

    def _start_grid(self) -> None:
        """Start the grid over the span so far and move the kept attempts into it."""
        if self._kept is None:
            return
        kept, self._kept = self._kept, None
        self._origin = self.first if self.count else 0.0
        self._width = max(self.span / (FINE // 2), 1e-6)
        self._min_start = array("d", [_INF]) * FINE
        self._max_end = array("d", [-_INF]) * FINE
        self._ended = array("q", [0]) * FINE
        for process, start, seconds, bad in kept:
            self._grid_add(process, start, start + seconds, seconds, bad)

    def _grid_add(self, process: str, start: float, end: float, seconds: float,
                  bad: bool) -> None:
        while start < self._origin or end >= self._origin + FINE * self._width:
            self._double(left=start < self._origin)
        origin, width = self._origin, self._width
        first = min(int((start - origin) / width), FINE - 1)
        last = min(int((end - origin) / width), FINE - 1)
        busy = self._busy.get(process)
        if busy is None:
            busy = self._busy[process] = array("d", [0.0]) * FINE
            self._started[process] = array("q", [0]) * FINE
            self._failed[process] = array("q", [0]) * FINE
        if first == last:
            busy[first] += seconds
        else:
            busy[first] += origin + (first + 1) * width - start
            for bucket in range(first + 1, last):
                busy[bucket] += width
            busy[last] += end - (origin + last * width)
        self._started[process][first] += 1
        if bad:
            self._failed[process][first] += 1
        if start < self._min_start[first]:
            self._min_start[first] = start
        if end > self._max_end[first]:
            self._max_end[first] = end
        self._ended[last] += 1

    def _double(self, *, left: bool) -> None:
        """Twice as wide buckets (neighbours merged); ``left``: the grid grows to the left."""
        def merged(values: array[Any], combine: Callable[[Any, Any], Any],
                   fill: float) -> array[Any]:
            pairs = array(values.typecode, map(combine, values[0::2], values[1::2]))
            empty = array(values.typecode, [fill]) * (FINE // 2)
            return empty + pairs if left else pairs + empty

        for series in (self._busy, self._started, self._failed):
            for process, values in series.items():
                series[process] = merged(values, operator.add, 0)
        self._ended = merged(self._ended, operator.add, 0)
        self._min_start = merged(self._min_start, min, _INF)
        self._max_end = merged(self._max_end, max, -_INF)
        if left:
            self._origin -= FINE * self._width
        self._width *= 2


def _nonzero(values: array[Any]) -> Iterator[tuple[int, Any]]:
    return ((bucket, value) for bucket, value in enumerate(values) if value)


__all__ = ["FINE", "KEPT", "ProcessTotals", "Timeline"]
