"""Running whole pipelines locally and keeping their records (``mlpipe job ...``).

:func:`submit` is the front door (``mlpipe job create`` and ``mlpipe.run``);
:func:`run_plan` runs an already compiled plan.

Names are imported on first use, so ``mlpipe job list/show/cancel`` stay quick
(the runner pulls in the runtime and pandas).
"""

from __future__ import annotations

from mlpipe.exports import exports_on_first_use

_EXPORTS = {
    "JobConflictError": "mlpipe.jobs.store",
    "JobResult": "mlpipe.jobs.runner",
    "StepResult": "mlpipe.jobs.runner",
    "run_plan": "mlpipe.jobs.runner",
    "RemoteAssetsError": "mlpipe.jobs.preflight",
    "JobNotFound": "mlpipe.jobs.store",
    "JobStore": "mlpipe.jobs.store",
    "JobRecord": "mlpipe.jobs.record",
    "StepRecord": "mlpipe.jobs.record",
    "generate_job_name": "mlpipe.runs",
    "resolve_runs_dir": "mlpipe.runs",
    "Decision": "mlpipe.jobs.front_door",
    "Mode": "mlpipe.jobs.request",
    "JobRequest": "mlpipe.jobs.request",
    "JobHooks": "mlpipe.jobs.front_door",
    "Submission": "mlpipe.jobs.front_door",
    "submit": "mlpipe.jobs.front_door",
    "NotAPipelineError": "mlpipe.jobs.front_door",
    "SubmitUsageError": "mlpipe.jobs.front_door",
    "BackendUnavailableError": "mlpipe.jobs.preflight",
}

__getattr__ = exports_on_first_use(__name__, _EXPORTS)


__all__ = sorted(_EXPORTS)
