"""The metrics a trial logs, read while it runs and after.

A trial is a command step: what it logs with ``mlflow`` (mlpipe's stand-in, or the real one)
or the v1 ``Run.get_context().log`` lands in its folder (:mod:`mlpipe.jobs.step_metrics`):
``metrics.jsonl`` (one JSON line per metric: ``{"key", "value", "step"}``) and, with mlflow
installed, its file store ``mlruns/<experiment>/<run>/metrics/<key>`` (``timestamp value
step`` lines). Both are read here.
"""

from __future__ import annotations

import json
from pathlib import Path


def read_metric(trial_dir: Path, key: str) -> list[float]:
    """Every value of metric ``key`` the trial has logged so far, in the order logged."""
    values: list[tuple[float, float]] = []  # (order, value)
    path = trial_dir / "metrics.jsonl"
    if path.is_file():
        for index, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            try:
                logged = json.loads(line)  # one mlflow.log_metric call
            except ValueError:
                continue  # a line still being written
            if logged.get("key") == key and isinstance(logged.get("value"), (int, float)):
                values.append((index, float(logged["value"])))
    store = trial_dir / "mlruns"
    for metric in sorted(store.glob(f"*/*/metrics/{key}")) if store.is_dir() else []:
        for line in metric.read_text(encoding="utf-8").splitlines():
            parts = line.split()
            try:
                values.append((float(parts[0]), float(parts[1])))
            except (IndexError, ValueError):
                continue
    return [value for _order, value in sorted(values, key=lambda item: item[0])]


__all__ = ["read_metric"]
