"""``ml_client.jobs``: run, look up, stream, download and cancel jobs in the local runs folder."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

from mlpipe.compiler.outputs import child_job_name
from mlpipe.jobs.azure_view import azure_status
from mlpipe.jobs.download import download_job
from mlpipe.jobs.record import JobRecord, StepRecord
from mlpipe.sdk.assets import Resource
from mlpipe.sdk.exceptions import ResourceNotFoundError
from mlpipe.sdk.job import PipelineJob
from mlpipe.sdk.nodes import CommandNode, SweepNode
from mlpipe.sdk.operations.base import Operations
from mlpipe.sdk.running import Job, run


class JobNotFoundError(ResourceNotFoundError):
    """``ml_client.jobs.get(name)`` of a job the runs folder does not have."""


class JobFailedError(RuntimeError):
    """``ml_client.jobs.stream(name)`` of a job that did not complete (as azure-ai-ml raises)."""


class LocalJob(Resource, Job):
    """A job as the runs folder records it: ``name``, ``status``, ``outputs`` (name -> path)."""

    _fields = ("name", "display_name", "experiment_name", "description", "status", "type",
               "tags", "properties", "outputs", "run_dir", "studio_url")

    def __init__(self, fields: dict[str, Any], error: str | None = None,
                 parent: str | None = None, properties: dict[str, str] | None = None) -> None:
        self._set(fields, {})
        self.studio_url = Path(self.run_dir).as_uri() if self.run_dir else None
        self.error = error
        self.parent_job_name = parent
        self.properties = properties or {}

    @classmethod
    def of_job(cls, record: JobRecord) -> LocalJob:
        """Job ``record`` as azure-ai-ml's ``Job``."""
        return cls(dict(name=record.name, display_name=record.display_name,
                        experiment_name=record.experiment_name,
                        description=record.description, status=azure_status(record.status),
                        type=record.kind or "pipeline", tags=record.tags, properties=None,
                        outputs={name: out.path for name, out in record.outputs.items()},
                        run_dir=record.run_dir, studio_url=None),
                   error=record.error, properties=sweep_properties(record))

    @classmethod
    def of_step(cls, name: str, step: StepRecord, parent: str) -> LocalJob:
        """Step ``name`` of job ``parent`` as azure-ai-ml's child ``Job`` (named
        ``<job>_<step>``, as ``${{name}}`` in the step's outputs and ``job download``)."""
        return cls(dict(name=child_job_name(parent, name), display_name=step.display_name or name,
                        experiment_name=None,
                        description=None, status=azure_status(step.status),
                        type=step.kind or "pipeline", tags=None, properties=None,
                        outputs={output: out.path for output, out in step.outputs.items()},
                        run_dir=step.step_dir, studio_url=None),
                   error=step.error, parent=parent)


def _summary(error: str) -> str:
    """A step's error in one line: its first line, and the last line of a traceback under it
    (``command exited with code 1: ModuleNotFoundError: No module named 'x'``)."""
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    first, last = lines[0], lines[-1]
    return first if len(lines) == 1 or last in first else f"{first.rstrip(':')}: {last}"


def sweep_properties(record: JobRecord) -> dict[str, str]:
    """A standalone sweep job's ``properties``: ``best_child_run_id`` names its best trial as
    Azure ML names a sweep's child jobs (``<job>_<trial number>``); ``{}`` for other jobs."""
    step = record.steps.get("sweep") if record.kind == "sweep" else None
    best = step.best_trial if step is not None else None
    if best is None:
        return {}
    return {"best_child_run_id": f"{record.name}_{best.removeprefix('trial_')}"}


class Poller:
    """The ``LROPoller`` azure-ai-ml's ``begin_*`` calls return; the work is already done."""

    def __init__(self, value: Any = None) -> None:
        self._value = value

    def result(self, timeout: float | None = None) -> Any:
        return self._value

    def wait(self, timeout: float | None = None) -> None:
        return None

    def done(self) -> bool:
        return True

    def status(self) -> str:
        return "Succeeded"


class JobOperations(Operations):
    """``ml_client.jobs``: validate and run pipeline jobs locally; read them back from the
    runs folder (``mlpipe job list`` shows the same jobs)."""

    _group = "jobs"

    def __init__(self, runs_dir: str | Path | None = None, base_dir: Path | None = None) -> None:
        super().__init__(runs_dir, base_dir)
        self._results: dict[str, Any] = {}

    def _store(self) -> Any:
        from mlpipe.jobs import JobStore

        return JobStore(self._runs_dir)

    def create_or_update(self, job: Any, *, description: str | None = None,
                         compute: str | None = None, tags: dict[str, str] | None = None,
                         experiment_name: str | None = None, skip_validation: bool = False,
                         **kwargs: Any) -> Any:
        """Run ``job`` now (with :func:`mlpipe.run`) and return its result when it ends: a
        pipeline job, or a command or sweep node as a job of its own (the standalone job
        azure-ai-ml submits for it)."""
        if isinstance(job, (PipelineJob, CommandNode, SweepNode)):
            if experiment_name and not job.experiment_name:
                job.experiment_name = experiment_name
            if description:
                job.description = description
            if tags:
                job.tags = {**(job.tags or {}), **tags}
            if compute and isinstance(job, PipelineJob):
                job.settings.default_compute = compute
            elif compute:
                job.compute = compute
        result = run(job, runs_dir=self._runs_dir, **kwargs)
        self._results[result.name] = result
        return result

    def validate(self, job: Any, *, raise_on_failure: bool = True, **kwargs: Any) -> Any:
        """Raise :class:`mlpipe.ValidationError` for an invalid job; return the warnings."""
        return job.validate()

    def get(self, name: str) -> LocalJob:
        """The job ``name`` from the runs folder (any job run here, in this script or not)."""
        store = self._store()
        from mlpipe.jobs import JobNotFound

        try:
            return LocalJob.of_job(store.load(name))
        except JobNotFound as missing:  # azure-core's error, in the store's one wording
            raise JobNotFoundError(str(missing)) from None

    def list(self, *, parent_job_name: str | None = None, **kwargs: Any) -> list[LocalJob]:
        """Every job in the runs folder, newest first; with ``parent_job_name``, its steps."""
        store = self._store()
        if parent_job_name is None:
            return [LocalJob.of_job(record) for record in store.list()]
        record = store.load(parent_job_name)
        return [LocalJob.of_step(step, entry, parent_job_name)
                for step, entry in record.steps.items()]

    def stream(self, name: str, **kwargs: Any) -> None:
        """Print how job ``name`` ended (it ended when ``create_or_update`` returned); raise
        :class:`JobFailedError` when it did not complete, as azure-ai-ml does."""
        job = self.get(name)
        print(f"RunId: {job.name}\nStatus: {job.status}\nRun folder: {job.run_dir}")
        failed = []
        for step in self.list(parent_job_name=name):
            print(f"  step {step.display_name}: {step.status}  logs: {step.run_dir}")
            if step.status == "Failed" and step.error:
                failed.append(f"step {step.display_name}: {_summary(step.error)}")
                print(textwrap.indent(step.error.strip(), "    "))  # as azure-ai-ml streams it
        sys.stdout.flush()
        if job.status != "Completed":
            why = job.error or (failed[0] if failed else "see the step logs above")
            raise JobFailedError(f"job {name!r} ended {job.status}: {why}")

    def download(self, name: str, *, download_path: str | Path = ".",
                 output_name: str | None = None, all: bool = False) -> None:
        """Copy the job's files as azure-ai-ml lays them out: ``output_name`` to
        ``<download_path>/named-outputs/<output>``, ``all`` every output and the logs, else
        the logs to ``<download_path>/artifacts`` (:mod:`mlpipe.jobs.download`)."""
        self.get(name)  # a missing job is azure-ai-ml's ResourceNotFoundError
        download_job(self._store(), name, download_path, output_name, all)

    def begin_cancel(self, name: str, **kwargs: Any) -> Poller:
        """Ask job ``name`` to stop, like ``mlpipe job cancel``."""
        from mlpipe.jobs.ownership import request_cancel

        request_cancel(self._store(), name)
        return Poller()


__all__ = ["JobFailedError", "JobNotFoundError", "JobOperations", "LocalJob", "Poller"]
