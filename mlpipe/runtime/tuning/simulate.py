"""The scheduler replayed over a run's attempts, at other settings (as Sparklens does for Spark).

:func:`fit` turns a :class:`~mlpipe.runtime.tuning.profile.StepProfile` into a
:class:`Workload`: the mini-batches in input order with what their attempts cost on a quiet
machine (each attempt's time waiting for a core taken off: its run-delay), the fixed costs of
the step and each worker's start-up split into CPU and waiting. :meth:`Workload.cut` cuts
the same items into mini-batches of another size (each keeps the measured time of the items
it holds, so skew stays where it was; a mini-batch holding an item whose mini-batch failed
fails where that item is, as often).

:func:`replay_here` schedules them on this machine's cores as the driver does (a free worker
takes a retry, else the next mini-batch) while the processes share the cores: the workers'
start-ups (CPU, then waiting) and attempts (their CPU-bound share) progress at the pace the
cores allow (processor sharing), so a start-up that waits costs no core and CPU-bound work
slows when it outnumbers the cores. :func:`replay` is the same list scheduling with a fixed
pace per attempt, for nodes of the cloud.
"""

from __future__ import annotations

import heapq
import math
import statistics
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlpipe.runtime.concurrency import START_BARRIER_SECONDS
from mlpipe.runtime.step_logs import AttemptTable
from mlpipe.runtime.tuning.profile import StepProfile

MIN_GROUP = 3  # mini-batches needed at each of two item counts to fit a fixed cost per call
MAX_PAIRS = 20_000
NOISE_WINDOW = 5  # mini-batches either side of the running median the noise is measured from
MAX_NOISE = 0.3
TIMEOUTS = ("Timeout", "ProgressTimeout")


@dataclass(frozen=True)
class Unit:
    """One mini-batch to schedule: its attempts' durations on a quiet machine, in order (the
    last one ends it), and the items it loses when its last attempt fails too."""

    items: int
    attempts: tuple[float, ...]
    cpu_share: float = 0.0
    lost: int = 0


@dataclass(frozen=True)
class Start:
    """A worker's start-up: its process starts ``at`` seconds after the run, works ``cpu``
    seconds on a core (the interpreter, imports, init()'s computing), then waits ``wait``
    seconds (init() reading a model, sleeping) until it is ready."""

    at: float
    cpu: float
    wait: float


@dataclass(frozen=True)
class Line:
    """``fixed + per_item x items``; ``fitted`` is False when every mini-batch had the same
    item count, so the fixed part could not be told from the rest (it is then 0)."""

    fixed: float
    per_item: float
    fitted: bool

    def at(self, items: float) -> float:
        return self.fixed + self.per_item * items


@dataclass(frozen=True)
class Failure:
    """A failed attempt: its status, and where in the items it stopped (an item position:
    a raising run() stops at its bad item, so a larger mini-batch holding it costs the
    items before it)."""

    status: str
    position: float


@dataclass
class Workload:
    """A run's mini-batches in input order (numpy columns, one entry per mini-batch as
    measured, times as on a quiet machine), with the costs the replay adds to them."""

    piece_items: Any  # items of each mini-batch (at least 1)
    piece_run: Any  # run() seconds of its last attempt (warm-up taken off)
    piece_overhead: Any  # load + result seconds of its last attempt
    piece_final: Any  # it failed for good
    piece_failures: dict[int, tuple[Failure, ...]]  # mini-batch -> its failed attempts
    run: Line  # run() seconds of a mini-batch of n items
    overhead: Line  # load + result seconds of a mini-batch of n items
    warmup: float  # a worker's first mini-batch takes this much longer (imports, caches)
    dispatch: float  # per mini-batch, between two attempts of a worker
    tail: float  # from the last attempt to the run's end
    listing: float  # from the workers ready to the first attempt (the driver listing)
    starts: tuple[Start, ...]  # each worker's start-up as measured, by process start
    driver: float  # cores the driver kept busy
    cpu_share: float  # CPU seconds / seconds on a quiet machine, of the attempts
    workers: int  # as measured
    cores: int  # of the machine measured
    items_per_mini_batch: float
    noise: float  # how much a mini-batch's cost varies (a standard deviation, of logarithms)
    quiet_share: float = 1.0  # of the attempts' elapsed, what a quiet machine would take
    timeout_overhead: float = 0.0
    _cumulative: Any = field(default=None, repr=False)

    @property
    def items(self) -> int:
        return int(self.piece_items.sum())

    @property
    def edges(self) -> Any:
        return np.concatenate(([0], np.cumsum(self.piece_items)))

    def units(self, *, max_retries: int, timeout: float | None) -> list[Unit]:
        """The mini-batches as measured."""
        return self.cut(self.edges, max_retries=max_retries, timeout=timeout)

    def recut(self, items_per_mini_batch: int, *, max_retries: int,
              timeout: float | None) -> list[Unit]:
        """The same items in mini-batches of ``items_per_mini_batch``."""
        size = max(1, int(items_per_mini_batch))
        total = self.items
        return self.cut(np.append(np.arange(0, total, size), total), max_retries=max_retries,
                        timeout=timeout)

    def cut(self, bounds: Any, *, max_retries: int, timeout: float | None) -> list[Unit]:
        """The items between consecutive ``bounds`` as mini-batches: each costs the fixed
        costs once and the measured time of the items it holds (a measured mini-batch's
        time spread evenly over its items); one holding a failed item fails where it is."""
        edges, cumulative = self._cost_curve()
        at = np.interp(bounds, edges, cumulative)
        fixed = self.run.fixed + self.overhead.fixed
        full = (fixed + np.diff(at)).tolist()
        items = np.diff(bounds).astype(int).tolist()
        share = self.cpu_share
        units = [Unit(n, (seconds,), share) for n, seconds in zip(items, full, strict=True)]
        if not self.piece_failures:
            return units
        failing: dict[int, tuple[tuple[Failure, ...], bool, float]] = {}
        for piece, failures in self.piece_failures.items():
            position = min(failure.position for failure in failures)
            unit = int(np.searchsorted(bounds, position, side="right")) - 1
            unit = min(max(unit, 0), len(units) - 1)
            known, was_final, first = failing.get(unit, ((), False, math.inf))
            failing[unit] = (failures if len(failures) > len(known) else known,
                             was_final or bool(self.piece_final[piece]), min(first, position))
        for unit, (failures, final, position) in failing.items():
            start = float(at[unit])
            costs = [self._failed_cost(failure.status, position, start, fixed, timeout)
                     for failure in failures]
            if final:  # it fails every attempt it is given, at its first bad item
                units[unit] = Unit(items[unit], (costs[-1],) * (max_retries + 1), share,
                                   lost=items[unit])
            else:
                units[unit] = Unit(items[unit], (*costs[:max_retries], full[unit]), share)
        return units

    def _failed_cost(self, status: str, position: float, start: float, fixed: float,
                     timeout: float | None) -> float:
        """What a failed attempt costs: a timeout runs until ``timeout``; another failure
        the fixed costs and the items before ``position``, where it raised."""
        if status in TIMEOUTS and timeout is not None:
            return timeout + self.timeout_overhead
        edges, cumulative = self._cost_curve()
        return fixed + max(float(np.interp(position, edges, cumulative)) - start, 0.0)

    def _cost_curve(self) -> tuple[Any, Any]:
        """The items' cumulative cost beyond the fixed costs, at each mini-batch's edge (a
        mini-batch that failed for good: its items at the fitted cost per item)."""
        if self._cumulative is None:
            variable = (np.maximum(self.piece_run - self.run.fixed, 0.0)
                        + np.maximum(self.piece_overhead - self.overhead.fixed, 0.0))
            if len(self.piece_final) and self.piece_final.any():
                estimate = (self.run.per_item + self.overhead.per_item) * self.piece_items
                variable = np.where(self.piece_final, estimate, variable)
            self._cumulative = (self.edges, np.concatenate(([0.0], np.cumsum(variable))))
        cumulative: tuple[Any, Any] = self._cumulative
        return cumulative


def fit(profile: StepProfile) -> Workload:
    """The workload of ``profile``'s run on a quiet machine: its mini-batches in input order
    (of their first attempt), their costs, the workers' start-ups."""
    a = profile.attempts
    if a is None:
        raise ValueError("the workload needs the run's attempts (read_profile reads them)")
    quiet = quiet_elapsed(profile)
    scale = np.divide(quiet, a.elapsed, out=np.ones(len(a)), where=a.elapsed > 0)
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
    run = (a.run_seconds * scale)[at].astype(float)
    overhead = np.maximum(quiet[at] - run, 0.0)
    run_line = _line(items[ok], run[ok])
    overhead_line = _line(items[ok], overhead[ok])
    warmup = _take_warmup(a, order, piece_of, items, run, overhead, ~ok, run_line,
                          overhead_line)
    failures = _failures(a, order, piece_of, attempts, ok, items, quiet, run_line,
                         overhead_line, run, overhead)
    good = a.ok & (a.elapsed > 0)
    cpu_share = float(np.clip(a.process_seconds[good].sum() / max(quiet[good].sum(), 1e-9),
                              0.0, 1.0)) if good.any() else profile.cpu_share
    settings, tally = profile.settings, profile.tally
    tail = max(profile.tail - tally.tail_lost, 0.0)
    return Workload(
        piece_items=items, piece_run=run, piece_overhead=overhead, piece_final=~ok,
        piece_failures=failures, run=run_line, overhead=overhead_line, warmup=warmup,
        dispatch=profile.dispatch_per_attempt * profile.driver_pace, tail=tail,
        listing=profile.listing, starts=worker_starts(profile), driver=profile.driver_cores,
        cpu_share=cpu_share,
        workers=profile.workers, cores=int(settings.get("cores") or 1),
        items_per_mini_batch=profile.items_per_attempt,
        noise=_noise(items[ok], (run + overhead)[ok]),
        quiet_share=float(quiet.sum() / a.elapsed.sum()) if a.elapsed.sum() > 0 else 1.0,
        timeout_overhead=overhead_line.fixed)


def quiet_elapsed(profile: StepProfile) -> Any:
    """Each attempt's elapsed seconds less its time waiting for a core (its CPU seconds
    are its own; of the rest, the share its worker spent runnable but waiting, as the
    scheduler counted it, is taken off)."""
    a = profile.attempts
    assert a is not None
    waiting = np.maximum(a.elapsed - a.process_seconds, 0.0)
    keep = np.ones(len(a.processes))  # per worker: of the time off a core, the share not delayed
    for index, name in enumerate(a.processes):
        sums = profile.tally.per_worker.get(name)
        if not sums:
            continue
        _attempts, elapsed, cpu, delay = sums
        off_core = max(elapsed - cpu, 0.0)
        keep[index] = max(1.0 - delay / off_core, 0.0) if off_core > 0 else 1.0
    return a.elapsed - waiting * (1.0 - keep[a.process]) if len(a) else a.elapsed


def worker_starts(profile: StepProfile) -> tuple[Start, ...]:
    """Each worker's start-up on a quiet machine, by process start: CPU then waiting (a
    worker measured only from the run's start to ready counts as CPU all the way)."""
    quiet = profile.quiet_starts()
    starts = [Start(*quiet[key]) if key in quiet else Start(0.0, seconds, 0.0)
              for key, seconds in profile.startup_seconds.items()]
    return tuple(sorted(starts, key=lambda start: start.at))


def _failures(a: AttemptTable, order: Any, piece_of: Any, attempts: Any, ok: Any, items: Any,
              quiet: Any, run_line: Line, overhead_line: Line, run: Any,
              overhead: Any) -> dict[int, tuple[Failure, ...]]:
    """Each failed mini-batch's failed attempts, with where in its items each stopped (the
    items its quiet seconds beyond the fixed costs pay for)."""
    failures: dict[int, tuple[Failure, ...]] = {}
    edges = np.concatenate(([0], np.cumsum(items)))
    grouped = np.argsort(piece_of, kind="stable")
    starts = np.concatenate(([0], np.cumsum(attempts)))
    fixed = run_line.fixed + overhead_line.fixed
    for piece in np.flatnonzero((attempts > 1) | ~ok).tolist():
        rows = order[grouped[starts[piece]:starts[piece + 1]]]
        n = int(items[piece])
        if ok[piece]:
            variable = max(float(run[piece] + overhead[piece]) - fixed, 0.0)
        else:
            variable = (run_line.per_item + overhead_line.per_item) * n
        found = []
        for row in rows:
            if a.ok[row]:
                continue
            done = max(float(quiet[row]) - fixed, 0.0)
            share = min(done / variable, 1.0) if variable > 0 else 1.0
            position = edges[piece] + min(share * n, n - 1e-6)
            found.append(Failure(str(a.status[row]), float(position)))
        if found:
            failures[piece] = tuple(found)
    return failures


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


def _noise(items: Any, seconds: Any) -> float:
    """How much a mini-batch's cost per item varies beyond the trend of its neighbours (in
    input order): the spread (a robust standard deviation, of logarithms) of each one's
    ratio to the median of the ``NOISE_WINDOW`` either side; stragglers, which stay where
    they are from run to run, do not widen it."""
    if len(items) < 3:
        return 0.0
    per_item = seconds / items
    padded = np.pad(per_item, NOISE_WINDOW, mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, 2 * NOISE_WINDOW + 1)
    median = np.median(windows, axis=1)
    good = (median > 0) & (per_item > 0)
    if good.sum() < 3:
        return 0.0
    logs = np.log(per_item[good] / median[good])
    return float(min(1.4826 * np.median(np.abs(logs - np.median(logs))), MAX_NOISE))


# -- replaying -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Replay:
    """What a replay found."""

    wall: float  # from the run's start: the last attempt's end + the tail
    makespan: float  # from the first attempt's start to the last one's end
    busy: float  # worker-seconds spent in attempts (dispatch included)
    attempts: int
    mini_batches: int
    workers: int
    lead_in: float = 0.0  # from the run's start to the first attempt
    failed: int = 0  # mini-batches failed for good
    lost: int = 0  # their items

    @property
    def utilisation(self) -> float:
        whole = self.makespan * self.workers
        return min(self.busy / whole, 1.0) if whole > 0 else 0.0


CPU, WORK, WAIT = 0, 1, 2  # the kinds of phase a process is in


def pace(cpu: int, work: int, share: float, cores: float) -> tuple[float, float]:
    """How fast ``cpu`` processes on a core all the time and ``work`` processes on a core
    ``share`` of their time progress when they share ``cores`` (1: as on a quiet machine).

    Each gets the cores in equal slices (processor sharing): a process CPU-bound ``share``
    of its time, given a fraction ``r`` of a core while it computes, takes ``1 - share +
    share / r`` seconds per second of its own; ``r`` is where the processes' use of the
    cores adds up to ``cores``.
    """
    demand = cpu + work * share
    if demand <= cores or demand <= 0:
        return 1.0, 1.0
    s = share
    if s >= 1.0 or work == 0:
        r = cores / (cpu + work if s >= 1.0 else cpu)
        return r, (r if s >= 1.0 else 1.0)
    a = cpu * (1.0 - s)  # cpu r + work s r / ((1 - s) r + s) = cores, a quadratic in r
    b = (cpu + work) * s - cores * (1.0 - s)
    c = -cores * s
    r = -c / b if a == 0 else (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)
    r = min(max(r, 1e-6), 1.0)
    return r, 1.0 / (1.0 - s + s / r)


def replay_here(units: Sequence[Unit], workers: int, *, cores: float,
                starts: Sequence[Start], dispatch: float = 0.0, warmup: float = 0.0,
                listing: float = 0.0, tail: float = 0.0, driver: float = 0.0,
                barrier: float = START_BARRIER_SECONDS) -> Replay:
    """Run ``units`` on ``workers`` processes of one machine of ``cores``, as the driver
    does, with every process sharing the cores: each worker starts at its :class:`Start`
    (CPU, then waiting); the driver hands out the first mini-batches ``listing`` after all
    workers are ready (or ``barrier`` after the first is); a worker's first attempt pays
    ``warmup`` of CPU, each attempt ``dispatch`` plus its duration at its CPU-bound share;
    a free worker takes a retry, else the next mini-batch. ``driver``: the cores the
    driver keeps busy meanwhile."""
    workers = max(int(workers), 1)
    capacity = max(cores - driver, 0.05)
    share = units[0].cpu_share if units else 0.0
    plans = [_start_of(starts, worker) for worker in range(workers)]
    spawn = sorted((start.at, worker) for worker, start in enumerate(plans))
    phases: list[deque[tuple[int, float]]] = [deque() for _ in range(workers)]
    doing: list[tuple[int, int] | None] = [None] * workers  # (unit, attempt) being run
    began = [0.0] * workers  # when it began
    warmed = [False] * workers
    heaps: tuple[list[tuple[float, int]], ...] = ([], [], [])
    clock = [0.0, 0.0, 0.0]  # virtual seconds of the CPU and WORK kinds; WAIT: real seconds
    rates = [1.0, 1.0, 1.0]
    retries: deque[tuple[int, int]] = deque()
    idle: list[int] = []
    fresh = 0
    opens: float | None = None  # when the driver hands out the first mini-batch
    deadline: float | None = None  # the first worker ready + barrier
    ready = 0
    first: float | None = None
    end = busy = 0.0
    attempts = failed = lost = 0
    spawned = 0

    def push(worker: int, kind: int, amount: float) -> None:
        heapq.heappush(heaps[kind], (clock[kind] + max(amount, 0.0), worker))

    def take(worker: int, now: float) -> None:
        """Give ``worker`` its next attempt, or leave it idle."""
        nonlocal fresh, first
        if retries:
            index, number = retries.popleft()
        elif fresh < len(units):
            index, number = fresh, 0
            fresh += 1
        else:
            idle.append(worker)
            return
        if first is None:
            first = now
        doing[worker] = (index, number)
        began[worker] = now
        seconds = dispatch + units[index].attempts[number]
        if not warmed[worker]:
            warmed[worker] = True
            phases[worker].append((WORK, seconds))
            push(worker, CPU, warmup)
        else:
            push(worker, WORK, seconds)

    paces: dict[tuple[int, int], tuple[float, float]] = {}
    while True:
        crowd = (len(heaps[CPU]), len(heaps[WORK]))
        found = paces.get(crowd)
        if found is None:
            found = paces[crowd] = pace(crowd[0], crowd[1], share, capacity)
        rates[CPU], rates[WORK] = found
        step = math.inf
        for kind in (CPU, WORK, WAIT):
            heap = heaps[kind]
            if heap:
                due = (heap[0][0] - clock[kind]) / rates[kind]
                if due < step:
                    step = due
        if spawned < workers:
            step = min(step, spawn[spawned][0] - clock[WAIT])
        if opens is not None and idle and (fresh < len(units) or retries):
            step = min(step, max(opens - clock[WAIT], 0.0))
        if opens is None and deadline is not None:
            step = min(step, deadline - clock[WAIT])
        if step == math.inf:
            break
        step = max(step, 0.0)
        for kind in (CPU, WORK, WAIT):
            clock[kind] += step * rates[kind]
        now = clock[WAIT]
        if opens is None and deadline is not None and now >= deadline - 1e-12:
            opens = deadline + listing
        while spawned < workers and spawn[spawned][0] <= now + 1e-12:
            worker = spawn[spawned][1]
            spawned += 1
            phases[worker].append((WAIT, plans[worker].wait))
            phases[worker].append((WAIT, -1.0))  # ready
            push(worker, CPU, plans[worker].cpu)
        if opens is not None and clock[WAIT] >= opens - 1e-12 and idle:
            waiting, idle[:] = list(idle), []
            for worker in waiting:
                take(worker, now)
        for kind in (CPU, WORK, WAIT):
            heap = heaps[kind]
            while heap and heap[0][0] <= clock[kind] + 1e-12:
                _, worker = heapq.heappop(heap)
                if phases[worker]:
                    next_kind, amount = phases[worker].popleft()
                    if amount >= 0:
                        push(worker, next_kind, amount)
                        continue
                    ready += 1
                    if deadline is None:
                        deadline = now + barrier
                    if opens is None and ready == workers:  # all ready: the driver lists
                        opens = now + listing
                    if opens is None or now < opens - 1e-12:
                        idle.append(worker)
                        continue
                    take(worker, now)
                    continue
                current = doing[worker]
                if current is not None:  # an attempt ended
                    index, number = current
                    doing[worker] = None
                    attempts += 1
                    busy += now - began[worker]
                    end = max(end, now)
                    unit = units[index]
                    if number + 1 < len(unit.attempts):
                        retries.append((index, number + 1))
                        if idle:
                            take(idle.pop(0), now)
                    elif unit.lost:
                        failed += 1
                        lost += unit.lost
                take(worker, now)
    first = first or 0.0
    return Replay(end + tail, max(end - first, 0.0), busy, attempts, len(units), workers,
                  first, failed, lost)


def _start_of(starts: Sequence[Start], worker: int) -> Start:
    """Worker ``worker``'s start-up: as measured, or for more workers than measured, the
    median one started after the last, as far apart as the measured ones."""
    if not starts:
        return Start(0.0, 0.0, 0.0)
    if worker < len(starts):
        return starts[worker]
    gaps = [b.at - a.at for a, b in zip(starts, starts[1:], strict=False)]
    spacing = statistics.median(gaps) if gaps else 0.0
    return Start(starts[-1].at + spacing * (worker - len(starts) + 1),
                 statistics.median(s.cpu for s in starts),
                 statistics.median(s.wait for s in starts))


def replay(units: Sequence[Unit], workers: int, *, dispatch: float, lead_in: float = 0.0,
           tail: float = 0.0, slowdown: float = 1.0, rate: float | None = None,
           warmup: float = 0.0) -> Replay:
    """Schedule ``units`` on ``workers`` as the driver does, each attempt at a fixed pace (a
    node of the cloud): a free worker takes a retry that is due, else the next mini-batch;
    each attempt costs ``dispatch`` plus its duration times ``slowdown`` (its processes
    outnumbering its cores); a worker's first attempt also pays ``warmup``. ``rate`` caps
    how many mini-batches per second can be handed out (PRS's scheduler: about 400/s)."""
    workers = max(int(workers), 1)
    free = [(0.0, worker) for worker in range(workers)]
    started: set[int] = set()
    retries: list[tuple[float, int, int]] = []  # (due, unit, attempt number)
    busy = makespan = 0.0
    attempts = failed = lost = 0
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
        seconds = dispatch + unit.attempts[number] * slowdown
        if worker not in started:
            started.add(worker)
            seconds += warmup
        end = start + seconds
        busy += seconds
        attempts += 1
        if number + 1 < len(unit.attempts):
            heapq.heappush(retries, (end, index, number + 1))
        elif unit.lost:
            failed += 1
            lost += unit.lost
        heapq.heappush(free, (end, worker))
        makespan = max(makespan, end)
    return Replay(lead_in + makespan + tail, makespan, busy, attempts, len(units), workers,
                  lead_in, failed, lost)


def slowdown(processes: int, cpu_share: float, cores: float) -> float:
    """How much longer an attempt CPU-bound ``cpu_share`` of its time takes when
    ``processes`` of them share ``cores`` (processor sharing: ``processes x cpu_share /
    cores`` once that is above 1)."""
    return max(1.0, processes * cpu_share / max(cores, 1e-9))


__all__ = ["CPU", "WAIT", "WORK", "Failure", "Line", "Replay", "Start", "Unit", "Workload",
           "fit", "pace", "quiet_elapsed", "replay", "replay_here", "slowdown", "worker_starts"]
