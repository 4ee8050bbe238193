"""Running whole pipelines locally and keeping their records (``mlpipe job ...``).

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
    "generate_job_name": "mlpipe.jobs.store",
    "resolve_runs_dir": "mlpipe.plan",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'mlpipe.jobs' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


__all__ = sorted(_EXPORTS)
