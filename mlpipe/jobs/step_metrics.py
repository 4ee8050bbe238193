"""Where the metrics a command step's Python logs go (sweep trials are command steps).

Every command step gets ``MLPIPE_METRICS_FILE`` (``<step>/metrics.jsonl``: one JSON line per
metric, ``{"key", "value", "step"}``), written by mlpipe's stand-in for ``mlflow``
(``mlflow_shim/``, put on the step's ``PYTHONPATH`` when mlflow is not installed, so a script
that logs with mlflow runs as it does in Azure ML) and by the v1 ``Run.get_context().log``; and
``MLFLOW_TRACKING_URI``, a file store in the step's folder that the real mlflow writes to when
it is installed. :mod:`mlpipe.jobs.sweep.metrics` reads both.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

METRICS_FILE_ENV = "MLPIPE_METRICS_FILE"
SHIM_DIR = Path(__file__).resolve().parent / "mlflow_shim"


def mlflow_installed() -> bool:
    """Whether the real ``mlflow`` can be imported here."""
    try:
        return importlib.util.find_spec("mlflow") is not None
    except (ImportError, ValueError):
        return False


def metrics_environment(step_dir: Path, pythonpath: str | None) -> dict[str, str]:
    """The variables that keep what a step in ``step_dir`` logs (``pythonpath``: the one it
    would have otherwise)."""
    env = {METRICS_FILE_ENV: str(step_dir / "metrics.jsonl"),
           "MLFLOW_TRACKING_URI": (step_dir / "mlruns").as_uri()}
    if not mlflow_installed():
        env["PYTHONPATH"] = os.pathsep.join([str(SHIM_DIR), *([pythonpath] if pythonpath else [])])
    return env


__all__ = ["METRICS_FILE_ENV", "SHIM_DIR", "metrics_environment", "mlflow_installed"]
