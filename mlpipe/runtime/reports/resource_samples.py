"""``logs/sys/perf/samples.csv``: CPU and memory of the machine and of every worker process,
sampled by the driver ten times a second, whatever ``--resource_monitor_interval`` (which
still governs the ``sys/perf/<node>/*.csv`` files of :mod:`mlpipe.runtime.reports.perf`; 0 turns
both off).

The job report (:mod:`mlpipe.jobs.report`) draws them on the step's time axis
(``Seconds`` counts from the start of the step's run), so a step of two seconds has a curve
too. A long step keeps the file bounded: every ``THIN_AFTER`` samples the interval doubles.
"""

from __future__ import annotations

import csv
import threading
import time
from datetime import datetime
from pathlib import Path

import psutil

from mlpipe.plan import ParallelStep
from mlpipe.runtime.records import StepObserver, StepSummary, WorkerInfo
from mlpipe.runtime.reports.job_report import process_label
from mlpipe.runtime.step_logs import StepLogs
from mlpipe.runtime.tuning.profile import MACHINE

SAMPLE_SECONDS = 0.1
THIN_AFTER = 600
COLUMNS = ("Seconds", "Source", "CPU Percent", "Memory MB")


def samples_path(logs_dir: str | Path) -> Path:
    return StepLogs.of(logs_dir).samples


class ResourceSampler(StepObserver):
    """Samples on a daemon thread from ``step_started`` to ``step_finished``."""

    def __init__(self, step: ParallelStep, interval: float = SAMPLE_SECONDS) -> None:
        self.path = samples_path(step.logs_dir)
        self.interval = interval
        self._pids: dict[str, psutil.Process] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._began = 0.0

    def step_started(self, step: ParallelStep, workers: list[WorkerInfo], at: datetime) -> None:
        for worker in workers:
            self._watch(worker)
        self._began = time.monotonic() - max(time.time() - at.timestamp(), 0.0)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._run, name="mlpipe-samples", daemon=True)
        self._thread.start()

    def worker_event(self, worker: WorkerInfo, event: str, message: str) -> None:
        if event in ("started", "replaced"):
            self._watch(worker)

    def step_finished(self, summary: StepSummary) -> None:
        self.close()

    def close(self) -> None:
        """Stop sampling (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _watch(self, worker: WorkerInfo) -> None:
        if worker.pid is None:
            return
        try:
            process = psutil.Process(worker.pid)
            process.cpu_percent(None)  # the first call only starts the measurement
        except psutil.Error:
            return
        with self._lock:
            self._pids[process_label(worker)] = process

    def _run(self) -> None:
        psutil.cpu_percent(None)
        interval, taken = self.interval, 0
        with open(self.path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(COLUMNS)
            while not self._stop.wait(interval):
                writer.writerows(self._sample())
                handle.flush()
                taken += 1
                if taken % THIN_AFTER == 0:
                    interval *= 2
            writer.writerows(self._sample())

    def _sample(self) -> list[tuple[str, str, str, str]]:
        at = f"{time.monotonic() - self._began:.2f}"
        memory = psutil.virtual_memory()
        rows = [(at, MACHINE, f"{psutil.cpu_percent(None):.1f}",
                 f"{(memory.total - memory.available) / 2**20:.1f}")]
        with self._lock:
            watched = list(self._pids.items())
        for label, process in watched:
            try:
                with process.oneshot():
                    rows.append((at, label, f"{process.cpu_percent(None):.1f}",
                                 f"{process.memory_info().rss / 2**20:.1f}"))
            except psutil.Error:
                continue  # the worker ended
        return rows
