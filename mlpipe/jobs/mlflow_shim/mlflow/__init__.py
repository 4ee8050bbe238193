"""mlpipe's stand-in for ``mlflow`` in a command step (a sweep trial too), when mlflow is not
installed.

It records what a training script logs (``log_metric``, ``log_metrics``, ``log_param``,
``set_tag``, ...) in the file named by ``MLPIPE_METRICS_FILE`` (``<step>/metrics.jsonl``),
where a sweep reads its objective. Model saving and autologging are mlflow's own:
``autolog`` logs nothing here, and any other mlflow name raises ``AttributeError`` saying so
(install mlflow for them).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from typing import Any

_params: dict[str, Any] = {}
_tags: dict[str, Any] = {}


class ActiveRun:
    """What ``start_run`` returns (also a context manager)."""

    def __init__(self) -> None:
        self.info = type("RunInfo", (), {"run_id": uuid.uuid4().hex, "status": "RUNNING"})()

    def __enter__(self) -> ActiveRun:
        return self

    def __exit__(self, *exc: Any) -> None:
        end_run()


_active: ActiveRun | None = None


def _write(record: dict[str, Any]) -> None:
    path = os.environ.get("MLPIPE_METRICS_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")


def log_metric(key: str, value: float, step: int | None = None, **_kwargs: Any) -> None:
    _write({"key": key, "value": float(value), "step": step, "time": time.time()})


def log_metrics(metrics: dict[str, float], step: int | None = None, **_kwargs: Any) -> None:
    for key, value in metrics.items():
        log_metric(key, value, step)


def log_param(key: str, value: Any) -> Any:
    _params[key] = value
    return value


def log_params(params: dict[str, Any]) -> None:
    _params.update(params)


def set_tag(key: str, value: Any) -> None:
    _tags[key] = value


def set_tags(tags: dict[str, Any]) -> None:
    _tags.update(tags)


def start_run(*_args: Any, **_kwargs: Any) -> ActiveRun:
    global _active
    _active = _active or ActiveRun()
    return _active


def end_run(*_args: Any, **_kwargs: Any) -> None:
    global _active
    _active = None


def active_run() -> ActiveRun | None:
    return _active


def autolog(*_args: Any, **_kwargs: Any) -> None:
    """Autologging is mlflow's own: nothing is logged automatically here."""


def set_experiment(*_args: Any, **_kwargs: Any) -> None:
    """Experiments are Azure ML's: nothing to set locally."""


def set_tracking_uri(*_args: Any, **_kwargs: Any) -> None:
    """The sweep reads the metrics file; the URI is not used."""


def get_tracking_uri() -> str:
    return os.environ.get("MLFLOW_TRACKING_URI", "")


def __getattr__(name: str) -> Any:
    raise AttributeError(f"mlflow.{name} is not available in mlpipe's stand-in for mlflow (it "
                         "records log_metric, log_param, set_tag, ...): install mlflow to use it")
