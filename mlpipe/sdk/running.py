"""Validating and running SDK jobs through the same layers as the CLI.

job -> YAML-equivalent dict + positions -> ``mlpipe.schema.load_pipeline_data``
-> ``mlpipe.jobs.front_door.submit`` (compile, check, run) -> :class:`RunResult`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from mlpipe.diagnostics import Diagnostic, ValidationError
from mlpipe.plan import ExecutionPlan
from mlpipe.sdk.callsite import call_site


class Job:
    """``azure.ai.ml.entities.Job``: the base of every job object here, a
    :class:`~mlpipe.sdk.job.PipelineJob` to run and what ``ml_client.jobs`` returns for one
    that ran (:class:`RunResult`, ``LocalJob``), so ``isinstance(x, Job)`` holds as in
    azure-ai-ml (and ``ml_client.create_or_update(job)`` runs it)."""


@runtime_checkable
class PipelineJob(Protocol):
    """What running needs of a :class:`mlpipe.sdk.job.PipelineJob` (which calls this module):
    its YAML-equivalent data with positions, and the file it stands for."""

    @property
    def source(self) -> Path: ...

    def positions(self) -> tuple[dict[str, Any], Any]: ...


@runtime_checkable
class StandaloneJob(Protocol):
    """A command or sweep node run on its own (``ml_client.jobs.create_or_update(node)``): the
    standalone job document azure-ai-ml submits for it, with positions, and its file."""

    @property
    def source(self) -> Path: ...

    def job_positions(self) -> tuple[dict[str, Any], Any]: ...


def _check_job(job: Any, function: str) -> None:
    """A :class:`ValidationError` at the caller's line when ``job`` is not something to run."""
    if isinstance(job, (PipelineJob, StandaloneJob, str, os.PathLike)):
        return
    kind = type(job).__name__
    hint = ("a step runs inside a pipeline: call it in a @pipeline function and pass the "
            "function's result" if kind.endswith("Node") or hasattr(job, "outputs") else None)
    raise ValidationError([Diagnostic(
        f"{function}() takes a PipelineJob (the result of a @pipeline function, or load_job(...)), "
        f"a command or sweep node (a job of its own) or the path of a job YAML, got {kind}",
        location=call_site(), code="type",
        hint=hint)])


def _source(job: PipelineJob | StandaloneJob | str | os.PathLike[str]) -> Any:
    """What the compiler reads for ``job``: its job data loaded, or its YAML path."""
    if isinstance(job, PipelineJob):
        from mlpipe.schema import load_pipeline_data

        data, positions = job.positions()
        return load_pipeline_data(data, str(job.source), positions=positions)
    if isinstance(job, StandaloneJob):
        from mlpipe.schema import load_job_data

        data, positions = job.job_positions()
        return load_job_data(data, str(job.source), positions=positions)
    return Path(os.fspath(job)).resolve()


def compile_job(job: PipelineJob | StandaloneJob | str | os.PathLike[str], *,
                runs_dir: str | Path | None = None, job_name: str | None = None,
                overrides: Any = (), check_paths: bool = True,
                allow_external_outputs: bool = False) -> ExecutionPlan:
    """Validate ``job`` and compile it; a :class:`mlpipe.ValidationError` lists every problem.
    ``allow_external_outputs`` lets declared output paths lie outside the runs folder."""
    from mlpipe.compiler import compile_pipeline

    _check_job(job, "compile")
    return compile_pipeline(_source(job), runs_dir=runs_dir, job_name=job_name,
                            overrides=tuple(overrides), check_paths=check_paths,
                            allow_external_outputs=allow_external_outputs)


@dataclass
class RunResult(Job):
    """How a job run ended: ``status``, pipeline ``outputs`` and each step's outputs and reports."""

    name: str
    status: str
    run_dir: str
    outputs: dict[str, str]
    step_outputs: dict[str, dict[str, str]]
    reports: dict[str, dict[str, str]] = field(repr=False)  # step -> report name -> path
    logs: dict[str, str] = field(repr=False)  # step -> logs folder
    plan: ExecutionPlan = field(repr=False)
    job_result: Any = field(repr=False, default=None)
    report: str | None = None  # <run_dir>/report.html, written by the front door for every job

    @property
    def ok(self) -> bool:
        return self.status == "completed"

    @property
    def studio_url(self) -> str:
        """azure-ai-ml's link to the job: here the run folder, as a ``file://`` URL."""
        return Path(self.run_dir).as_uri()


def run(job: PipelineJob | StandaloneJob | str | os.PathLike[str], *,
        runs_dir: str | Path | None = None, job_name: str | None = None,
        overrides: Any = (), echo: Any = None, backend: Any = "local",
        backend_options: Mapping[str, Any] | None = None, max_workers: int | None = None,
        progress: bool = False, cancel: threading.Event | None = None,
        allow_external_outputs: bool = False, skip_steps: Sequence[str] = ()) -> RunResult:
    """Run a job (a pipeline job, a command or sweep node as a job of its own, or a job YAML
    path) locally with the same runtime as ``mlpipe job create``.

    This is :func:`mlpipe.jobs.front_door.submit`, the front door ``mlpipe job create`` uses
    too, with the one :class:`~mlpipe.jobs.request.JobRequest` made of these arguments:
    ``backend`` (a name of the backends' table) with ``backend_options`` (its own options, as
    ``--backend NAME --OPTION`` gives them), ``max_workers``, ``progress``,
    ``allow_external_outputs``, ``skip_steps``; ``cancel`` stops it when set, ``echo`` gets
    its console lines. Raises :class:`mlpipe.ValidationError` before anything runs when the
    job is invalid.
    """
    from mlpipe.jobs.front_door import JobHooks, submit
    from mlpipe.jobs.request import JobRequest
    from mlpipe.runtime.backends import BackendChoice

    _check_job(job, "run")
    request = JobRequest(
        source=_source(job), runs_dir=runs_dir, name=job_name, overrides=tuple(overrides),
        backend=BackendChoice.of(backend, backend_options), max_workers=max_workers,
        progress=progress, allow_external_outputs=allow_external_outputs,
        skip_steps=tuple(skip_steps))
    submission = submit(request, JobHooks(cancel=cancel, echo=echo))
    result = submission.result
    assert result is not None
    steps = result.steps
    return RunResult(
        name=result.name,
        status=result.status,
        run_dir=result.run_dir,
        outputs=dict(result.outputs),
        step_outputs={name: dict(step.outputs) for name, step in steps.items()},
        reports={name: dict(step.reports) for name, step in steps.items()},
        logs={name: step.logs_dir for name, step in steps.items()},
        plan=submission.plan,
        job_result=result,
        report=result.report,
    )
