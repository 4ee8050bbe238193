"""v1 ``Run.get_context()``: an offline run, as azureml-core gives outside Azure (metrics
printed, files and models kept local)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlpipe.sdk.v1.models import Model
from mlpipe.sdk.v1.workspace import Workspace


class _Experiment:
    def __init__(self, name: str) -> None:
        self.name = name
        self.id = name
        self.workspace = Workspace()


class _OfflineRun:
    """``Run.get_context()`` outside Azure: metrics are printed, files and models stay local
    (``register_model`` registers in the local asset store)."""

    _count = 0

    def __init__(self, parent: _OfflineRun | None = None, name: str | None = None) -> None:
        _OfflineRun._count += 1
        self.id = f"OfflineRun_{os.getpid()}_{_OfflineRun._count}"
        self.name = name or self.id
        self.parent = parent or self
        self.experiment = _Experiment(os.environ.get("MLPIPE_EXPERIMENT") or "local")
        self.tags: dict[str, Any] = {}
        self.properties: dict[str, Any] = {}
        self.metrics: dict[str, Any] = {}
        self._files: dict[str, str] = {}
        self._status = "Running"

    def child_run(self, name: str | None = None, run_id: str | None = None,
                  outputs: str | None = None) -> _OfflineRun:
        return _OfflineRun(self, name)

    def log(self, name: str, value: Any, description: str = "", step: int | None = None
            ) -> None:
        self.metrics.setdefault(name, []).append(value)
        print(f"metric {name}: {value}")

    def log_row(self, name: str, description: str | None = None, **kwargs: Any) -> None:
        self.log(name, kwargs)

    def log_list(self, name: str, value: list[Any], description: str = "") -> None:
        self.log(name, value)

    def tag(self, key: str, value: Any = None) -> None:
        self.tags[key] = value

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        self.tags.update(tags)

    def get_tags(self) -> dict[str, Any]:
        return dict(self.tags)

    def add_properties(self, properties: Mapping[str, Any]) -> None:
        self.properties.update(properties)

    def get_metrics(self, name: str | None = None, **kwargs: Any) -> dict[str, Any]:
        return {name: self.metrics.get(name)} if name else dict(self.metrics)

    def upload_file(self, name: str, path_or_stream: str) -> None:
        """Record the file under ``name`` (it stays where it is)."""
        self._files[name] = str(Path(path_or_stream).resolve())

    def register_model(self, model_name: str, model_path: str | None = None,
                       tags: Any = None, properties: Any = None, description: str | None = None,
                       **kwargs: Any) -> Model:
        """Register an uploaded file (or a local path) as a model in the local asset store."""
        path = self._files.get(model_path or model_name) or model_path or model_name
        return Model.register(None, path, model_name, tags=tags, properties=properties,
                              description=description)

    def get_status(self) -> str:
        return self._status

    def complete(self) -> None:
        self._status = "Completed"

    def fail(self, error_details: Any = None, **kwargs: Any) -> None:
        self._status = "Failed"


class Run:
    """v1 ``Run``: ``Run.get_context()`` is an offline run (as azureml-core gives outside Azure)."""

    _context: _OfflineRun | None = None

    @classmethod
    def get_context(cls, allow_offline: bool = True, **kwargs: Any) -> _OfflineRun:
        if cls._context is None:
            cls._context = _OfflineRun()
        return cls._context


__all__ = ["Run"]
