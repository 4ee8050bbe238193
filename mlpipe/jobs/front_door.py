"""The front door: run a pipeline job from a YAML file or loaded pipeline data.

:func:`submit` is the one use case behind ``mlpipe job create`` and ``mlpipe.run``::

    source -> parse once -> name the job -> own it -> decide (new or resume) -> compile
           -> pre-run checks (remote assets, backend) -> on_start -> run -> JobResult

Each step runs once. The job is owned (:mod:`mlpipe.jobs.ownership`: an OS lock on its
folder) before anything is decided and until its record is final, so two processes never
run one job: the second gets :class:`~mlpipe.jobs.ownership.JobBusyError` and changes
nothing. The caller builds one :class:`~mlpipe.jobs.request.JobRequest` (the CLI from its
arguments, the SDK from its call) and turns the :class:`Submission` (or the exception)
into output. How an existing job of the same name is treated is a
:class:`~mlpipe.jobs.request.Mode`, decided into a :class:`Decision` before anything runs,
so new ways to start a job (e.g. a rerun) add a mode, not a flag.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlpipe.compiler import compile_pipeline
from mlpipe.diagnostics import ValidationError
from mlpipe.errors import MlpipeError, UsageError
from mlpipe.jobs.cloud_data import check_cloud_data
from mlpipe.jobs.console import Echo
from mlpipe.jobs.ownership import JobLock, own_job
from mlpipe.jobs.preflight import check_backend, check_remote_assets, check_runnable
from mlpipe.jobs.record import JobRecord
from mlpipe.jobs.request import JobRequest, Mode
from mlpipe.jobs.runner import JobResult, execute_plan
from mlpipe.jobs.store import JobConflictError, JobStore, RecordError
from mlpipe.plan import ExecutionPlan
from mlpipe.runs import check_job_name, generate_job_name, runs_dir_problem
from mlpipe.runtime.faults import describe_fault
from mlpipe.schema import Loaded, load_runnable, load_yaml_file
from mlpipe.schema.kinds import not_runnable

NAME_FIELDS = ("display_name", "experiment_name")


class SubmitUsageError(UsageError):
    """The request cannot be carried out as asked (runs folder, job name): a usage error."""


class NotAPipelineError(ValidationError):
    """The YAML is readable but is not a pipeline job (a component, another job type)."""

    def summary(self) -> str:
        return f"{self.subject}: nothing was run" if self.subject else "nothing was run"


class JobStopped(MlpipeError):
    """The job started but its runner could not go on (its folder cannot be written)."""


@dataclass(frozen=True)
class Decision:
    """How the job starts: its ``name``, the ``action`` taken and the earlier record."""

    name: str
    action: str  # "new", "resume" or "rerun"
    previous: JobRecord | None = None  # the record of the job resumed or rerun

    @property
    def resuming(self) -> bool:
        return self.action in ("resume", "rerun")

    @property
    def attempt(self) -> int:
        """The attempt this run is (1 for a new job)."""
        return (self.previous.attempt if self.previous is not None else 0) + 1


@dataclass
class Submission:
    """One submitted job: the decision, the compiled plan and (once run) its result."""

    decision: Decision
    plan: ExecutionPlan
    result: JobResult | None = None

    @property
    def name(self) -> str:
        return self.decision.name


@dataclass(frozen=True)
class JobHooks:
    """What the caller of :func:`~mlpipe.jobs.front_door.submit` watches while the job runs:
    ``cancel`` (set it to stop the job), ``echo`` (one line per event; ``None``: quiet),
    ``on_compiled(plan)`` (as soon as it compiled, to show its warnings),
    ``on_start(submission)`` (once everything is checked, before the first step) and
    ``owner`` (the caller's hold on the job, taken before it decided what to run: a rerun's;
    ``None``: ``submit`` owns the job until it ends)."""

    cancel: threading.Event | None = None
    echo: Echo | None = None
    on_compiled: Callable[[ExecutionPlan], None] | None = None
    on_start: Callable[[Submission], None] | None = None
    owner: JobLock | None = None



def submit(request: JobRequest, hooks: JobHooks | None = None) -> Submission:
    """Name, decide, compile, check and run the job ``request`` asks for (a pipeline job, or
    a standalone command or sweep job, as a job of one step); the result is on the returned
    :class:`Submission`. ``hooks`` are what the caller watches meanwhile (:class:`JobHooks`).

    A rerun (``request.rerun_of``, read under ``hooks.owner``, the caller's hold on the job)
    runs job ``request.name`` again in place; without an owner the job is owned here until it
    ends. A job that allowed external outputs keeps that when resumed or rerun. Raises
    before anything runs: :class:`SubmitUsageError` (runs folder, job name, a ``--skip-step``
    that is no step), :class:`NotAPipelineError`, :class:`ValidationError` (invalid
    pipeline), :class:`~mlpipe.compiler.OverrideSyntaxError`,
    :class:`~mlpipe.jobs.preflight.RemoteAssetsError`,
    :class:`~mlpipe.jobs.preflight.StepsNotRunnableError` (a step that cannot run here, not
    skipped), :class:`JobConflictError` (name taken by a completed or running job, or its
    record unreadable), :class:`~mlpipe.jobs.ownership.JobBusyError` (another process owns
    the job) and :class:`~mlpipe.jobs.preflight.BackendUnavailableError` (unknown, not
    installed, or an option it does not take); once it runs, :class:`JobStopped` when its
    folder cannot be written.
    """
    store = JobStore(request.runs_dir)
    problem = runs_dir_problem(store.runs_dir, create=True)
    if problem:
        raise SubmitUsageError(problem)
    try:
        return _submit(store, request, hooks or JobHooks())
    except ValidationError as error:
        raise error.about(request.shown, "nothing was run") from None


def _submit(store: JobStore, request: JobRequest, hooks: JobHooks) -> Submission:
    loaded = _load(request.source)
    owner = hooks.owner
    if owner is not None and request.name not in (None, owner.name):
        raise SubmitUsageError(f"job name {request.name!r} is not the job held ({owner.name!r})")
    held = owner if owner is not None else _own(store, request.name, loaded, request.overrides)
    try:
        name = held.name
        decision = Decision(name, "rerun", request.rerun_of) if request.rerun_of is not None \
            else decide(store, name, request.mode)
        allow = request.allow_external_outputs or (
            decision.previous is not None and decision.previous.allow_external_outputs)
        plan = compile_pipeline(loaded, runs_dir=str(store.runs_dir), job_name=name,
                                overrides=request.overrides, allow_external_outputs=allow,
                                skip_steps=request.skip_steps)
        if hooks.on_compiled is not None:
            hooks.on_compiled(plan)
        try:
            check_runnable(plan, request.skip_steps)
        except ValueError as exc:
            if isinstance(exc, ValidationError):
                raise
            raise SubmitUsageError(str(exc)) from None
        check_remote_assets(plan, request.skip_steps)
        spec = check_backend(request.backend)
        check_cloud_data(plan, request.skip_steps)
        submission = Submission(decision, plan)
        if hooks.on_start is not None:
            hooks.on_start(submission)
        try:
            submission.result = execute_plan(
                plan, decision.previous.clone() if decision.previous is not None else None,
                store=store, name=name, cancel=hooks.cancel, progress=request.progress,
                backend=spec, echo=hooks.echo, max_workers=request.max_workers,
                skip_steps=frozenset(request.skip_steps))
        except OSError as error:  # the runner could not write the job's files
            raise JobStopped(f"job {name} stopped: cannot write "
                             f"{error.filename or plan.run_dir}: "
                             f"{error.strerror or describe_fault(error)}") from error
        return submission
    finally:
        if owner is None:
            held.release()


def decide(store: JobStore, name: str, mode: Mode = Mode.AUTO) -> Decision:
    """How job ``name`` starts in ``store`` under ``mode``; :class:`JobConflictError` when
    it cannot (the name completed, still runs, or its record cannot be read)."""
    try:
        previous = store.resumable(name)
    except RecordError as exc:
        raise JobConflictError(
            f"job {name!r} exists but its record cannot be read ({store.record_path(name)}: "
            f"{exc.problem}); choose another name") from exc
    if previous is None:
        return Decision(name, "new")
    return Decision(name, "resume", previous)


def _load(source: str | os.PathLike[str] | Loaded[Any]) -> Loaded[Any]:
    """The job, parsed once (a pipeline, or a standalone command or sweep job, which runs as
    its one step); :class:`NotAPipelineError` for another kind of YAML."""
    if isinstance(source, Loaded):
        return source
    doc = load_yaml_file(Path(os.fspath(source)))
    refusal = not_runnable(doc)
    if refusal is not None:
        raise NotAPipelineError([refusal])
    return load_runnable(doc)


def _own(store: JobStore, name: str | None, loaded: Loaded[Any],
         overrides: Sequence[str]) -> JobLock:
    """Own job ``name``, or a new generated name (its folder made exclusively)."""
    if name is not None:
        problem = check_job_name(name)
        if problem:
            raise SubmitUsageError(problem)
        return own_job(store, name)
    while True:
        try:
            return own_job(store, _generate_name(loaded, overrides, store), fresh=True)
        except FileExistsError:  # another process made that folder first: another name
            continue


def _generate_name(loaded: Loaded[Any], overrides: Sequence[str], store: JobStore) -> str:
    """A fresh name from ``display_name`` / ``experiment_name`` (``--set`` ones win) or
    the file name."""
    data = loaded.data if isinstance(loaded.data, dict) else {}
    fields = {key: data.get(key) for key in NAME_FIELDS}
    for item in overrides:  # --set display_name=... names the job too
        key, _, value = item.partition("=")
        if key.strip() in fields:
            fields[key.strip()] = value
    return generate_job_name(loaded.source, taken=store.exists, **fields)


__all__ = ["Decision", "JobHooks", "JobRequest", "JobStopped", "Mode", "NotAPipelineError",
           "Submission", "SubmitUsageError", "decide", "submit"]
