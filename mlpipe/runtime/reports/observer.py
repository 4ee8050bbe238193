"""The driver-side logs of a parallel step, in Azure's ``logs/`` layout.

:class:`StepReports` is a :class:`~mlpipe.runtime.records.StepObserver`: the
driver calls it from its own thread and it writes, below ``step.logs_dir``::

    job_result.txt                                 written at the end
    readme.txt                                     written last, lists the files that exist
    job_progress_overview.<yyyymmddhh>.txt         rewritten at most once a second
    sys/master_role.txt                            the driver log (``StepReports.logger``)
    sys/job_report/processed_mini-batches.csv      one row per attempt, streamed
    sys/job_report/process_summary.csv             written at the end
    sys/job_report/node_summary.csv                written at the end
    sys/perf/<node>/node_resource_usage.csv        sampled (resource_monitor_interval > 0)
    sys/perf/<node>/processes_resource_usage.csv
    user/error.txt                                 when something failed
    user/error/<node>/<process>.txt                tracebacks of failed attempts
    sys/task_stream.html                           attempts over time per worker (dense: bucketed)

With ``--copy_logs_to_parent True`` the summary files are also copied to the
job's run folder (see :func:`copy_logs_to_parent`). A resumed step
(``resume=True``) appends to processed_mini-batches.csv and the error files
instead of starting them again.

The worker-side files (``user/stdout``, ``user/stderr``, ``user/entry_script_log``)
are written by the workers; readme.txt describes them when they exist.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

from mlpipe.plan import ParallelStep
from mlpipe.runtime.counters import StepCounters, attempt_failed
from mlpipe.runtime.error_groups import ErrorGroups
from mlpipe.runtime.faults import describe_fault, naming
from mlpipe.runtime.records import AttemptRecord, StepObserver, StepSummary, WorkerInfo
from mlpipe.runtime.reports.driver_cpu import DriverCpu
from mlpipe.runtime.reports.driver_log import close_logger, master_role_logger
from mlpipe.runtime.reports.job_report import ProcessedMiniBatchesCsv, WorkerStats, process_label
from mlpipe.runtime.reports.job_result import (
    ErrorLog,
    error_lines,
    items_line,
    mini_batches_line,
    render_error_summary,
    render_job_result,
)
from mlpipe.runtime.reports.overview import ProgressOverview
from mlpipe.runtime.reports.perf import ResourceMonitor
from mlpipe.runtime.reports.readme import write_readme
from mlpipe.runtime.reports.run_chart import (
    FirstAttempts,
    RunChart,
    Slowest,
    hide_live,
    show_live,
)
from mlpipe.runtime.reports.task_stream import write_task_stream
from mlpipe.runtime.reports.timeline import Timeline
from mlpipe.runtime.step_logs import LAYOUT, RunEntry, StepLogs, read_runs, write_runs
from mlpipe.runtime.textio import write_text
from mlpipe.runtime.timeouts import progress_text
from mlpipe.runtime.tuning.brief import advice_lines, job_name, run_settings
from mlpipe.runtime.tuning.profile import ProfileTally, StepProfile
from mlpipe.wording import plural

OVERVIEW_STATUS = {"Completed": "Succeeded", "Failed": "Failed", "Canceled": "Canceled"}


class StepReports(StepObserver):
    """Writes every driver-side log and report of one parallel step (see the module docstring).

    Into ``logger`` it writes the step's settings, the scheduling milestones, each
    successful attempt (DEBUG) and the end of the step; the driver logs failed
    attempts and worker events through the same logger.

    ``logger`` is usable as soon as the object exists; :meth:`step_finished`
    finalises everything, :meth:`close` releases files if the step never finished.
    """

    def __init__(self, step: ParallelStep, *, resume: bool = False) -> None:
        self.step = step
        self.resume = resume
        self.logs_dir = Path(step.logs_dir)
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        self.paths = StepLogs.of(step.logs_dir)
        self.logger: logging.Logger = master_role_logger(
            self.paths.master_role, step.logging_level,
            name=f"mlpipe.master_role.{step.name}")
        self.counters = StepCounters()
        self.workers = WorkerStats()
        self.errors = ErrorLog(self.logs_dir, append=resume)
        self.tally = ProfileTally()
        self._kept_errors = ErrorGroups()  # the driver's tally, read while the step runs
        self._runs: list[RunEntry] = []
        self._lost_at: dict[tuple[int, str], float] = {}  # a dead worker's time of death
        self._csv: ProcessedMiniBatchesCsv | None = None
        self.timeline = Timeline()  # this run's attempts, for task_stream.html and report.html
        self.slowest = Slowest()
        self.first_attempts = FirstAttempts()
        # held while attempts are counted, and while report.html's thread reads this run
        self._lock = threading.Lock()
        self._overview: ProgressOverview | None = None
        self._monitor: ResourceMonitor | None = None
        self._started_at: datetime | None = None
        self._driver_cpu = DriverCpu.start()
        self._closed = False

    # -- StepObserver -------------------------------------------------------------------
    def errors_kept(self, errors: ErrorGroups) -> None:
        self._kept_errors = errors

    def step_started(self, step: ParallelStep, workers: list[WorkerInfo], at: datetime) -> None:
        self._started_at = at
        self._driver_cpu = DriverCpu.start()
        self.counters = StepCounters()
        self.timeline = Timeline()
        self.slowest = Slowest()
        self.first_attempts = FirstAttempts()
        self._start_run(step, workers, at)
        show_live(self.paths, self.live_run)
        for worker in workers:
            self.workers.register(worker)
        nodes = sorted({w.node for w in workers}) or list(range(step.instance_count))
        self.logger.info("Start scheduling.")
        self.logger.info("%s", _settings_text(step, len(nodes), len(workers)))
        self._csv = ProcessedMiniBatchesCsv(self.paths.processed, append=self.resume)
        self._overview = ProgressOverview(self.logs_dir, step.name, len(workers))
        self._overview.write(self.counters)
        self._monitor = ResourceMonitor(
            self.paths.perf, step.prs.resource_monitor_interval, nodes)
        self._monitor.set_workers(workers)
        self._monitor.start()
        if not self._monitor.enabled:
            self.logger.info("Resource monitor disabled (resource_monitor_interval 0).")

    def mini_batches_scheduled(self, count: int, done: bool) -> None:
        first = self.counters.scheduled == 0 and count > 0
        finished = done and not self.counters.listing_done
        self.counters.scheduled = count
        self.counters.listing_done = done
        if first:
            self.tally.first_listed()
            self.logger.info("The first mini-batch is scheduled.")
        if finished:
            self.logger.info("Scheduling finished: %s.", plural(count, "mini-batch"))
            if self._overview is not None:
                self._overview.write(self.counters)
        elif self._overview is not None:
            self._overview.maybe_write(self.counters)

    def mini_batches_counted(self, total: int) -> None:
        self.counters.counted = total  # the overview shows it at its next rewrite

    def mini_batches_reused(self, count: int) -> None:
        """Resume: ``count`` scheduled mini-batches succeeded in an earlier run."""
        self.counters.reused = count

    def attempt_finished(self, record: AttemptRecord) -> None:
        self.attempts_finished((record,))

    def attempts_finished(self, records: Sequence[AttemptRecord]) -> None:
        """Count, tally and draw each attempt, write their CSV rows in one go, and rewrite
        the overview at most once."""
        counters, workers, tally, timeline = self.counters, self.workers, self.tally, self.timeline
        debug = self.logger.isEnabledFor(logging.DEBUG)
        processes, epochs = [], []
        worker, process = None, ""
        with self._lock:  # report.html's thread may be reading this run (live_run)
            for record in records:
                if record.worker is not worker:  # a batch holds runs of one worker's attempts
                    worker, process = record.worker, process_label(record.worker)
                epoch = record.start_time.timestamp()
                processes.append(process)
                epochs.append(epoch)
                if attempt_failed(record):
                    self.errors.add_attempt(record)  # the driver logs the failure itself
                elif debug:
                    self.logger.debug("Mini-batch %s attempt %d on %s succeeded: %s in %.3f s.",
                                      record.mini_batch_id, record.picked_count, process,
                                      plural(record.total, "item"), record.elapsed_seconds)
            counters.add_all(records)
            workers.add_all(records)
            tally.add_all(records, epochs)
            timeline.add_records(records, processes, epochs)
            self.slowest.add_all(records, processes, epochs)
            self.first_attempts.add_all(records, processes, epochs)
        if self._csv is not None:
            self._csv.write_all(records, processes, epochs)
        if self._overview is not None:
            self._overview.maybe_write(self.counters)
        if self._monitor is not None and self._monitor.error is not None:
            error, self._monitor.error = self._monitor.error, None
            raise error  # the sampling thread could not write: the step fails with it

    def worker_event(self, worker: WorkerInfo, event: str, message: str) -> None:
        if event in ("init_failed", "start_failed"):
            self.errors.add_init_failure(worker, message or event, ran=event == "init_failed")
        if event in ("started", "replaced"):
            self.workers.register(worker)
            self._note_startup(worker, event)
        elif event == "died":
            self._lost_at[(worker.node, worker.process)] = time.time()
        if self._monitor is not None:
            self._monitor.update_worker(worker, alive=event in ("started", "replaced"))

    def step_finished(self, summary: StepSummary) -> None:
        """Write every end-of-step file. A file that cannot be written (a full disk, a
        removed folder) does not keep the others from being tried; the first such error
        is raised at the end, naming its file."""
        if self._closed:
            return
        level = logging.INFO if summary.status == "Completed" else logging.ERROR
        self.logger.log(level, "Step %s %s%s. %s. %s.", self.step.name, summary.status,
                        f" ({summary.reason})" if summary.reason else "",
                        mini_batches_line(summary), items_line(summary))
        if summary.status != "Completed" and summary.errors:
            self.logger.error("%s", "\n".join(error_lines(summary.errors)))
        errors: list[OSError] = []
        started = summary.started_at or self._started_at
        ended = summary.ended_at or datetime.now(timezone.utc)
        wall = _seconds_between(started, ended) if started is not None else self.counters.elapsed()
        job_report = self.paths.job_report
        self._end_run(summary, ended)
        steps: list[tuple[Path, Callable[[], object]]] = [
            (self.paths.runs, lambda: write_runs(self.paths, self._runs)),
            (self.paths.job_result, lambda: write_text(
                self.paths.job_result,
                render_job_result(self.step, summary, self.counters, self._tuning_lines()))),
            (job_report, self._close_streams),
            (job_report, lambda: self.workers.write_summaries(self.paths, wall)),
            (self.paths.error_summary, lambda: self._write_error_summary(summary)),
            (self.logs_dir, lambda: self._overview and self._overview.write(
                self.counters, OVERVIEW_STATUS.get(summary.status, summary.status), summary)),
            (self.paths.sys, self.close),
            (self.paths.task_stream, self._write_task_stream),
            (self.paths.readme, lambda: write_readme(self.paths, self.step.name)),
            (parent_logs_dir(self.step), lambda: (self.step.prs.copy_logs_to_parent
                                                  and copy_logs_to_parent(self.step))),
        ]
        for path, write in steps:
            try:
                with naming(path):
                    write()
            except OSError as error:
                self.logger.error("Cannot write %s", describe_fault(error))
                errors.append(error)
        self.close()
        if errors:
            raise errors[0]

    # -- runs.json ------------------------------------------------------------------------
    def _start_run(self, step: ParallelStep, workers: list[WorkerInfo], at: datetime) -> None:
        """Add this run to ``runs.json`` (a resumed step keeps its earlier runs)."""
        self.tally = ProfileTally()
        self.tally.run_started(at.timestamp())
        self._runs = read_runs(self.paths) if self.resume else []
        self._runs.append(RunEntry(started=at.timestamp(), settings=run_settings(step, workers)))
        with naming(self.paths.runs):
            write_runs(self.paths, self._runs)

    def _note_startup(self, worker: WorkerInfo, event: str) -> None:
        """A worker's start-up: from the run's start (or its predecessor's death) to ready."""
        if not self._runs:
            return
        since = self._lost_at.pop((worker.node, worker.process), None) \
            if event == "replaced" else None
        began = since if since is not None else self._runs[-1].started
        key, now = f"{worker.node}/{worker.process}", time.time()
        self._runs[-1].startup_seconds.setdefault(key, round(max(now - began, 0.0), 6))
        self.tally.worker_ready(key, worker.pid, now)

    def live_run(self) -> RunEntry:
        """This run so far, as :meth:`_end_run` will record it (for report.html while the
        step runs: its chart on the axis from the run's start to now)."""
        run = self._runs[-1]
        with self._lock:
            return RunEntry(
                started=run.started, status="Running", reused=self.counters.reused,
                settings=dict(run.settings), startup_seconds=dict(run.startup_seconds),
                tally=self.tally.as_json(),
                errors=self._kept_errors.as_json(),
                counts={"attempts": self.counters.attempts, "retried": self.counters.retries,
                        "timeouts": self.counters.timeouts},
                chart=self._chart(run.started, time.time()))

    def _chart(self, start: float, end: float) -> dict[str, object]:
        return RunChart.of(self.timeline, self.slowest.attempts(), start,
                           max(end, self.timeline.last if self.timeline.count else end),
                           self.first_attempts.attempts()).as_json()

    def _end_run(self, summary: StepSummary, ended: datetime) -> None:
        hide_live(self.paths)
        if not self._runs:
            return
        run = self._runs[-1]
        run.ended = ended.timestamp()
        run.status = summary.status
        run.reused = summary.mini_batches_reused
        self.tally.run_ended()
        run.tally = self.tally.as_json()
        run.chart = self._chart(run.started, run.ended)
        run.errors = summary.errors.as_json()
        run.counts = {"mini_batches": summary.mini_batches_total,
                      "succeeded": summary.mini_batches_succeeded,
                      "failed": summary.mini_batches_failed,
                      "not_processed": summary.mini_batches_not_processed,
                      "items": summary.items_total, "items_succeeded": summary.items_succeeded,
                      "items_failed": summary.items_failed, "attempts": self.counters.attempts,
                      "retried": self.counters.retries, "timeouts": self.counters.timeouts}

    def _tuning_lines(self) -> list[str]:
        """job_result.txt's tuning block: the profile's lines, then the driver's own CPU."""
        lines = advice_lines(self._profile(), job_name(self.step))
        if lines:
            lines.append(self._driver_cpu.line(self.counters.attempts))
        return lines

    def _profile(self) -> StepProfile | None:
        """This run's profile from the figures in memory (no file is read back)."""
        if not self._runs:
            return None
        run = self._runs[-1]
        return StepProfile(self.paths, len(self._runs) - 1, len(self._runs), run.started,
                           run.ended, run.status, run.settings, self.tally, None,
                           run.startup_seconds, {}, run.errors, run.counts, run.reused)

    def _close_streams(self) -> None:
        """Stop the resource monitor and close processed_mini-batches.csv and the error files."""
        if self._monitor is not None:
            self._monitor.stop()
        if self._csv is not None:
            self._csv.close()
        self.errors.close()

    def _write_task_stream(self) -> None:
        """From this run's timeline, or from the CSV when it holds an earlier run's rows."""
        if self.counters.attempts > 0:
            earlier = self._csv is None or self._csv.appended
            write_task_stream(self.logs_dir, timeline=None if earlier else self.timeline,
                              rows=() if earlier else self.first_attempts.attempts())

    def _write_error_summary(self, summary: StepSummary) -> None:
        """user/error.txt: the errors of this run, the step's final state (a resume or a
        rerun runs every failed mini-batch again); none when nothing failed."""
        if summary.errors:
            self.paths.error_summary.parent.mkdir(exist_ok=True)
            write_text(self.paths.error_summary, render_error_summary(summary.errors))
        else:
            self.paths.error_summary.unlink(missing_ok=True)

    # -- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        """Stop sampling and close every file (idempotent; step_finished calls it)."""
        if self._closed:
            return
        self._closed = True
        hide_live(self.paths)
        try:
            self._close_streams()
        finally:
            close_logger(self.logger)


def _settings_text(step: ParallelStep, nodes: int, workers: int) -> str:
    size = step.mini_batch_size.text if step.mini_batch_size is not None else "default"
    division = (f"partition_keys {list(step.partition_keys)}" if step.partition_keys
                else f"mini_batch_size {size}")
    processes = plural(max(workers // max(nodes, 1), 1), "process")
    return (f"Step {step.name}: {plural(nodes, 'node')} x {processes}; "
            f"{division}; retry_settings max_retries {step.retry.max_retries}, timeout "
            f"{step.retry.timeout} s; "
            f"mini_batch_error_threshold {step.mini_batch_error_threshold}; "
            f"error_threshold {step.error_threshold}; allowed_failed_percent "
            f"{step.prs.allowed_failed_percent}; task_overhead_timeout "
            f"{step.prs.task_overhead_timeout} s; progress_update_timeout {progress_text(step)}; "
            f"resource_monitor_interval "
            f"{step.prs.resource_monitor_interval}; logging_level {step.logging_level}.")


PARENT_COPIES = (LAYOUT.relative(LAYOUT.job_result), "job_progress_overview.*.txt",
                 LAYOUT.relative(LAYOUT.readme), LAYOUT.relative(LAYOUT.error_summary))


def parent_logs_dir(step: ParallelStep) -> Path:
    """``<run_dir>/logs/<step>``: where ``--copy_logs_to_parent True`` copies the summary files."""
    return Path(step.step_dir).parent / "logs" / step.name


def copy_logs_to_parent(step: ParallelStep) -> list[Path]:
    """Copy job_result.txt, the progress overviews, readme.txt (the logs tree's summary) and
    user/error.txt of ``step`` into :func:`parent_logs_dir`; return the copies."""
    source, target = Path(step.logs_dir), parent_logs_dir(step)
    if not StepLogs.of(source).error_summary.exists():  # an earlier run's, no longer true
        StepLogs.of(target).error_summary.unlink(missing_ok=True)
    copies = []
    for pattern in PARENT_COPIES:
        for path in sorted(source.glob(pattern)):
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination)
            copies.append(destination)
    return copies


def _seconds_between(start: datetime, end: datetime) -> float:
    if (start.tzinfo is None) != (end.tzinfo is None):
        start, end = start.replace(tzinfo=None), end.replace(tzinfo=None)
    return max((end - start).total_seconds(), 0.0)
