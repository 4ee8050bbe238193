"""Running whole pipelines locally and keeping their records (``mlpipe job ...``)."""

from __future__ import annotations

from mlpipe.jobs.preflight import RemoteAssetsError
from mlpipe.jobs.runner import JobConflictError, JobResult, StepResult, run_plan
from mlpipe.jobs.store import JobNotFound, JobStore, generate_job_name, resolve_runs_dir

__all__ = [
    "JobConflictError",
    "JobNotFound",
    "JobResult",
    "JobStore",
    "RemoteAssetsError",
    "StepResult",
    "generate_job_name",
    "resolve_runs_dir",
    "run_plan",
]
