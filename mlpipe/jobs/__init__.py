"""Running whole pipelines locally and keeping their records (``mlpipe job ...``).

:func:`submit` is the front door (``mlpipe job create`` and ``mlpipe.run``);
:func:`run_plan` runs an already compiled plan.

Names are imported on first use, so ``mlpipe job list/show/cancel`` stay quick
(the runner pulls in the runtime and pandas).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "JobConflictError": "mlpipe.jobs.store",
    "JobResult": "mlpipe.jobs.runner",
    "StepResult": "mlpipe.jobs.runner",
    "run_plan": "mlpipe.jobs.runner",
    "RemoteAssetsError": "mlpipe.jobs.preflight",
    "JobNotFound": "mlpipe.jobs.store",
    "JobStore": "mlpipe.jobs.store",
    "generate_job_name": "mlpipe.runs",
    "resolve_runs_dir": "mlpipe.runs",
    "Decision": "mlpipe.jobs.front_door",
    "Mode": "mlpipe.jobs.front_door",
    "Submission": "mlpipe.jobs.front_door",
    "submit": "mlpipe.jobs.front_door",
    "NotAPipelineError": "mlpipe.jobs.front_door",
    "SubmitUsageError": "mlpipe.jobs.front_door",
    "BackendUnavailableError": "mlpipe.jobs.preflight",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'mlpipe.jobs' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


__all__ = sorted(_EXPORTS)
