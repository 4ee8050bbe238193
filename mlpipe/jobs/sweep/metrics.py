"""The metrics a trial logs, read while it runs and after.

A trial's process gets ``MLPIPE_METRICS_FILE`` (one JSON line per metric:
``{"key", "value", "step"}``), written by mlpipe's stand-in for ``mlflow`` (when mlflow is
not installed) and by the v1 ``Run.get_context().log``; with mlflow installed it gets
``MLFLOW_TRACKING_URI`` set to a file store in the trial's folder, read here too
(``mlruns/<experiment>/<run>/metrics/<key>``: ``timestamp value step`` lines).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

METRICS_FILE_ENV = "MLPIPE_METRICS_FILE"
SHIM_DIR = Path(__file__).resolve().parent / "mlflow_shim"


def mlflow_installed() -> bool:
    """Whether the real ``mlflow`` can be imported here."""
    try:
        return importlib.util.find_spec("mlflow") is not None
    except (ImportError, ValueError):
        return False


def trial_environment(trial_dir: Path, pythonpath: str | None) -> dict[str, str]:
    """The variables that make a trial's logged metrics readable by :func:`read_metric`."""
    env = {METRICS_FILE_ENV: str(trial_dir / "metrics.jsonl"),
           "MLFLOW_TRACKING_URI": (trial_dir / "mlruns").as_uri()}
    if not mlflow_installed():
        env["PYTHONPATH"] = str(SHIM_DIR) + (f":{pythonpath}" if pythonpath else "")
    return env


def read_metric(trial_dir: Path, key: str) -> list[float]:
    """Every value of metric ``key`` the trial has logged so far, in the order logged."""
    values: list[tuple[float, float]] = []  # (order, value)
    path = trial_dir / "metrics.jsonl"
    if path.is_file():
        for index, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line still being written
            if record.get("key") == key and isinstance(record.get("value"), (int, float)):
                values.append((index, float(record["value"])))
    store = trial_dir / "mlruns"
    for metric in sorted(store.glob(f"*/*/metrics/{key}")) if store.is_dir() else []:
        for line in metric.read_text(encoding="utf-8").splitlines():
            parts = line.split()
            try:
                values.append((float(parts[0]), float(parts[1])))
            except (IndexError, ValueError):
                continue
    return [value for _order, value in sorted(values, key=lambda item: item[0])]


__all__ = ["METRICS_FILE_ENV", "SHIM_DIR", "mlflow_installed", "read_metric",
           "trial_environment"]
