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

import heapq
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlpipe.runtime.step_logs import AttemptTable
from mlpipe.runtime.tuning.profile import StepProfile

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


Failures = tuple[tuple[str, float], ...]  # failed attempts as (status, share of a full one)


@dataclass
class Workload:
    """A run's mini-batches in input order (numpy columns, one entry per mini-batch as
    measured), with the costs the replay adds to them."""

    piece_items: Any  # items of each mini-batch (at least 1)
    piece_run: Any  # run() seconds of its last attempt (warm-up taken off)
    piece_overhead: Any  # load + result seconds of its last attempt
    piece_final: Any  # it failed for good
    piece_failures: dict[int, Failures]  # mini-batch -> its failed attempts before the last
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

    @property
    def items(self) -> int:
        return int(self.piece_items.sum())

    def units(self, timeout: float | None = None) -> list[Unit]:
        """The mini-batches as measured."""
        full = (self.piece_run + self.piece_overhead).tolist()
        items = self.piece_items.tolist()
        out = [Unit(n, (seconds,), self.cpu_share) for n, seconds in zip(items, full,
                                                                         strict=True)]
        for index, failures in self.piece_failures.items():
            overhead = float(self.piece_overhead[index])
            out[index] = Unit(items[index], tuple(
                _failed_cost(status, share, full[index], timeout, overhead)
                for status, share in failures) + (full[index],), self.cpu_share)
        return out

    def recut(self, items_per_mini_batch: int, *, max_retries: int, timeout: float) -> list[Unit]:
        """The same items in mini-batches of ``items_per_mini_batch``: each new mini-batch
        costs the fixed costs once and the measured time of the items it holds (spread
        evenly over the items of a measured mini-batch)."""
        size = max(1, int(items_per_mini_batch))
        edges = np.concatenate(([0], np.cumsum(self.piece_items)))
        total = int(edges[-1])
        run_sum = np.concatenate(([0.0], np.cumsum(np.maximum(
            self.piece_run - self.run.fixed, 0.0))))
        over_sum = np.concatenate(([0.0], np.cumsum(np.maximum(
            self.piece_overhead - self.overhead.fixed, 0.0))))
        bounds = np.append(np.arange(0, total, size), total)
        run = self.run.fixed + np.diff(np.interp(bounds, edges, run_sum))
        overhead = self.overhead.fixed + np.diff(np.interp(bounds, edges, over_sum))
        full = (run + overhead).tolist()
        items = np.diff(bounds).tolist()
        units = [Unit(n, (seconds,), self.cpu_share) for n, seconds in zip(items, full,
                                                                           strict=True)]
        for unit, (failures, final) in self._failing_units(edges, size).items():
            seconds, over = full[unit], float(overhead[unit])
            tries = [_failed_cost(status, share, seconds, timeout, over)
                     for status, share in failures]
            if final:  # a mini-batch that failed for good fails every attempt it is given
                status, share = failures[-1] if failures else ("Failed", 1.0)
                tries = [_failed_cost(status, share, seconds, timeout, over)] * (max_retries + 1)
            else:
                tries = tries[:max_retries] + [seconds]
            units[unit] = Unit(items[unit], tuple(tries), self.cpu_share)
        return units

    def _failing_units(self, edges: Any, size: int) -> dict[int, tuple[Failures, bool]]:
        """The new mini-batches holding an item of a measured mini-batch that failed: the
        most failed attempts among those, and whether one failed for good."""
        failing = set(self.piece_failures) | set(np.flatnonzero(self.piece_final).tolist()) \
            if len(self.piece_final) else set(self.piece_failures)
        out: dict[int, tuple[Failures, bool]] = {}
        for piece in sorted(failing):
            first, last = int(edges[piece]) // size, (int(edges[piece + 1]) - 1) // size
            failures = self.piece_failures.get(piece, ())
            final = bool(self.piece_final[piece])
            for unit in range(first, last + 1):
                known, was_final = out.get(unit, ((), False))
                out[unit] = (failures if len(failures) > len(known) else known,
                             was_final or final)
        return out


def _failed_cost(status: str, share: float, full: float, timeout: float | None,
                 overhead: float) -> float:
    """What a failed attempt costs: a timeout runs until ``timeout``; another failure the
    share of a full attempt it took when measured."""
    if status in ("Timeout", "ProgressTimeout") and timeout is not None:
        return timeout + overhead
    return full * min(max(share, 0.0), 1.0)


def fit(profile: StepProfile) -> Workload:
    """The workload of ``profile``'s run: its mini-batches in input order (of their first
    attempt) and their costs."""
    a = profile.attempts
    if a is None:
        raise ValueError("the workload needs the run's attempts (read_profile reads them)")
    order = np.argsort(a.start, kind="stable")
    ids = a.mini_batch_id[order].astype(str)
    unique, first_seen, inverse = np.unique(ids, return_index=True, return_inverse=True)
    count = len(unique)
    rank = np.empty(count, dtype=np.int64)
    rank[np.argsort(first_seen, kind="stable")] = np.arange(count)  # input order
    piece_of = rank[inverse]  # piece of each attempt (in start order)
    last = np.full(count, -1, dtype=np.int64)
    np.maximum.at(last, piece_of, np.arange(len(ids)))
    attempts = np.bincount(piece_of, minlength=count)
    at = order[last]  # each piece's last attempt, as a row of the table
    ok = a.ok[at]
    items = np.maximum(a.total[at], 1)
    run = a.run_seconds[at].astype(float)
    overhead = np.maximum(a.elapsed[at] - a.run_seconds[at], 0.0)
    failures: dict[int, Failures] = {}
    grouped = np.argsort(piece_of, kind="stable")
    starts = np.concatenate(([0], np.cumsum(attempts)))
    for piece in np.flatnonzero((attempts > 1) | ~ok).tolist():
        rows = order[grouped[starts[piece]:starts[piece + 1]]]
        good = [float(a.elapsed[r]) for r in rows if a.ok[r]]
        full = float(a.elapsed[rows[-1]]) if ok[piece] else max(good, default=float(
            a.elapsed[rows[-1]]))
        tried = tuple((str(a.status[r]), float(a.elapsed[r]) / full if full > 0 else 1.0)
                      for r in rows if not a.ok[r])
        if not ok[piece]:
            tried = tried[:-1]
            run[piece] = min(run[piece], full)
        if tried:
            failures[piece] = tried
    good_rows = ok
    run_line = _line(items[good_rows], run[good_rows])
    overhead_line = _line(items[good_rows], overhead[good_rows])
    warmup = _take_warmup(a, order, piece_of, items, run, overhead, ~ok, run_line,
                          overhead_line)
    settings = profile.settings
    return Workload(
        piece_items=items, piece_run=run, piece_overhead=overhead, piece_final=~ok,
        piece_failures=failures, run=run_line, overhead=overhead_line, warmup=warmup,
        dispatch=profile.dispatch_per_attempt, lead_in=profile.lead_in, tail=profile.tail,
        startup=profile.startup_per_worker, cpu_share=profile.cpu_share,
        workers=profile.workers, cores=int(settings.get("cores") or 1),
        items_per_mini_batch=profile.items_per_attempt)


def _take_warmup(a: AttemptTable, order: Any, piece_of: Any, items: Any, run: Any,
                 overhead: Any, final: Any, run_line: Line, overhead_line: Line) -> float:
    """A worker's first mini-batch pays for imports and caches once: what it took beyond
    the fitted lines is taken off it (in place) and paid once per worker (the median)."""
    process = a.process[order]
    _names, first = np.unique(process, return_index=True)  # in start order: each one's first
    excesses = []
    for piece in sorted({int(piece_of[i]) for i in first.tolist()}):
        if final[piece]:
            continue
        run_extra = max(float(run[piece]) - run_line.at(int(items[piece])), 0.0)
        over_extra = max(float(overhead[piece]) - overhead_line.at(int(items[piece])), 0.0)
        run[piece] -= run_extra
        overhead[piece] -= over_extra
        excesses.append(run_extra + over_extra)
    return statistics.median(excesses) if excesses else 0.0


def _line(items: Any, seconds: Any) -> Line:
    """Seconds over items: a Theil-Sen fit when at least two item counts have ``MIN_GROUP``
    mini-batches each; else everything per item (PRS's rule: "excluding the overhead part,
    run time is linear to mini_batch_size")."""
    if not len(items):
        return Line(0.0, 0.0, False)
    _values, counts = np.unique(items, return_counts=True)
    if int((counts >= MIN_GROUP).sum()) >= 2:
        slope = max(_median_slope(items, seconds), 0.0)
        fixed = max(float(np.median(seconds - slope * items)), 0.0)
        return Line(fixed, slope, True)
    total = int(items.sum())
    return Line(0.0, float(seconds.sum()) / total if total else 0.0, False)


def _median_slope(items: Any, seconds: Any) -> float:
    """The Theil-Sen slope: the median of the slopes between pairs of mini-batches with
    different item counts (a worker's first mini-batch, slow with imports, does not tilt
    it), over at most ``MAX_PAIRS`` pairs drawn with a fixed seed."""
    n = len(items)
    if n * (n - 1) // 2 <= MAX_PAIRS:
        first, second = np.triu_indices(n, k=1)
    else:
        chance = np.random.default_rng(0)
        first, second = chance.integers(0, n, MAX_PAIRS), chance.integers(0, n, MAX_PAIRS)
    apart = items[second] != items[first]
    if not apart.any():
        return 0.0
    slopes = (seconds[second] - seconds[first])[apart] / (items[second] - items[first])[apart]
    return float(np.median(slopes))


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
