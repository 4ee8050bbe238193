"""Run a whole :class:`~mlpipe.plan.ExecutionPlan`: every step, in dependency order.

``run_plan`` runs a compiled plan (the front door :func:`mlpipe.jobs.front_door.submit`,
behind ``mlpipe job create`` and ``mlpipe.run``, checks and decides first, then calls
:func:`execute_plan`). It refuses plans with cloud-only references before
anything starts, records the job in ``<runs-dir>/<name>/job.json``, starts each step
once the steps it depends on have completed (independent steps overlap while the
worker budget allows), and stops cleanly on cancel.
"""

from __future__ import annotations

import dataclasses
import queue
import signal
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from mlpipe.cores import core_count
from mlpipe.frozen import freeze
from mlpipe.jobs.cloud_data import (
    check_cloud_data,
    release_inputs,
    stage_inputs,
    upload_outputs,
)
from mlpipe.jobs.command import make_output_folders, run_command_step
from mlpipe.jobs.console import Echo, WorkerNotices, console
from mlpipe.jobs.liveness import runner_identity
from mlpipe.jobs.ownership import own_job, own_outputs
from mlpipe.jobs.preflight import (
    check_backend,
    check_job_folder,
    check_overwrites,
    check_remote_assets,
    check_runnable,
    compute_notice,
    environment_warnings,
    outputs_found,
    overwrite_warnings,
    read_only_warnings,
)
from mlpipe.jobs.record import (
    JobOutputRecord,
    JobRecord,
    JobSettingsRecord,
    OutputRecord,
    StepRecord,
)
from mlpipe.jobs.recorder import JobRecorder, RecordObserver
from mlpipe.jobs.spark import run_spark_step
from mlpipe.jobs.store import TERMINAL, JobConflictError, JobStore
from mlpipe.jobs.sweep import run_sweep_step
from mlpipe.jobs.timestamps import iso, now, parse_iso
from mlpipe.jobs.upstream_values import MissingUpstreamValue, with_upstream_values
from mlpipe.plan import CommandStep, ExecutionPlan, ParallelStep, SparkStep, Step, SweepStep
from mlpipe.runs import (
    EXPERIMENT_ENV,
    JOB_NAME_ENV,
    STEP_DIR_ENV,
    STEP_NAME_ENV,
    mark_runs_dir,
)
from mlpipe.runtime import worker_names
from mlpipe.runtime.backends import BackendChoice, BackendSpec, backend_spec
from mlpipe.runtime.error_groups import SUMMARY_GROUPS
from mlpipe.runtime.faults import describe_fault
from mlpipe.runtime.process_tree import Watchdog
from mlpipe.runtime.records import StepSummary
from mlpipe.runtime.reports.files import report_files
from mlpipe.runtime.textio import write_text
from mlpipe.version import __version__
from mlpipe.wording import duration, error_summary

CANCEL_POLL_SECONDS = 0.2
REPORT_SECONDS = 5.0
REPORT_COST_FACTOR = 50  # the live page's writing: at most 1/50 of the time, 2 % of a core
BLOCKING = ("failed", "skipped", "canceled")


@dataclass
class StepResult:
    """How one step of a job ended."""

    name: str
    kind: str  # "command", "parallel", "sweep", "spark" (or a type that only Azure runs)
    status: str  # completed, failed, canceled, skipped (or queued if never reached)
    started_at: datetime | None = None
    ended_at: datetime | None = None
    outputs: dict[str, str] = field(default_factory=dict)  # output name -> local path
    logs_dir: str = ""
    exit_code: int | None = None  # command steps
    summary: StepSummary | None = None  # parallel steps
    error: str | None = None
    reports: dict[str, str] = field(default_factory=dict)  # path below logs_dir -> file

    @property
    def duration_seconds(self) -> float | None:
        if self.started_at and self.ended_at:
            return (self.ended_at - self.started_at).total_seconds()
        return None


@dataclass
class JobResult:
    """The outcome of :func:`run_plan`."""

    name: str
    run_dir: str
    status: str  # "completed", "failed" or "canceled"
    started_at: datetime
    ended_at: datetime
    steps: dict[str, StepResult]  # in plan order
    outputs: dict[str, str]  # pipeline output name -> local path
    record_path: str
    report: str | None = None  # <run_dir>/report.html (None when it could not be written)

    @property
    def ok(self) -> bool:
        return self.status == "completed"

    @property
    def duration_seconds(self) -> float:
        return (self.ended_at - self.started_at).total_seconds()


def run_plan(
    plan: ExecutionPlan,
    *,
    cancel: threading.Event | None = None,
    progress: bool = False,
    backend: str | BackendSpec | BackendChoice = "local",
    echo: Echo | None = None,
    max_workers: int | None = None,
    skip_steps: frozenset[str] = frozenset(),
) -> JobResult:
    """Run every step of ``plan`` and return how the job ended.

    The job is named after ``plan.run_dir`` (``<runs-dir>/<name>``); its record is
    ``<run_dir>/job.json``. When that record exists and the job did not complete, the
    job is resumed: completed steps are skipped and parallel steps keep their finished
    mini-batches. ``cancel`` (or ``mlpipe job cancel NAME``, or Ctrl-C while this runs
    in the main thread) stops the job: running steps are stopped, no new step starts,
    and the job ends ``canceled``. ``echo`` receives one line per event (``None``: quiet).
    ``max_workers`` caps the worker processes of steps running at once (default: cores).
    ``skip_steps`` are not run: their outputs are the local paths the plan gives them.

    Raises :class:`~mlpipe.jobs.preflight.RemoteAssetsError` before anything starts
    when the plan references cloud-only assets,
    :class:`~mlpipe.jobs.preflight.StepsNotRunnableError` when a step cannot run here and
    is not skipped (or a skipped one's outputs are not given), :class:`JobConflictError` when
    the name belongs to a completed or running job (:class:`~mlpipe.jobs.ownership.JobBusyError`
    when another process owns it), and
    :class:`~mlpipe.jobs.preflight.BackendUnavailableError` (a :class:`ValueError`) for a
    backend that is unknown or not installed.
    """
    if plan.name is None:
        raise ValueError("the plan names no job (compile_pipeline names it: job_name=)")
    check_runnable(plan, skip_steps)
    check_remote_assets(plan, skip_steps)
    spec = check_backend(backend)
    check_cloud_data(plan, skip_steps)
    store = JobStore(Path(plan.run_dir).parent)
    with own_job(store, plan.name):
        previous = store.resumable(plan.name)
        return execute_plan(plan, previous, store=store, name=plan.name, cancel=cancel,
                            progress=progress, backend=spec, echo=echo,
                            max_workers=max_workers, skip_steps=skip_steps)


def execute_plan(
    plan: ExecutionPlan,
    previous: JobRecord | None,
    *,
    store: JobStore,
    name: str,
    cancel: threading.Event | None = None,
    progress: bool = False,
    backend: BackendSpec | None = None,
    echo: Echo | None = None,
    max_workers: int | None = None,
    skip_steps: frozenset[str] = frozenset(),
) -> JobResult:
    """Run ``plan`` once its pre-run checks passed and the resume decision is made.

    ``previous`` is the record of the unfinished job being resumed (``None``: a new
    job); the job is ``name`` in ``store`` (its folder ``plan.run_dir``). :func:`run_plan`
    and :func:`mlpipe.jobs.front_door.submit` call this after checking, once, what
    :func:`run_plan` documents, while they own the job
    (:func:`mlpipe.jobs.ownership.own_job`); the options are the same, except
    that ``backend`` is the spec those checks resolved (``None``: local). The runner
    holds the backend's job scope (the Dask cluster) while the job runs and hands it
    to every parallel step, and the places it writes outside its own folder
    (:func:`mlpipe.jobs.ownership.own_outputs`: a second job writing one gets
    :class:`~mlpipe.jobs.ownership.OutputBusyError` before anything of it runs).
    """
    spec = backend or backend_spec("local")
    check_job_folder(plan)
    check_overwrites(plan, previous)
    with own_outputs(name, _outside_places(plan, skip_steps)):
        return _execute_owned(plan, previous, store=store, name=name, cancel=cancel,
                              progress=progress, backend=spec, echo=echo,
                              max_workers=max_workers, skip_steps=skip_steps)


def _outside_places(plan: ExecutionPlan, skip_steps: frozenset[str]) -> list[tuple[str, str]]:
    """``(step.output, path)`` of each output the job writes outside its own folder."""
    run_dir = Path(plan.run_dir)
    return [(f"{step.name}.{output.name}", output.path) for step in plan.steps
            if step.name not in skip_steps for output in step.outputs.values()
            if output.declared_path is not None and run_dir not in Path(output.path).parents]


def _execute_owned(plan: ExecutionPlan, previous: JobRecord | None, *, store: JobStore,
                   name: str, cancel: threading.Event | None, progress: bool,
                   backend: BackendSpec,
                   echo: Echo | None, max_workers: int | None,
                   skip_steps: frozenset[str]) -> JobResult:
    """:func:`execute_plan` once the job holds its output places."""
    spec = backend
    say = console(echo)
    notice = compute_notice(plan, spec.name)
    if notice:
        say(notice)
    for warning in environment_warnings(plan):
        say(f"warning: {warning}")
    found = outputs_found(plan, previous)
    for warning in [*overwrite_warnings(found), *read_only_warnings(plan)]:
        say(f"warning: {warning}")

    run_dir = Path(plan.run_dir)
    record = _new_record(plan, name, spec.name, previous)
    record.outputs_found = found
    recorder = JobRecorder(store, name, record)
    store.clear_cancel(name)
    mark_runs_dir(run_dir.parent)  # no input listing reads it (runs.is_runs_dir)
    recorder.save()
    recorder.reserve()

    cancel = cancel or threading.Event()
    stop_watch = threading.Event()
    watcher = threading.Thread(target=_watch_cancel, args=(store, name, cancel, stop_watch),
                               name=f"mlpipe-cancel-{name}", daemon=True)
    watcher.start()
    report = ReportRefresher(run_dir, say, recorder.snapshot)
    watchdog = Watchdog(plan.run_dir)  # ends the steps' processes if this one is killed
    started = now()
    recorder.update(status="running", started_at=iso(started), ended_at=None, error=None)
    previous_sigint = _cancel_on_sigint(cancel)
    try:
        budget = max_workers or core_count()
        scheduler = _Scheduler(plan, name, recorder, cancel, progress, spec, say, budget,
                               skip_steps)
        report.start()
        with spec.scope(plan, say, budget) as scope:
            scheduler.scope = scope
            scheduler.run()
    except BaseException as exc:  # the runner itself broke: say so in the record
        try:
            recorder.update(status="failed", ended_at=iso(now()), error=describe_fault(exc))
        finally:
            recorder.release()
        raise
    finally:
        if previous_sigint is not None:
            signal.signal(signal.SIGINT, previous_sigint)
        stop_watch.set()
        watcher.join()
        report.stop()
        watchdog.stop()
    ended = now()
    steps = recorder.record.steps
    if scheduler.fault is not None:
        status = "failed"
    elif all(step.status == "completed" for step in steps.values()):
        status = "completed"
    elif cancel.is_set():
        status = "canceled"
    else:
        status = "failed"
    fields: dict[str, Any] = {"error": scheduler.fault} if scheduler.fault else {}
    try:
        recorder.update(status=status, ended_at=iso(ended),
                        duration_seconds=round((ended - started).total_seconds(), 3), **fields)
    finally:
        recorder.release()
    result = _result(plan, recorder, scheduler.summaries, status, started, ended)
    result.report = report.write_final()
    return result


class ReportRefresher:
    """Writes the job's ``report.html`` while it runs (the page reloads itself) and at its end,
    from the record as ``record()`` gives it then.

    The page is rewritten every ``REPORT_SECONDS``, or ``REPORT_COST_FACTOR`` times as long
    as the last writing took, whichever is longer, on a daemon thread: the page takes at
    most 2 % of one core from the workers (a million attempts take seconds to read). A page
    that cannot be written is a warning, never the job's failure."""

    def __init__(self, run_dir: Path, say: Echo, record: Callable[[], JobRecord]):
        self.run_dir = run_dir
        self.say = say
        self.record = record
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._warned = False

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="mlpipe-report", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def write_final(self) -> str | None:
        return self._write()

    def _loop(self) -> None:
        wait = REPORT_SECONDS
        while not self._stop.wait(wait):
            began = time.monotonic()
            self._write()
            wait = max(REPORT_SECONDS, REPORT_COST_FACTOR * (time.monotonic() - began))

    def _write(self) -> str | None:
        from mlpipe.jobs.report import write_job_report  # noqa: PLC0415 - the page's code

        try:
            return str(write_job_report(self.run_dir, self.record()))
        except (OSError, ValueError) as error:
            if not self._warned:
                self._warned = True
                self.say(f"warning: report.html not written: {error}")
            return None


def _cancel_on_sigint(cancel: threading.Event) -> Any:
    """While the job runs, Ctrl-C (in the main thread) sets ``cancel`` instead of raising."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, lambda _sig, _frame: cancel.set())


def _new_record(plan: ExecutionPlan, name: str, backend: str,
                previous: JobRecord | None) -> JobRecord:
    """The record of this run of the job: a step that completed in an earlier run (of
    ``previous``) is kept as it was (``reused``), every other one starts ``queued``."""
    try:
        source_yaml = Path(plan.source).read_text(encoding="utf-8")
    except OSError:
        source_yaml = None
    old_steps = previous.steps if previous is not None else {}
    steps: dict[str, StepRecord] = {}
    for step in plan.steps:
        old = old_steps.get(step.name)
        if old is not None and old.status == "completed":
            old.reused = True
            steps[step.name] = old
            continue
        steps[step.name] = StepRecord(
            kind=step.kind, display_name=step.display_name, status="queued",
            depends_on=sorted(dependencies(step)), step_dir=step.step_dir,
            logs_dir=step.logs_dir,
            outputs={o.name: OutputRecord(type=o.type, path=o.path)
                     for o in step.outputs.values()},
            started_at=None, ended_at=None, duration_seconds=None, exit_code=None, error=None,
            resumed=bool(old is not None and old.started_at))
    return JobRecord(
        name=name,
        kind=plan.kind,
        display_name=plan.display_name,
        description=plan.description,
        experiment_name=plan.experiment_name,
        tags=dict(plan.tags),
        status="queued",
        created_at=(previous.created_at if previous is not None else None) or iso(now()),
        started_at=None,
        ended_at=None,
        duration_seconds=None,
        source=plan.source,
        source_yaml=source_yaml,
        run_dir=plan.run_dir,
        backend=backend,
        mlpipe_version=__version__,
        attempt=(previous.attempt if previous is not None else 0) + 1,
        settings=JobSettingsRecord(
            continue_on_step_failure=plan.settings.continue_on_step_failure),
        allow_external_outputs=plan.external_outputs,
        outputs={o.name: JobOutputRecord(type=o.type, path=o.path,
                                         step=o.source.step if o.source else None,
                                         output=o.source.output if o.source else None)
                 for o in plan.outputs.values()},
        steps=steps,
        error=None,
        **runner_identity(),
    )


def dependencies(step: Step) -> set[str]:
    """Steps that must complete before ``step``: ``depends_on`` and every bound input."""
    deps = set(step.depends_on)
    deps.update(i.source.step for i in step.inputs.values() if i.source is not None)
    deps.discard(step.name)
    return deps


def _watch_cancel(store: JobStore, name: str, cancel: threading.Event,
                  stop: threading.Event) -> None:
    while not stop.wait(CANCEL_POLL_SECONDS):
        if not cancel.is_set() and store.cancel_requested(name):
            cancel.set()


class _Scheduler:
    """Starts steps as their dependencies complete, within a worker budget."""

    def __init__(self, plan: ExecutionPlan, name: str, recorder: JobRecorder,
                 cancel: threading.Event, progress: bool, backend: BackendSpec, say: Echo,
                 budget: int, skip_steps: frozenset[str] = frozenset()):
        self.plan = plan
        self.name = name  # the job's
        self.skip_steps = skip_steps
        self.recorder = recorder
        self.cancel = cancel
        self.progress = progress
        self.backend = backend
        self.scope: Any = None  # the backend's job scope, handed to each parallel step
        self.say = say
        self.budget = max(1, budget)
        self.status: dict[str, str] = {s.name: recorder.record.steps[s.name].status
                                       for s in plan.steps}
        self.running: dict[str, int] = {}  # step -> worker cost
        self.done: queue.Queue[str] = queue.Queue()
        self.failure_seen = False
        self.summaries: dict[str, StepSummary] = {}
        self._display_lock = threading.Lock()
        self._display_owner: str | None = None  # one progress display at a time
        self.fault: str | None = None  # a fault of the runner itself (the job fails with it)

    def run(self) -> None:
        announced = False
        while True:
            try:
                if self.cancel.is_set() and self.running and not announced:
                    self.say("canceling: stopping running steps (finished work is kept)")
                    announced = True
                if self.fault is None:
                    self._launch_ready()
                if not self.running:
                    break
                try:
                    finished = self.done.get(timeout=CANCEL_POLL_SECONDS)
                except queue.Empty:
                    continue
                self.running.pop(finished, None)
                if self.status[finished] == "failed":
                    self.failure_seen = True
            except KeyboardInterrupt:
                self.cancel.set()
            except Exception as error:  # noqa: BLE001 - e.g. job.json cannot be written
                self._fault(error)
        try:
            self._close_unstarted()
        except OSError as error:
            self._fault(error)

    def _fault(self, error: BaseException) -> None:
        """Stop the job because the runner's own machinery failed (running steps end first,
        keeping their finished work); the job ends ``failed`` with ``error`` named."""
        if self.fault is None:
            self.fault = describe_fault(error)
            self.say(f"error: {self.fault}; stopping the job (finished work is kept)")
        self.cancel.set()

    def _launch_ready(self) -> None:
        stop_new = self.cancel.is_set() or (
            self.failure_seen and not self.plan.settings.continue_on_step_failure)
        progressed = True
        while progressed:
            progressed = False
            for step in self.plan.steps:
                if self.status[step.name] != "queued":
                    continue
                deps = dependencies(step)
                blocked = [d for d in sorted(deps) if self.status.get(d) in BLOCKING]
                if blocked and not self.cancel.is_set():
                    self._set(step, "skipped",
                              error=f"not started: upstream step {blocked[0]} "
                                    f"{self.status[blocked[0]]}")
                    progressed = True
                    continue
                if stop_new or any(self.status.get(d, "completed") != "completed" for d in deps):
                    continue
                cost = self._cost(step)
                if self.running and sum(self.running.values()) + cost > self.budget:
                    continue
                self._start(step, cost)
                progressed = True

    def _cost(self, step: Step) -> int:
        if isinstance(step, ParallelStep):
            return min(self.budget, max(1, len(worker_names(step))))
        if isinstance(step, SweepStep):
            return min(self.budget, max(1, step.limits.max_concurrent_trials or 1))
        return 1

    def _start(self, step: Step, cost: int) -> None:
        self.running[step.name] = cost
        self._set(step, "running", started_at=iso(now()), ended_at=None, error=None)
        self.say(f"step {step.name}: started")
        thread = threading.Thread(target=self._run_step, args=(step,),
                                  name=f"mlpipe-step-{step.name}", daemon=True)
        thread.start()

    def _run_step(self, step: Step) -> None:
        """Run ``step`` in this thread and record how it ended; whatever fails, the scheduler
        is told (a step thread that dies silently would leave the job waiting forever)."""
        try:
            try:
                fields = self._run(step)
            except BaseException as exc:  # noqa: BLE001 - a step's crash must not take the job down
                fields = {"status": "failed", "error": describe_fault(exc)}
                _save_traceback(Path(step.state_dir), traceback.format_exc())
            if "duration_seconds" not in fields:
                ended = now()
                started = parse_iso(self.recorder.step(step.name).started_at) or ended
                fields.update(ended_at=iso(ended),
                              duration_seconds=round((ended - started).total_seconds(), 3))
            self._set(step, fields.pop("status"), **fields)
            seconds = fields["duration_seconds"]
            tail = f": {error_summary(fields['error'])}" if fields.get("error") else ""
            self.say(f"step {step.name}: {self.status[step.name]} in {duration(seconds)}{tail}")
        except BaseException as exc:  # noqa: BLE001 - recording the end failed (full disk...)
            self.status[step.name] = "failed"
            self._fault(exc)
        finally:
            self.done.put(step.name)

    def _run(self, step: Step) -> dict[str, Any]:
        if step.name in self.skip_steps:
            return {"status": "completed", "skipped_by_user": True,
                    "note": "not run (--skip-step): its outputs are the local paths given"}
        make_output_folders(step)
        try:
            step = with_upstream_values(self._with_run_identity(step))
        except MissingUpstreamValue as exc:
            return {"status": "failed", "error": str(exc)}
        problem = stage_inputs(step, self.plan.run_dir, self.say)
        if problem is not None:
            return {"status": "failed", "error": problem}
        try:
            fields = self._run_kind(step)
        finally:
            release_inputs(step)
        if fields.get("status") == "completed":
            problem = upload_outputs(step, self.say)
            if problem is not None:
                fields.update(status="failed", error=problem)
        return fields

    def _run_kind(self, step: Step) -> dict[str, Any]:
        if isinstance(step, CommandStep):
            return self._run_command(step)
        if isinstance(step, SweepStep):
            return self._run_sweep(step)
        if isinstance(step, SparkStep):
            return self._run_command_like(run_spark_step(step, cancel=self.cancel))
        if isinstance(step, ParallelStep):
            return self._run_parallel(step)
        raise TypeError(f"step {step.name}: a {step.kind} step cannot run here")

    def _run_sweep(self, step: SweepStep) -> dict[str, Any]:
        outcome = run_sweep_step(step, cancel=self.cancel, say=self.say)
        return {"status": outcome.status, "error": outcome.error, "trials_table": outcome.table,
                "best_trial": outcome.best.name if outcome.best else None,
                "trials": {t.name: {"status": t.status, "parameters": t.params,
                                    step.objective.primary_metric: t.final}
                           for t in outcome.trials}}

    def _with_run_identity(self, step: Step) -> Step:
        """``step`` whose processes know their job, step and experiment (``mlpipe.runs``'
        ``*_ENV`` names; the step's own ``environment_variables`` win)."""
        identity = {JOB_NAME_ENV: self.name, STEP_NAME_ENV: step.name,
                    STEP_DIR_ENV: step.step_dir,
                    EXPERIMENT_ENV: self.plan.experiment_name or ""}
        return dataclasses.replace(step, environment_variables=freeze(
            {**identity, **step.environment_variables}))

    def _run_command_like(self, outcome: Any) -> dict[str, Any]:
        return {"status": outcome.status, "exit_code": outcome.exit_code, "error": outcome.error,
                "stdout": outcome.stdout_path, "stderr": outcome.stderr_path,
                "std_log": outcome.std_log_path}

    def _run_command(self, step: CommandStep) -> dict[str, Any]:
        return self._run_command_like(run_command_step(step, cancel=self.cancel))

    def _run_parallel(self, step: ParallelStep) -> dict[str, Any]:
        from mlpipe.runtime import run_parallel_step

        resume = self.recorder.step(step.name).resumed
        observer = RecordObserver(self.recorder, step.name)
        with self._display_lock:
            display = self.progress and self._display_owner is None
            if display:
                self._display_owner = step.name
        try:
            observers = (observer,) if display else (observer, WorkerNotices(step.name, self.say))
            summary = run_parallel_step(step, backend=self.backend.create(self.scope),
                                        observers=observers, cancel=self.cancel,
                                        progress=display, resume=resume)
        finally:
            if display:
                self._display_owner = None
        observer.flush()
        self.summaries[step.name] = summary
        status = str(summary.status).lower()
        if self.cancel.is_set() and status != "completed":
            status = "canceled"
        times = {}  # one duration per step: the summary's, as its logs state it
        if summary.started_at is not None and summary.ended_at is not None:
            times = {"started_at": iso(summary.started_at), "ended_at": iso(summary.ended_at),
                     "duration_seconds": _rounded(summary.seconds)}
        return {"status": status, "error": summary.reason if status != "completed" else None,
                "summary": summary_dict(summary),
                "append_row_file": summary.append_row_file, **times}

    def _set(self, step: Step, status: str, **fields: Any) -> None:
        self.status[step.name] = status
        self.recorder.update_step(step.name, status=status, **fields)

    def _close_unstarted(self) -> None:
        for step in self.plan.steps:
            if self.status[step.name] != "queued":
                continue
            if self.cancel.is_set():
                self._set(step, "canceled", error="not started: the job was canceled")
            else:
                failed = next((n for n, s in self.status.items() if s == "failed"), None)
                self._set(step, "skipped", error=f"not started: step {failed} failed")


def _save_traceback(state: Path, detail: str) -> None:
    """Keep a step's crash traceback in ``runner_error.txt`` when the disk still allows it."""
    try:
        state.mkdir(parents=True, exist_ok=True)
        write_text(state / "runner_error.txt", detail)
    except OSError:
        pass


def summary_dict(summary: StepSummary) -> dict[str, Any]:
    """The JSON-ready counts of a parallel step's summary: its totals (with what was not
    processed) and its most frequent error groups (the step's logs keep them all)."""
    data = {f.name: getattr(summary, f.name) for f in fields(summary) if f.name != "errors"}
    if summary.breach is not None:
        data["breach"] = asdict(summary.breach)
    for key in ("started_at", "ended_at"):
        data[key] = iso(data[key]) if data.get(key) else None
    data["duration_seconds"] = _rounded(summary.seconds)
    data["mini_batches_not_processed"] = summary.mini_batches_not_processed
    data["items_not_processed"] = summary.items_not_processed
    data["error_kinds"] = summary.error_kinds
    data["error_groups"] = summary.errors.as_json(SUMMARY_GROUPS, brief=True)
    return data


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)


def _result(plan: ExecutionPlan, recorder: JobRecorder, summaries: dict[str, StepSummary],
            status: str, started: datetime, ended: datetime) -> JobResult:
    steps: dict[str, StepResult] = {}
    for step in plan.steps:
        entry = recorder.step(step.name)
        logs_dir = entry.logs_dir or step.logs_dir
        steps[step.name] = StepResult(
            name=step.name, kind=step.kind, status=entry.status,
            started_at=parse_iso(entry.started_at), ended_at=parse_iso(entry.ended_at),
            outputs={n: o.path for n, o in entry.outputs.items() if o.path is not None},
            logs_dir=logs_dir, exit_code=entry.exit_code,
            summary=summaries.get(step.name), error=entry.error,
            reports=report_files(logs_dir),
        )
    return JobResult(
        name=recorder.name, run_dir=plan.run_dir, status=status, started_at=started,
        ended_at=ended, steps=steps, outputs={o.name: o.path for o in plan.outputs.values()},
        record_path=str(recorder.path),
    )


__all__ = ["JobConflictError", "JobResult", "StepResult", "TERMINAL", "dependencies",
           "execute_plan", "run_plan"]
