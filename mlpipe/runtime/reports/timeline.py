"""A parallel step's attempts over time, in bounded memory whatever their number.

:class:`Timeline` takes attempts one by one (live from the driver's records, or read
from ``processed_mini-batches.csv``) and keeps what the task-stream pictures need:
per-process totals, every attempt as a :class:`Bar` while there are at most
:data:`KEPT_BARS`, and beyond that a grid of :data:`FINE` time buckets (busy seconds,
attempts started and failed per process; earliest start and latest end of the attempts
starting in each bucket; attempts ended). The grid doubles its bucket width (merging
neighbours) when an attempt falls outside it, so a million attempts cost what a few
thousand do.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Label = str | Callable[[], str]
KEPT_BARS = 3_000  # above it, attempts are drawn per worker and time bucket
FINE = 8192  # grid buckets; a picture's bucket spans at least FINE / 2 / its buckets of them
_INF = float("inf")


@dataclass(frozen=True)
class Bar:
    """One attempt: its process lane, start (seconds after the first attempt's), length,
    status and hover text."""

    process: str
    start: float  # seconds since the first attempt started
    seconds: float
    status: str
    label: str


@dataclass
class ProcessTotals:
    """What one worker process did: attempts, failed ones, busy seconds."""

    attempts: int = 0
    failed: int = 0
    busy: float = 0.0


class Timeline:
    """Attempts added with :meth:`add`; read :attr:`count`, :attr:`first`/:attr:`last`
    (epoch seconds), :attr:`totals`, and :meth:`bars` or the bucketed views."""

    def __init__(self) -> None:
        self.count = 0
        self.first = _INF  # earliest start
        self.last = -_INF  # latest end
        self.totals: dict[str, ProcessTotals] = {}
        # (start, process, seconds, status, label) while count <= KEPT_BARS
        self._bars: list[tuple[float, str, float, str, Label]] | None = []
        self._origin = 0.0
        self._width = 0.0  # 0: no grid yet
        self._busy: dict[str, array[float]] = {}
        self._started: dict[str, array[int]] = {}
        self._failed: dict[str, array[int]] = {}
        self._min_start = array("d")
        self._max_end = array("d")
        self._ended = array("q")

    @property
    def keeps_bars(self) -> bool:
        """True while every attempt is kept as a bar (a caller may skip building labels
        otherwise)."""
        return self._bars is not None

    @property
    def span(self) -> float:
        """Seconds from the first start to the last end (0 without attempts)."""
        return max(self.last - self.first, 0.0) if self.count else 0.0

    def add(self, process: str, start: float, seconds: float, status: str,
            label: Label = "") -> None:
        """One attempt on ``process`` from ``start`` (epoch seconds) for ``seconds``;
        ``label`` is its hover text, or a function that makes it (called only if the
        attempt is drawn as a bar)."""
        end = start + seconds
        self.count += 1
        if start < self.first:
            self.first = start
        if end > self.last:
            self.last = end
        bad = status != "Succeeded"
        totals = self.totals.get(process)
        if totals is None:
            totals = self.totals[process] = ProcessTotals()
        totals.attempts += 1
        totals.failed += bad
        totals.busy += seconds
        if self._bars is not None:
            self._bars.append((start, process, seconds, status, label))
            if len(self._bars) > KEPT_BARS:
                self._to_grid()
            return
        self._grid_add(process, start, end, seconds, bad)

    def bars(self) -> list[Bar] | None:
        """Every attempt as a bar in the order added, starts relative to :attr:`first`;
        ``None`` once there are more than :data:`KEPT_BARS`."""
        if self._bars is None:
            return None
        return [Bar(process, start - self.first, seconds, status,
                    label() if callable(label) else label)
                for start, process, seconds, status, label in self._bars]

    # -- bucketed views (more than KEPT_BARS attempts) ------------------------------------
    def busy(self, process: str, buckets: int) -> list[float]:
        """Busy seconds of ``process`` in each of ``buckets`` equal parts of :attr:`span`
        (a grid bucket straddling two parts is shared in proportion)."""
        out = [0.0] * buckets
        values = self._busy.get(process)
        if values is None:
            return out
        width, part = self._width, self._part(buckets)
        for bucket, value in self._nonzero(values):
            low = self._origin + bucket * width - self.first
            first = int(low / part)
            last = int((low + width) / part)
            for index in range(max(first, 0), min(last, buckets - 1) + 1):
                overlap = min(low + width, (index + 1) * part) - max(low, index * part)
                if overlap > 0:
                    out[index] += value * overlap / width
        return out

    def started(self, process: str, buckets: int) -> tuple[list[int], list[int]]:
        """Attempts of ``process`` started, and failed among them, per part of :attr:`span`
        (each grid bucket counted in the part of its earliest start)."""
        counts, failed = [0] * buckets, [0] * buckets
        part = self._part(buckets)
        for bucket, value in self._nonzero(self._started.get(process, array("q"))):
            index = min(max(int((self._min_start[bucket] - self.first) / part), 0), buckets - 1)
            counts[index] += int(value)
            failed[index] += self._failed[process][bucket]
        return counts, failed

    def ended(self, buckets: int) -> list[int]:
        """Attempts ended per part of :attr:`span` (a grid bucket counted at its middle)."""
        if self._bars is not None:
            counts = [0] * buckets
            part = self._part(buckets)
            for start, _process, seconds, _status, _label in self._bars:
                counts[min(int((start + seconds - self.first) / part), buckets - 1)] += 1
            return counts
        counts = [0] * buckets
        part = self._part(buckets)
        for bucket, value in self._nonzero(self._ended):
            middle = self._origin + (bucket + 0.5) * self._width - self.first
            counts[min(max(int(middle / part), 0), buckets - 1)] += int(value)
        return counts

    def run_starts(self, gap_seconds: float, gap_share: float) -> list[float]:
        """Where a later run begins (seconds after :attr:`first`): the end of an idle gap
        longer than ``gap_seconds`` and than ``gap_share`` of the span. Exact on the grid
        too: a bucket is far narrower than such a gap."""
        if self._bars is not None:
            ordered: Iterator[tuple[float, float]] = iter(sorted(
                (bar[0], bar[0] + bar[2]) for bar in self._bars))
        else:
            ordered = ((self._min_start[b], self._max_end[b]) for b in range(FINE)
                       if self._min_start[b] < _INF)
        starts, busy_until, span = [], self.first, self.span
        for start, end in ordered:
            gap = start - busy_until
            if gap > gap_seconds and gap > gap_share * span:
                starts.append(start - self.first)
            busy_until = max(busy_until, end)
        return starts

    # -- the grid -----------------------------------------------------------------------
    def _part(self, buckets: int) -> float:
        return (self.span or 1.0) / buckets

    def _to_grid(self) -> None:
        """Past KEPT_BARS: start the grid over the span so far and move the bars into it."""
        assert self._bars is not None
        bars, self._bars = self._bars, None
        self._origin = self.first
        self._width = max(self.span / (FINE // 2), 1e-6)
        self._min_start = array("d", [_INF]) * FINE
        self._max_end = array("d", [-_INF]) * FINE
        self._ended = array("q", [0]) * FINE
        for start, process, seconds, status, _label in bars:
            self._grid_add(process, start, start + seconds, seconds, status != "Succeeded")

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
        self._min_start = merged(self._min_start, min, _INF)
        self._max_end = merged(self._max_end, max, -_INF)
        self._ended = merged(self._ended, operator.add, 0)
        if left:
            self._origin -= FINE * self._width
        self._width *= 2

    @staticmethod
    def _nonzero(values: array) -> Iterator[tuple[int, float]]:
        return ((bucket, value) for bucket, value in enumerate(values) if value)


__all__ = ["FINE", "KEPT_BARS", "Bar", "ProcessTotals", "Timeline"]
