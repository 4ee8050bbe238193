"""Validating and running SDK jobs through the same layers as the CLI.

job -> YAML-equivalent dict + positions -> ``mlpipe.schema.load_pipeline_data``
-> ``mlpipe.compiler.compile_pipeline`` -> ExecutionPlan -> ``mlpipe.jobs.run_plan``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlpipe.diagnostics import Diagnostic, ValidationError
from mlpipe.plan import ExecutionPlan
from mlpipe.sdk.callsite import call_site
from mlpipe.sdk.job import PipelineJob


def _check_job(job: Any, function: str) -> None:
    """A :class:`ValidationError` at the caller's line when ``job`` is not something to run."""
    if isinstance(job, (PipelineJob, str, os.PathLike)):
        return
    kind = type(job).__name__
    hint = ("a step runs inside a pipeline: call it in a @pipeline function and pass the "
            "function's result" if kind.endswith("Node") or hasattr(job, "outputs") else None)
    raise ValidationError([Diagnostic(
        f"{function}() takes a PipelineJob (the result of a @pipeline function, or load_job(...)) "
        f"or the path of a pipeline YAML, got {kind}", location=call_site(), code="type",
        hint=hint)])


def compile_job(job: PipelineJob | str | os.PathLike[str], *,
                runs_dir: str | Path | None = None, job_name: str | None = None,
                overrides: Any = (), check_paths: bool = True) -> ExecutionPlan:
    """Validate ``job`` and compile it; a :class:`mlpipe.ValidationError` lists every problem."""
    from mlpipe.compiler import compile_pipeline

    _check_job(job, "compile")
    if isinstance(job, PipelineJob):
        from mlpipe.schema import load_pipeline_data

        data, positions = job.positions()
        source: Any = load_pipeline_data(data, str(job.source), positions=positions)
    else:
        source = Path(os.fspath(job)).resolve()
    return compile_pipeline(source, runs_dir=runs_dir, job_name=job_name,
                            overrides=tuple(overrides), check_paths=check_paths)


@dataclass
class RunResult:
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

    @property
    def ok(self) -> bool:
        return self.status == "completed"

    @property
    def studio_url(self) -> str:
        """azure-ai-ml's link to the job: here the run folder, as a ``file://`` URL."""
        return Path(self.run_dir).as_uri()


def _reports(logs_dir: str) -> dict[str, str]:
    """A step's report files, by path relative to its ``logs`` folder.

    The files at the top of ``logs`` (``job_result.txt``, ``readme.txt``,
    ``job_progress_overview.*.txt``), ``sys/job_report/*`` and ``sys/*.html``.
    """
    root = Path(logs_dir)
    if not root.is_dir():
        return {}
    found = [p for p in root.iterdir() if p.is_file()]
    found += [p for p in (root / "sys" / "job_report").glob("*") if p.is_file()]
    found += [p for p in (root / "sys").glob("*.html") if p.is_file()]
    return {p.relative_to(root).as_posix(): str(p) for p in sorted(found)}


def _name_fields(job: PipelineJob | str | os.PathLike[str]) -> dict[str, Any]:
    """``display_name`` and ``experiment_name`` of a job, or of a YAML file (best effort)."""
    if isinstance(job, PipelineJob):
        return {"display_name": job.display_name, "experiment_name": job.experiment_name}
    from mlpipe.schema import load_yaml_file

    return load_yaml_file(os.fspath(job)).data or {}


def run(job: PipelineJob | str | os.PathLike[str], *, runs_dir: str | Path | None = None,
        job_name: str | None = None, overrides: Any = (), echo: Any = None,
        **runner_options: Any) -> RunResult:
    """Run a job (or a pipeline YAML path) locally with the same runtime as ``mlpipe job create``.

    ``runner_options`` go to :func:`mlpipe.jobs.run_plan` (``backend``, ``max_workers``,
    ``progress``, ``cancel``). Raises :class:`mlpipe.ValidationError` before anything
    runs when the job is invalid.
    """
    from mlpipe.jobs import JobStore, generate_job_name, run_plan

    _check_job(job, "run")
    store = JobStore(runs_dir)
    if job_name is None:
        source = job.source if isinstance(job, PipelineJob) else Path(os.fspath(job))
        names = _name_fields(job)
        job_name = generate_job_name(source, display_name=names.get("display_name"),
                                     experiment_name=names.get("experiment_name"),
                                     taken=store.exists)
    plan = compile_job(job, runs_dir=store.runs_dir, job_name=job_name, overrides=overrides)
    result = run_plan(plan, echo=echo, **runner_options)
    steps = result.steps
    return RunResult(
        name=result.name,
        status=result.status,
        run_dir=result.run_dir,
        outputs=dict(result.outputs),
        step_outputs={name: dict(step.outputs) for name, step in steps.items()},
        reports={name: _reports(step.logs_dir) for name, step in steps.items()},
        logs={name: step.logs_dir for name, step in steps.items()},
        plan=plan,
        job_result=result,
    )
