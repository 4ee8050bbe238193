"""The scheduler replayed over a run's attempts, at other settings (as Sparklens does for Spark).

:func:`fit` turns a :class:`~mlpipe.runtime.tuning.profile.StepProfile` into a
:class:`Workload`: the mini-batches in input order with what their attempts cost, and the
fixed costs of the step. :meth:`Workload.recut` cuts the same items into mini-batches of
another size (each keeps the measured time of the items it holds, so skew stays where it
was; a mini-batch holding an item whose mini-batch failed fails and is retried as often);
:func:`replay` schedules them on a number of workers as the driver does (each worker takes
the next mini-batch when it is free, a retry before a new mini-batch) and gives the wall
time, tail and stragglers included.
"""

from __future__ import annotations

import bisect
import heapq
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from mlpipe.runtime.step_logs import Attempt
from mlpipe.runtime.tuning.profile import StepProfile

# (items, run() seconds, load + result seconds, failed attempts as (status, share of a full
#  attempt), failed for good) of one mini-batch as measured
Piece = tuple[int, float, float, tuple[tuple[str, float], ...], bool]
MIN_GROUP = 3  # mini-batches needed at each of two item counts to fit a fixed cost per call
MAX_PAIRS = 20_000


@dataclass(frozen=True)
class Unit:
    """One mini-batch to schedule: its attempts' durations in order (the last one ends it)."""

    items: int
    attempts: tuple[float, ...]
    cpu_share: float = 0.0


@dataclass(frozen=True)
class Line:
    """``fixed + per_item x items``; ``fitted`` is False when every mini-batch had the same
    item count, so the fixed part could not be told from the rest (it is then 0)."""

    fixed: float
    per_item: float
    fitted: bool

    def at(self, items: float) -> float:
        return self.fixed + self.per_item * items


@dataclass
class Workload:
    """A run's mini-batches in input order, with the costs the replay adds to them."""

    pieces: list[Piece]  # per original mini-batch
    run: Line  # run() seconds of a mini-batch of n items
    overhead: Line  # load + result seconds of a mini-batch of n items
    warmup: float  # a worker's first mini-batch takes this much longer (imports, caches)
    dispatch: float  # per mini-batch, between two attempts of a worker
    lead_in: float  # from the run's start to its first attempt
    tail: float  # from its last attempt to its end
    startup: float  # one worker's start-up
    cpu_share: float  # CPU seconds / elapsed seconds of the attempts
    workers: int  # as measured
    cores: int  # of the machine measured
    items_per_mini_batch: float
    _cumulative: list[tuple[int, float, float]] = field(default_factory=list, repr=False)

    @property
    def items(self) -> int:
        return sum(piece[0] for piece in self.pieces)

    def units(self, timeout: float | None = None) -> list[Unit]:
        """The mini-batches as measured."""
        out = []
        for items, run, overhead, failures, _final in self.pieces:
            full = run + overhead
            out.append(Unit(items, tuple(_failed_cost(status, share, full, timeout, overhead)
                                         for status, share in failures) + (full,),
                            self.cpu_share))
        return out

    def recut(self, items_per_mini_batch: int, *, max_retries: int, timeout: float) -> list[Unit]:
        """The same items in mini-batches of ``items_per_mini_batch``."""
        size = max(1, int(items_per_mini_batch))
        if not self._cumulative:
            total_items, run_sum, over_sum = 0, 0.0, 0.0
            self._cumulative.append((0, 0.0, 0.0))
            for items, run, overhead, _failures, _final in self.pieces:
                n = max(items, 1)
                total_items += n
                run_sum += max(run - self.run.fixed, 0.0)
                over_sum += max(overhead - self.overhead.fixed, 0.0)
                self._cumulative.append((total_items, run_sum, over_sum))
        edges = [entry[0] for entry in self._cumulative]
        total = edges[-1]
        units = []
        for begin in range(0, total, size):
            end = min(begin + size, total)
            run = self.run.fixed + self._between(edges, begin, end, 1)
            overhead = self.overhead.fixed + self._between(edges, begin, end, 2)
            failures, final = self._failures(edges, begin, end)
            full = run + overhead
            tries = [_failed_cost(status, share, full, timeout, overhead)
                     for status, share in failures]
            if final:  # a mini-batch that failed for good fails every attempt it is given
                status, share = failures[-1] if failures else ("Failed", 1.0)
                tries = [_failed_cost(status, share, full, timeout, overhead)] * (max_retries + 1)
            else:
                tries = tries[:max_retries] + [full]
            units.append(Unit(end - begin, tuple(tries), self.cpu_share))
        return units

    def _between(self, edges: list[int], begin: int, end: int, column: int) -> float:
        return self._value(edges, end, column) - self._value(edges, begin, column)

    def _value(self, edges: list[int], at: int, column: int) -> float:
        """The cumulative seconds of ``column`` at item ``at`` (linear inside a mini-batch)."""
        index = bisect.bisect_right(edges, at) - 1
        index = min(max(index, 0), len(edges) - 2) if len(edges) > 1 else 0
        low = self._cumulative[index]
        if len(edges) == 1 or at <= low[0]:
            return float(low[column])
        high = self._cumulative[index + 1]
        span = high[0] - low[0]
        return float(low[column] + (high[column] - low[column]) * (at - low[0]) / span)

    def _failures(self, edges: list[int], begin: int, end: int
                  ) -> tuple[tuple[tuple[str, float], ...], bool]:
        first = max(bisect.bisect_right(edges, begin) - 1, 0)
        last = max(bisect.bisect_left(edges, end) - 1, first)
        worst: tuple[tuple[str, float], ...] = ()
        final = False
        for piece in self.pieces[first:last + 1]:
            if len(piece[3]) > len(worst):
                worst = piece[3]
            final = final or piece[4]
        return worst, final


def _failed_cost(status: str, share: float, full: float, timeout: float | None,
                 overhead: float) -> float:
    """What a failed attempt costs: a timeout runs until ``timeout``; another failure the
    share of a full attempt it took when measured."""
    if status in ("Timeout", "ProgressTimeout") and timeout is not None:
        return timeout + overhead
    return full * min(max(share, 0.0), 1.0)


def fit(profile: StepProfile) -> Workload:
    """The workload of ``profile``'s run: its mini-batches in input order and their costs."""
    by_batch: dict[str, list[Attempt]] = {}
    for attempt in sorted(profile.attempts.rows(), key=lambda a: a.start):
        by_batch.setdefault(attempt.mini_batch_id, []).append(attempt)
    pieces = []
    for attempts in by_batch.values():
        last = attempts[-1]
        full = last.elapsed if last.ok else max(
            (a.elapsed for a in attempts if a.ok), default=last.elapsed)
        failures = tuple((a.status, a.elapsed / full if full > 0 else 1.0)
                         for a in attempts if not a.ok)
        if not last.ok:
            failures = failures[:-1]
        run = last.run_seconds if last.ok else min(last.run_seconds, full)
        pieces.append((max(last.total, 1), run, max(last.elapsed - last.run_seconds, 0.0),
                       failures, not last.ok))
    ok = [(n, run, over) for n, run, over, _f, final in pieces if not final]
    run_line = _line([(n, run) for n, run, _o in ok])
    overhead_line = _line([(n, over) for n, _r, over in ok])
    pieces, warmup = _without_warmup(pieces, list(by_batch), _first_of_each_worker(profile),
                                     run_line, overhead_line)
    settings = profile.settings
    return Workload(
        pieces=pieces,
        run=run_line,
        overhead=overhead_line,
        warmup=warmup,
        dispatch=profile.dispatch_per_attempt, lead_in=profile.lead_in, tail=profile.tail,
        startup=profile.startup_per_worker, cpu_share=profile.cpu_share,
        workers=profile.workers, cores=int(settings.get("cores") or 1),
        items_per_mini_batch=profile.items_per_attempt)


def _first_of_each_worker(profile: StepProfile) -> set[str]:
    """The mini-batch each worker process ran first."""
    first: dict[str, tuple[float, str]] = {}
    for attempt in profile.attempts:
        known = first.get(attempt.process)
        if known is None or attempt.start < known[0]:
            first[attempt.process] = (attempt.start, attempt.mini_batch_id)
    return {mini_batch for _start, mini_batch in first.values()}


def _without_warmup(pieces: list[Piece], ids: list[str], firsts: set[str], run: Line,
                    overhead: Line) -> tuple[list[Piece], float]:
    """A worker's first mini-batch pays for imports and caches once: what it took beyond
    the fitted lines is taken off it and paid once per worker (the median over workers)."""
    excesses = []
    out = []
    for mini_batch, piece in zip(ids, pieces, strict=True):
        items, run_s, over_s, failures, final = piece
        if mini_batch in firsts and not final:
            run_extra = max(run_s - run.at(items), 0.0)
            over_extra = max(over_s - overhead.at(items), 0.0)
            excesses.append(run_extra + over_extra)
            piece = (items, run_s - run_extra, over_s - over_extra, failures, final)
        out.append(piece)
    return out, statistics.median(excesses) if excesses else 0.0


def _line(points: Sequence[tuple[int, float]]) -> Line:
    """Least squares of seconds over items when at least two item counts have
    ``MIN_GROUP`` mini-batches each; else everything per item (PRS's rule: "excluding the
    overhead part, run time is linear to mini_batch_size")."""
    if not points:
        return Line(0.0, 0.0, False)
    counts: dict[int, int] = {}
    for n, _ in points:
        counts[n] = counts.get(n, 0) + 1
    if sum(1 for c in counts.values() if c >= MIN_GROUP) >= 2:
        slope = max(_median_slope(points), 0.0)
        fixed = max(statistics.median(t - slope * n for n, t in points), 0.0)
        return Line(fixed, slope, True)
    items = sum(n for n, _ in points)
    return Line(0.0, sum(t for _, t in points) / items if items else 0.0, False)


def _median_slope(points: Sequence[tuple[int, float]]) -> float:
    """The Theil-Sen slope: the median of the slopes between pairs of points with different
    item counts (a worker's first mini-batch, slow with imports, does not tilt it); at most
    ``MAX_PAIRS`` pairs, spread evenly."""
    ordered = sorted(points)
    step = max(1, len(ordered) * (len(ordered) - 1) // 2 // MAX_PAIRS)
    slopes = []
    count = 0
    for i, (n1, t1) in enumerate(ordered):
        for n2, t2 in ordered[i + 1:]:
            count += 1
            if n2 != n1 and count % step == 0:
                slopes.append((t2 - t1) / (n2 - n1))
    return statistics.median(slopes) if slopes else 0.0


@dataclass(frozen=True)
class Replay:
    """What :func:`replay` found."""

    wall: float  # lead-in + scheduling + tail
    makespan: float  # from the first attempt's start to the last one's end
    busy: float  # worker-seconds spent in attempts (dispatch included)
    attempts: int
    mini_batches: int
    workers: int

    @property
    def utilisation(self) -> float:
        whole = self.makespan * self.workers
        return min(self.busy / whole, 1.0) if whole > 0 else 0.0


def replay(units: Sequence[Unit], workers: int, *, dispatch: float, lead_in: float = 0.0,
           tail: float = 0.0, stretch: float = 1.0, rate: float | None = None,
           warmup: float = 0.0) -> Replay:
    """Schedule ``units`` on ``workers`` as the driver does: a free worker takes a retry that
    is due, else the next mini-batch; each attempt costs ``dispatch`` plus its duration,
    whose CPU-bound share is ``stretch``-ed (more busy workers than cores); a worker's first
    attempt also pays ``warmup``. ``rate`` caps how many mini-batches per second can be
    handed out (PRS's scheduler: about 400/s)."""
    workers = max(int(workers), 1)
    free = [(0.0, worker) for worker in range(workers)]
    started: set[int] = set()
    retries: list[tuple[float, int, int]] = []  # (due, unit, attempt number)
    busy = makespan = 0.0
    attempts = 0
    fresh = 0
    while fresh < len(units) or retries:
        now, worker = heapq.heappop(free)
        if retries and (retries[0][0] <= now or fresh >= len(units)):
            due, index, number = heapq.heappop(retries)
            start = max(now, due)
        else:
            index, number = fresh, 0
            start = now if rate is None else max(now, fresh / rate)
            fresh += 1
        unit = units[index]
        seconds = unit.attempts[number]
        seconds = dispatch + seconds * (1.0 - unit.cpu_share + unit.cpu_share * stretch)
        if worker not in started:
            started.add(worker)
            seconds += warmup
        end = start + seconds
        busy += seconds
        attempts += 1
        if number + 1 < len(unit.attempts):
            heapq.heappush(retries, (end, index, number + 1))
        heapq.heappush(free, (end, worker))
        makespan = max(makespan, end)
    return Replay(lead_in + makespan + tail, makespan, busy, attempts, len(units), workers)


def stretch(workers: int, cpu_share: float, cores: int) -> float:
    """How much longer CPU-bound work takes when ``workers`` share ``cores``."""
    return max(1.0, workers * cpu_share / max(cores, 1))


def startup_lead_in(workload: Workload, workers: int, cores: int) -> float:
    """The lead-in with ``workers`` starting on ``cores``: the measured one, plus a worker's
    start-up for every extra round of starts the cores must take."""
    before = math.ceil(workload.workers / max(workload.cores, 1))
    rounds = math.ceil(workers / max(cores, 1)) - before
    return max(workload.lead_in + rounds * workload.startup, 0.0)


__all__ = ["Line", "Replay", "Unit", "Workload", "fit", "replay", "startup_lead_in", "stretch"]
