"""v1 ``Run.get_context()``: an offline run, as azureml-core gives outside Azure (metrics
printed, files and models kept local).

Inside a step of a local job the run knows where it is (``mlpipe.runs``' ``*_ENV``
variables, set by the runner): ``id`` is ``<job>_<step>``, ``parent`` the pipeline's run
(its ``id`` the job's name), ``upload_file`` copies into ``<step folder>/artifacts``, and
``input_datasets`` gives the step's named datasets as v1 does (a path for ``as_mount()`` /
``as_download()``, a ``FileDataset`` / ``TabularDataset`` otherwise; see
:mod:`mlpipe.sdk.v1.wiring`)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlpipe.runs import EXPERIMENT_ENV, JOB_NAME_ENV, STEP_DIR_ENV, STEP_NAME_ENV
from mlpipe.sdk.v1.datasets import FileDataset, TabularDataset
from mlpipe.sdk.v1.mltables import folder_table_mltable
from mlpipe.sdk.v1.models import Model
from mlpipe.sdk.v1.wiring import DATA_REFERENCE_ENV, DATASETS_ENV
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

    def __init__(self, parent: _OfflineRun | None = None, name: str | None = None,
                 run_id: str | None = None) -> None:
        _OfflineRun._count += 1
        self.id = run_id or f"OfflineRun_{os.getpid()}_{_OfflineRun._count}"
        self.name = name or self.id
        self.parent = parent or self
        self.experiment = _Experiment(os.environ.get(EXPERIMENT_ENV) or "local")
        self.tags: dict[str, Any] = {}
        self.properties: dict[str, Any] = {}
        self.metrics: dict[str, Any] = {}
        self._files: dict[str, str] = {}
        self._status = "Running"
        self._datasets: dict[str, Any] | None = None

    @property
    def input_datasets(self) -> dict[str, Any]:
        """The step's named dataset inputs (empty outside a step)."""
        if self._datasets is None:
            self._datasets = step_datasets(os.environ)
        return self._datasets

    @property
    def output_datasets(self) -> dict[str, Any]:
        return {}

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

    def upload_file(self, name: str, path_or_stream: str,
                    datastore_name: str | None = None) -> None:
        """Keep the file under ``name``: in a step, a copy in ``<step folder>/artifacts``
        (``register_model(model_path=name)`` finds it)."""
        source = Path(path_or_stream).resolve()
        step_dir = os.environ.get(STEP_DIR_ENV)
        if step_dir and source.is_file():
            target = Path(step_dir) / "artifacts" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
            source = target
        self._files[name] = str(source)

    def upload_folder(self, name: str, path: str, datastore_name: str | None = None) -> None:
        for file in sorted(Path(path).rglob("*")):
            if file.is_file():
                self.upload_file(f"{name}/{file.relative_to(path).as_posix()}", str(file))

    def register_model(self, model_name: str, model_path: str | None = None,
                       tags: Any = None, properties: Any = None,
                       model_framework: str | None = None,
                       model_framework_version: str | None = None,
                       description: str | None = None, **kwargs: Any) -> Model:
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


def _context_run() -> _OfflineRun:
    """The run of this process: the step's (with its pipeline run as ``parent``) in a step
    of a local job, else an offline run."""
    job, step = os.environ.get(JOB_NAME_ENV), os.environ.get(STEP_NAME_ENV)
    if not (job and step):
        return _OfflineRun()
    return _OfflineRun(_OfflineRun(name=job, run_id=job), step, f"{job}_{step}")


def step_datasets(env: Mapping[str, str], as_objects: bool = False) -> dict[str, Any]:
    """``input_datasets`` of a step, from the variables :mod:`mlpipe.sdk.v1.wiring` sets
    (``as_objects``: every one as a dataset object, also those a step gets as a path)."""
    described = json.loads(env.get(DATASETS_ENV) or "{}")
    found: dict[str, Any] = {}
    for name, how in described.items():
        path = env.get(DATA_REFERENCE_ENV.format(name))
        if path is None:
            continue
        kind, mode = how.get("kind"), how.get("mode")
        if kind == "folder_table":
            found[name] = TabularDataset(str(folder_table_mltable(
                path, how.get("reader", "delimited"), how.get("separator", ","),
                how.get("header", "all_files_same_headers"))))
        elif kind == "table":
            found[name] = TabularDataset(path)
        elif mode in (None, "direct") or as_objects:
            found[name] = FileDataset(path)
        else:
            found[name] = path  # as_mount() / as_download(): where the files are
    return found


class Run:
    """v1 ``Run``: ``Run.get_context()`` is an offline run (as azureml-core gives outside Azure),
    the step's own inside a step of a local job."""

    _context: _OfflineRun | None = None

    @classmethod
    def get_context(cls, allow_offline: bool = True, **kwargs: Any) -> _OfflineRun:
        if cls._context is None:
            cls._context = _context_run()
        return cls._context


__all__ = ["Run", "step_datasets"]
