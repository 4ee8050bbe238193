"""The profile of a parallel step's run: where its time went, per mini-batch and per worker.

:class:`ProfileTally` adds up the attempts while the step runs (a few additions each, no
list that grows: the per-attempt rows stay in ``processed_mini-batches.csv``) and is kept in
``runs.json``; :func:`read_profile` joins it with the run's attempts, settings, worker
start-ups and resource samples into a :class:`StepProfile`, the one model that job_result.txt,
report.html and ``mlpipe job advise`` read.
"""

from __future__ import annotations

import csv
import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import reduce
from operator import add, attrgetter
from typing import Any

from mlpipe.runtime.concurrency import START_BARRIER_SECONDS
from mlpipe.runtime.records import AttemptRecord
from mlpipe.runtime.step_logs import (
    AttemptTable,
    RunEntry,
    StepLogs,
    read_attempts,
    read_runs,
    split_by_run,
)
from mlpipe.runtime.tuning.schedstat import Usage, load_average, process_age, process_usage

HISTOGRAM_STEPS = 4  # buckets per doubling of a duration
_TOTAL, _SIZE, _ELAPSED, _RUN, _LOAD, _CPU = map(attrgetter, (
    "total", "size_bytes", "elapsed_seconds", "run_method_seconds", "load_seconds",
    "process_seconds"))  # columns of a batch of attempts
MACHINE = "machine"  # the machine's row in samples.csv
SNAPSHOT_SECONDS = 0.25  # the driver's CPU and run-delay read at most this often
MACHINE_FIELDS = ("startup", "machine_load", "driver", "listing_lost", "tail_lost")


def bucket_of(seconds: float) -> int:
    """The duration-histogram bucket of ``seconds`` (0 below 1 µs; 4 buckets per doubling)."""
    if seconds <= 1e-6:
        return 0
    return 1 + int(HISTOGRAM_STEPS * math.log2(seconds * 1e6))


def bucket_bounds(index: int) -> tuple[float, float]:
    """The seconds a histogram bucket covers."""
    if index <= 0:
        return 0.0, 1e-6
    low = 2 ** ((index - 1) / HISTOGRAM_STEPS) / 1e6
    return low, low * 2 ** (1 / HISTOGRAM_STEPS)


@dataclass
class ProfileTally:
    """Sums over one run's attempts; :meth:`add` costs about a microsecond."""

    attempts: int = 0
    failed_attempts: int = 0
    retried_attempts: int = 0
    timeouts: int = 0
    items: int = 0
    bytes: int = 0
    elapsed: float = 0.0
    run: float = 0.0
    load: float = 0.0
    cpu: float = 0.0
    max_elapsed: float = 0.0
    max_run_ok: float = 0.0  # the slowest run() of a successful attempt
    max_run_ok_items: int = 0
    max_items: int = 0
    gaps: float = 0.0  # a worker's time between the end of an attempt and its next start
    gap_count: int = 0
    gap_histogram: dict[int, int] = field(default_factory=dict)
    histogram: dict[int, int] = field(default_factory=dict)  # attempts' elapsed seconds
    first_start: float | None = None
    last_end: float = 0.0
    tabular: bool = False  # the mini-batches are table rows (mini_batch_size counts bytes)
    # waiting for a core (Linux run-delay): the attempts' sum, and the elapsed it is part of
    delay: float = 0.0
    delay_elapsed: float = 0.0
    # per worker ("node/process"): attempts, elapsed, CPU and run-delay seconds
    per_worker: dict[str, list[float]] = field(default_factory=dict)
    # per worker started: process start and ready (seconds from the run's start), then the
    # CPU and run-delay seconds its start-up took (imports, init())
    startup: dict[str, list[float]] = field(default_factory=dict)
    machine_load: list[float] = field(default_factory=list)  # 1-minute load: start, end
    driver: list[float] = field(default_factory=list)  # the driver's CPU, run-delay seconds
    # of the driver listing the first mini-batches (the workers up to the first attempt) and
    # of the tail (the last attempt to the end): the seconds it lost waiting for a core
    listing_lost: float = 0.0
    tail_lost: float = 0.0
    _worker_end: dict[str, float] = field(default_factory=dict, repr=False)
    _marks: dict[str, Any] = field(default_factory=dict, repr=False)

    def add(self, record: AttemptRecord, epoch: float | None = None) -> None:
        """Add ``record`` (``epoch``: its start time's ``timestamp()``, when known)."""
        self.add_all((record,), (record.start_time.timestamp() if epoch is None else epoch,))

    def add_all(self, records: Sequence[AttemptRecord], epochs: Sequence[float]) -> None:
        """Add ``records``, in order (``epochs``: their start times' ``timestamp()``): the
        sums and extremes a column at a time, in the order one by one would add them."""
        if not records:
            return
        if not self.attempts:
            self.tabular = "mltable" in records[0].detail
        self.attempts += len(records)
        self.items += sum(map(_TOTAL, records))
        self.bytes += sum(map(_SIZE, records))
        elapsed = list(map(_ELAPSED, records))
        self.elapsed = reduce(add, elapsed, self.elapsed)
        self.run = reduce(add, map(_RUN, records), self.run)
        self.load = reduce(add, map(_LOAD, records), self.load)
        self.cpu = reduce(add, map(_CPU, records), self.cpu)
        self.max_elapsed = max(self.max_elapsed, max(elapsed))
        self.max_items = max(self.max_items, max(map(_TOTAL, records)))
        first = min(epochs)
        if self.first_start is None or first < self.first_start:
            self.first_start = first
        ends = list(map(add, epochs, elapsed))
        self.last_end = max(self.last_end, max(ends))
        histogram, gap_histogram, worker_end = self.histogram, self.gap_histogram, \
            self._worker_end
        for index in map(bucket_of, elapsed):
            histogram[index] = histogram.get(index, 0) + 1
        worker, key = None, ""
        per_worker = self.per_worker
        sums: list[float] = []
        for record, start, end in zip(records, epochs, ends, strict=True):
            if record.worker is not worker:
                worker = record.worker
                key = f"{worker.node}/{worker.process}"
                sums = per_worker.setdefault(key, [0, 0.0, 0.0, 0.0])
            waited = record.run_delay_seconds
            sums[0] += 1
            sums[1] += record.elapsed_seconds
            sums[2] += record.process_seconds
            if waited is not None:
                sums[3] += waited
                self.delay += waited
                self.delay_elapsed += record.elapsed_seconds
            previous = worker_end.get(key)
            if previous is not None and start >= previous:
                gap = start - previous
                self.gaps += gap
                self.gap_count += 1
                gap_index = bucket_of(gap)
                gap_histogram[gap_index] = gap_histogram.get(gap_index, 0) + 1
            worker_end[key] = end
            if record.status == "Succeeded" and record.failed == 0:
                if record.run_method_seconds > self.max_run_ok:
                    self.max_run_ok = record.run_method_seconds
                    self.max_run_ok_items = record.total
                continue
            self.failed_attempts += 1
            if not record.final:
                self.retried_attempts += 1
            if record.status == "Timeout":
                self.timeouts += 1
        marks = self._marks
        now = time.monotonic()
        if now - marks.get("seen", (0.0, None))[0] >= SNAPSHOT_SECONDS:
            marks["seen"] = (now, process_usage())  # the driver's, for the tail

    # -- the run's machine: start-ups, the driver, the load ------------------------------
    def run_started(self, at: float) -> None:
        """The run starts (``at``: its ``time.time()``): the machine's load, the driver's
        CPU and run-delay so far."""
        self._marks.update(started=at, driver=process_usage())
        load = load_average()
        self.machine_load = [] if load is None else [round(load, 2)]

    def worker_ready(self, key: str, pid: int | None, now: float) -> None:
        """Worker ``key`` (process ``pid``) finished init() at ``now``: when its process
        started, and the CPU and run-delay its start-up took."""
        started = self._marks.get("started")
        if "listed" not in self._marks:  # the driver lists the first mini-batches from here
            self._marks["ready"] = (time.monotonic(), process_usage())
        if pid is None or started is None or key in self.startup:
            return
        age, usage = process_age(pid), process_usage(pid)
        if age is None or usage is None or now - age < started - 1.0:
            return  # not a process of this run (a Dask worker started earlier)
        self.startup[key] = [round(max(now - age - started, 0.0), 4),
                             round(now - started, 4), round(usage.cpu, 4),
                             round(usage.delay, 4)]

    def first_listed(self) -> None:
        """The driver listed its first mini-batches (once the workers were up): what it
        lost waiting for a core since the last worker was ready."""
        if "listed" not in self._marks:
            self._marks["listed"] = True
            self.listing_lost = _lost(self._marks.get("ready"),
                                      (time.monotonic(), process_usage()))

    def run_ended(self) -> None:
        """The run ended: the load now, the driver's CPU and run-delay over the run, and its
        run-delay after the last attempt."""
        load = load_average()
        if self.machine_load and load is not None:
            self.machine_load.append(round(load, 2))
        before, now = self._marks.get("driver"), process_usage()
        if before is not None and now is not None:
            used = now.since(before)
            self.driver = [round(used.cpu, 4), round(used.delay, 4)]
        self.tail_lost = _lost(self._marks.get("seen"), (time.monotonic(), now))

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("_worker_end")
        data.pop("_marks")
        return data

    def attempt_sums(self) -> dict[str, Any]:
        """:meth:`as_json` without what the machine measured beside the attempts (the
        workers' start-ups, the load, the driver): the figures the attempts alone give."""
        data = self.as_json()
        for name in MACHINE_FIELDS:
            data.pop(name)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProfileTally:
        known = {name for name in cls.__dataclass_fields__ if not name.startswith("_")}
        values = {key: value for key, value in data.items() if key in known}
        for key in ("histogram", "gap_histogram"):
            values[key] = {int(k): int(v) for k, v in (values.get(key) or {}).items()}
        return cls(**values)

    @classmethod
    def of(cls, attempts: AttemptTable) -> ProfileTally:
        """The tally of attempts read back (when ``runs.json`` has none: older logs)."""
        import numpy as np  # noqa: PLC0415

        tally = cls()
        if not len(attempts):
            return tally
        ok = attempts.ok
        tally.attempts = len(attempts)
        tally.failed_attempts = int((~ok).sum())
        tally.timeouts = int((attempts.status == "Timeout").sum())
        tally.items = int(attempts.total.sum())
        tally.elapsed = float(attempts.elapsed.sum())
        tally.run = float(attempts.run_seconds.sum())  # load is not in the CSV: in "result"
        tally.cpu = float(attempts.process_seconds.sum())
        tally.max_elapsed = float(attempts.elapsed.max())
        if ok.any():
            best = int(np.argmax(np.where(ok, attempts.run_seconds, -1.0)))
            tally.max_run_ok = float(attempts.run_seconds[best])
            tally.max_run_ok_items = int(attempts.total[best])
        tally.max_items = int(attempts.total.max())
        tally.histogram = _histogram(attempts.elapsed)
        order = np.lexsort((attempts.start, attempts.process))
        process = attempts.process[order]
        same = process[1:] == process[:-1]
        gaps = (attempts.start[order][1:] - attempts.end[order][:-1])[same]
        gaps = gaps[gaps >= 0]
        tally.gaps, tally.gap_count = float(gaps.sum()), len(gaps)
        tally.gap_histogram = _histogram(gaps)
        tally.first_start = float(attempts.start.min())
        tally.last_end = float(attempts.end.max())
        tally.tabular = '"mltable"' in str(attempts.detail[0].as_py())
        return tally


def _lost(since: tuple[float, Usage | None] | None,
          until: tuple[float, Usage | None]) -> float:
    """Of the time between two of the driver's ``(time.monotonic(), usage)`` marks, the
    seconds it lost waiting for a core: its run-delay, or, when its threads were runnable
    together longer than the time itself, that time at their pace (CPU / (CPU + delay))."""
    if since is None or since[1] is None or until[1] is None:
        return 0.0
    seconds = max(until[0] - since[0], 0.0)
    cpu, delay, _threads = until[1].since(since[1])
    wanted = cpu + delay
    if delay <= 0 or wanted <= 0:
        return 0.0
    return round(min(delay * min(1.0, seconds / wanted), seconds), 4)


def _histogram(seconds: Any) -> dict[int, int]:
    """:func:`bucket_of` over an array of durations."""
    import numpy as np  # noqa: PLC0415

    if not len(seconds):
        return {}
    micros = np.maximum(seconds * 1e6, 1e-9)
    index = np.where(seconds <= 1e-6, 0, 1 + np.floor(HISTOGRAM_STEPS * np.log2(micros)))
    values, counts = np.unique(index.astype(int), return_counts=True)
    return {int(v): int(c) for v, c in zip(values, counts, strict=True)}


def histogram_median(histogram: dict[int, int]) -> float:
    """The middle value of a bucketed histogram (the geometric centre of its bucket)."""
    total = sum(histogram.values())
    if not total:
        return 0.0
    seen = 0
    for index in sorted(histogram):
        seen += histogram[index]
        if seen * 2 >= total:
            low, high = bucket_bounds(index)
            return math.sqrt(low * high) if low > 0 else high / 2
    return 0.0


@dataclass
class WorkerUsage:
    """A worker process's CPU and memory, from ``sys/perf/samples.csv``."""

    cpu_mean: float = 0.0  # % of one core, over the samples taken while it lived
    cpu_peak: float = 0.0
    memory_peak_mb: float = 0.0
    samples: int = 0


@dataclass
class StepProfile:
    """One run of a step, measured: the figures every tuning view reads.

    Times are seconds. Per mini-batch: ``dispatch`` (mlpipe handing it over: a worker's
    typical gap between two attempts), ``load`` (reading the mini-batch), ``run`` (run()),
    ``result`` (counting and formatting its result). ``waiting`` is the rest of the
    workers' idle time between attempts (no work queued).
    """

    logs: StepLogs
    run_index: int
    runs: int  # how many runs the step had
    started: float
    ended: float | None
    status: str
    settings: dict[str, Any]
    tally: ProfileTally
    attempts: AttemptTable | None  # None: a profile of the sums alone (the driver's, at the end)
    startup_seconds: dict[str, float]
    usage: dict[str, WorkerUsage]
    errors: list[dict[str, Any]]
    counts: dict[str, int]
    reused: int = 0

    # -- measured --------------------------------------------------------------------
    @property
    def wall(self) -> float:
        end = self.ended if self.ended is not None else max(self.tally.last_end, self.started)
        return max(end - self.started, 0.0)

    @property
    def workers(self) -> int:
        seen = len(set(self.attempts.process.tolist())) if self.attempts is not None else 0
        return int(self.settings.get("workers") or len(self.startup_seconds) or seen or 1)

    @property
    def lead_in(self) -> float:
        """From the run's start to its first attempt: workers starting, the listing."""
        first = self.tally.first_start
        return max(first - self.started, 0.0) if first is not None else self.wall

    @property
    def tail(self) -> float:
        """From the last attempt's end to the run's end: shutdown(), append_row, reports."""
        if self.tally.first_start is None:
            return 0.0
        return max(self.started + self.wall - self.tally.last_end, 0.0)

    # -- per mini-batch (per attempt) -------------------------------------------------
    def _per_attempt(self, total: float) -> float:
        return total / self.tally.attempts if self.tally.attempts else 0.0

    @property
    def run_per_attempt(self) -> float:
        return self._per_attempt(self.tally.run)

    @property
    def load_per_attempt(self) -> float:
        return self._per_attempt(self.tally.load)

    @property
    def result_per_attempt(self) -> float:
        return self._per_attempt(max(self.tally.elapsed - self.tally.run - self.tally.load, 0.0))

    @property
    def dispatch_per_attempt(self) -> float:
        """mlpipe's own time per mini-batch: the typical (median) gap between two attempts of
        one worker (idle waits for work are the long gaps, left out)."""
        return histogram_median(self.tally.gap_histogram)

    @property
    def overhead_per_attempt(self) -> float:
        """Everything but run(): dispatch, load and result handling."""
        return self.dispatch_per_attempt + self.load_per_attempt + self.result_per_attempt

    @property
    def overhead_share(self) -> float:
        """Overhead / (overhead + run()) per mini-batch, 0-1."""
        whole = self.overhead_per_attempt + self.run_per_attempt
        return self.overhead_per_attempt / whole if whole > 0 else 0.0

    @property
    def waiting(self) -> float:
        """The workers' idle time between attempts beyond the dispatch (no work queued)."""
        return max(self.tally.gaps - self.dispatch_per_attempt * self.tally.gap_count, 0.0)

    @property
    def time_per_item(self) -> float:
        """run() seconds per item."""
        return self.tally.run / self.tally.items if self.tally.items else 0.0

    @property
    def items_per_attempt(self) -> float:
        return self.tally.items / self.tally.attempts if self.tally.attempts else 0.0

    @property
    def bytes_per_item(self) -> float:
        return self.tally.bytes / self.tally.items if self.tally.items else 0.0

    @property
    def cpu_share(self) -> float:
        """CPU seconds / the attempts' seconds on a core or waiting for I/O (their elapsed
        less their run-delay, the time they waited for a core): 1 = CPU-bound, 0 = waiting;
        the same on a busy machine as on a quiet one."""
        t = self.tally
        own = t.elapsed * (1.0 - self.run_delay_share)
        return min(t.cpu / own, 1.0) if own > 0 else 0.0

    @property
    def run_delay_share(self) -> float:
        """Of the attempts' elapsed seconds, the share spent waiting for a core (0 when the
        scheduler's figures are not known)."""
        t = self.tally
        return min(t.delay / t.delay_elapsed, 1.0) if t.delay_elapsed > 0 else 0.0

    @property
    def driver_cores(self) -> float:
        """The cores the driver kept busy while the step ran."""
        driver = self.tally.driver
        return min(driver[0] / self.wall, 1.0) if driver and self.wall > 0 else 0.0

    def external_delay(self) -> dict[str, tuple[float, float]]:
        """Per worker, the run-delay other processes caused its start-up and its attempts:
        their time waiting for a core beyond what the step's own processes sharing the
        cores explain (each attempt is slowed ``workers x CPU share / cores`` once that is
        above 1, each start-up's CPU ``workers / cores``)."""
        t = self.tally
        cores = max(float(self.settings.get("cores") or 1) - self.driver_cores, 0.05)
        crowd = max(1.0, len(t.per_worker) * self.cpu_share / cores)
        starting = max(1.0, len(t.startup) / cores)
        out = {}
        for key, (_attempts, elapsed, _cpu, delay) in t.per_worker.items():
            attempts = max(delay - max(elapsed - delay, 0.0) * (crowd - 1.0), 0.0)
            start = t.startup.get(key)
            startup = max(start[3] - start[2] * (starting - 1.0), 0.0) if start else 0.0
            out[key] = (startup, attempts)
        return out

    def quiet_starts(self) -> dict[str, tuple[float, float, float]]:
        """Per worker started, as on a quiet machine: when its process started (the driver
        spawning at its pace without the load), its start-up's CPU seconds, and its waiting
        (``init()`` reading a model, sleeping). The waiting is what stays of ready - start -
        CPU - run-delay once the driver's lateness in noticing a ready worker under load is
        taken off: beyond the least any worker waited, only the driver's pace's share."""
        t, pace = self.tally, self.driver_pace
        if not t.startup:
            return {}
        waits = {key: max(ready - at - cpu - delay, 0.0)
                 for key, (at, ready, cpu, delay) in t.startup.items()}
        least = min(waits.values())
        return {key: (at * pace, cpu, least + (waits[key] - least) * pace)
                for key, (at, _ready, cpu, _delay) in t.startup.items()}

    @property
    def quiet_wall(self) -> float:
        """The wall time this run would have taken without other processes on the machine
        (the wall itself when not measured): the lead-in of its workers' quiet start-ups
        (sharing the cores when they outnumber them) and the driver's listing at its pace
        without the load, the attempts' span at the pace of the workers' time less the
        run-delay other processes caused (the gaps between a worker's attempts, waiting for
        the driver, at the driver's), and the tail less what the driver lost waiting for a
        core."""
        delays = self.external_delay()
        t = self.tally
        if not delays or t.first_start is None:
            return self.wall
        starts = self.quiet_starts()
        if starts:
            cores = max(float(self.settings.get("cores") or 1), 1.0)
            starting = max(1.0, len(starts) / cores)
            ready = [at + cpu * starting + wait for at, cpu, wait in starts.values()]
            lead_in = min(max(ready), min(ready) + START_BARRIER_SECONDS) + self.listing
        else:
            lead_in = self.lead_in * self.driver_pace
        elapsed = sum(sums[1] for sums in t.per_worker.values())
        caused = sum(attempts for _startup, attempts in delays.values())
        pace = (elapsed - caused) / elapsed if elapsed > 0 else 1.0
        handing = t.gaps / len(delays)  # a worker's time between its attempts: the driver's
        span = max(t.last_end - t.first_start - handing, 0.0) * pace \
            + handing * self.driver_pace
        return min(lead_in + span + max(self.tail - t.tail_lost, 0.0), self.wall)

    @property
    def driver_pace(self) -> float:
        """Of the driver's time wanting a core, the share it had one (1: a quiet machine)."""
        driver = self.tally.driver
        wanted = driver[0] + driver[1] if driver else 0.0
        return driver[0] / wanted if wanted > 0 else 1.0

    @property
    def barrier(self) -> float:
        """When the driver could hand out the first mini-batch (from the run's start): all
        workers ready, or ``START_BARRIER_SECONDS`` after the first one."""
        ready = list(self.startup_seconds.values())
        return min(max(ready), min(ready) + START_BARRIER_SECONDS) if ready else 0.0

    @property
    def listing(self) -> float:
        """From :attr:`barrier` to the first attempt less what the driver lost waiting for
        a core meanwhile: the driver listing the first mini-batches, as on a quiet machine."""
        return max(self.lead_in - self.barrier - self.tally.listing_lost, 0.0)

    @property
    def contention(self) -> float:
        """Of the attempts' elapsed seconds, the share other processes kept them waiting
        for a core (0: a quiet machine, or not measured)."""
        elapsed = sum(sums[1] for sums in self.tally.per_worker.values())
        caused = sum(attempts for _startup, attempts in self.external_delay().values())
        return min(caused / elapsed, 1.0) if elapsed > 0 else 0.0

    @property
    def memory_per_worker_mb(self) -> float:
        """The largest resident memory a worker reached (0 when not sampled)."""
        return max((u.memory_peak_mb for u in self.usage.values()), default=0.0)

    @property
    def startup_per_worker(self) -> float:
        """A worker's start-up (process, imports, init()), the median over workers."""
        values = list(self.startup_seconds.values())
        return statistics.median(values) if values else 0.0

    @property
    def utilisation(self) -> float:
        """Busy seconds / (wall x workers), 0-1."""
        whole = self.wall * self.workers
        return min(self.tally.elapsed / whole, 1.0) if whole > 0 else 0.0

    @property
    def machine_load(self) -> list[float]:
        """The machine's 1-minute load average at the run's start and end (when known)."""
        return list(self.tally.machine_load)


def read_profile(logs: StepLogs, run_index: int = -1, *,
                 attempts: AttemptTable | None = None) -> StepProfile | None:
    """The profile of run ``run_index`` of the step (the last by default); ``None`` when the
    step recorded no run and no attempt. ``attempts`` (all of the step's, as
    :func:`~mlpipe.runtime.step_logs.read_attempts` gives them) saves reading them again."""
    runs = read_runs(logs)
    every = read_attempts(logs) if attempts is None else attempts
    if not runs and not len(every):
        return None
    parts = split_by_run(every, runs)
    index = run_index if run_index >= 0 else len(parts) + run_index
    mine = parts[index]
    if not runs:  # logs written before runs.json: one run spanning the attempts
        first = float(mine.start.min()) if len(mine) else 0.0
        runs = [RunEntry(started=first, ended=float(mine.end.max()) if len(mine) else first,
                         status="")]
        index = 0
    return run_profile(logs, runs, index, mine)


def run_profile(logs: StepLogs, runs: list[RunEntry], index: int = -1,
                attempts: AttemptTable | None = None) -> StepProfile:
    """The profile of ``runs[index]`` from what ``runs.json`` keeps of it (its tally; else
    one of ``attempts``, its rows), without reading processed_mini-batches.csv."""
    index = index if index >= 0 else len(runs) + index
    run = runs[index]
    tally = ProfileTally.from_json(run.tally) if run.tally or attempts is None \
        else ProfileTally.of(attempts)
    usage = read_usage(logs) if index == len(runs) - 1 else {}
    return StepProfile(logs, index, len(runs), run.started, run.ended, run.status,
                       dict(run.settings), tally, attempts, dict(run.startup_seconds), usage,
                       list(run.errors), dict(run.counts), run.reused)


def read_usage(logs: StepLogs) -> dict[str, WorkerUsage]:
    """Each worker's CPU and memory from ``samples.csv`` (the machine as ``"machine"``)."""
    usage: dict[str, WorkerUsage] = {}
    try:
        with open(logs.samples, newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                try:
                    cpu, memory = float(row["CPU Percent"]), float(row["Memory MB"])
                except (KeyError, TypeError, ValueError):
                    continue
                entry = usage.setdefault(row.get("Source") or "", WorkerUsage())
                entry.cpu_mean = (entry.cpu_mean * entry.samples + cpu) / (entry.samples + 1)
                entry.samples += 1
                entry.cpu_peak = max(entry.cpu_peak, cpu)
                entry.memory_peak_mb = max(entry.memory_peak_mb, memory)
    except OSError:
        return {}
    usage.pop(MACHINE, None)
    return usage


__all__ = ["ProfileTally", "StepProfile", "WorkerUsage", "bucket_bounds", "bucket_of",
           "histogram_median", "read_profile", "read_usage", "run_profile"]
