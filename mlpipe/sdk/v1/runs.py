"""v1 runs: ``Experiment.submit`` returns a :class:`PipelineRun` over the local run's result,
with v1's ``wait_for_completion``, ``get_steps`` / ``get_children``, ``find_step_run`` and
``get_output_data(...).download(...)``; ``RunDetails`` (``azureml.widgets``) prints where its
logs are. Publishing needs a workspace: ``publish_pipeline`` raises ``NotAvailableLocally``.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mlpipe.runtime.step_logs import StepLogs
from mlpipe.sdk.v1.datasets import FileDataset
from mlpipe.sdk.v1.exceptions import ActivityFailedException
from mlpipe.sdk.v1.models import Model
from mlpipe.sdk.v1.run_context import step_datasets
from mlpipe.sdk.v1.translation import v2_name

_STATUS = {"completed": "Finished", "failed": "Failed", "canceled": "Canceled"}
PUBLISH_HINT = ("A published pipeline is a REST endpoint in a workspace; run the pipeline here "
                "with Experiment(ws, name).submit(pipeline), or publish it with azureml-pipeline "
                "against a workspace.")


def _mechanism(mode: str | None) -> str:
    """azureml's ``consumptionDetails.mechanism`` for an input mode."""
    return "Download" if mode == "download" else "Direct" if mode == "direct" else "Mount"


def v1_status(status: str | None) -> str:
    """A local status in v1's words (``Finished``, ``Failed``, ``Canceled``, ...)."""
    return _STATUS.get(str(status), str(status).capitalize())


class PortDataReference:
    """v1's handle on a step output: ``download(local_path)`` copies it to
    ``<local_path>/<path_on_datastore>``."""

    def __init__(self, name: str, path: str, path_on_datastore: str,
                 datastore_name: str = "workspaceblobstore") -> None:
        self.name = name
        self.path = path
        self.path_on_datastore = path_on_datastore
        self.datastore_name = datastore_name

    def download(self, local_path: str | Path, overwrite: bool = False,
                 show_progress: bool = True) -> str:
        target = Path(local_path) / self.path_on_datastore
        source = Path(self.path)
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / source.name)
        return str(target)

    def __repr__(self) -> str:
        return f"PortDataReference(name={self.name!r}, path={self.path!r})"


class StepRunOutput:
    """One output of a step run (``step_run.get_outputs()[name]``)."""

    def __init__(self, reference: PortDataReference) -> None:
        self.name = reference.name
        self._reference = reference

    def get_port_data_reference(self) -> PortDataReference:
        return self._reference


class _RunFiles:
    """v1's run files (``get_file_names``, ``download_file``, ``register_model``): what the
    run's steps wrote to ``./outputs`` and ``./logs`` in their working folder, and what they
    uploaded (``upload_file``)."""

    id: str

    def _step_dirs(self) -> list[Path]:
        raise NotImplementedError

    def get_file_names(self) -> list[str]:
        return sorted(self._files())

    def download_file(self, name: str, output_file_path: str | None = None,
                      _validate_checksum: bool = False) -> None:
        """Copy the run's file ``name`` to ``output_file_path`` (a file, or a folder to put it
        in; default: the working folder)."""
        source = self._file(name)
        target = Path(output_file_path or ".")
        if target.is_dir():
            target = target / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)

    def register_model(self, model_name: str, model_path: str | None = None, tags: Any = None,
                       properties: Any = None, model_framework: str | None = None,
                       model_framework_version: str | None = None,
                       description: str | None = None, **kwargs: Any) -> Any:
        """Register one of the run's files or folders (``outputs/model.pkl``) as a model in
        the local asset store."""
        source = self._file(model_path or model_name, folders=True)
        return Model.register(None, str(source), model_name, tags=tags, properties=properties,
                              description=description)

    def _roots(self) -> list[tuple[Path, str]]:
        roots = []
        for step in self._step_dirs():
            roots += [(step / "code", "outputs"), (step / "code", "logs"), (step / "artifacts", "")]
        return roots

    def _files(self) -> dict[str, Path]:
        found: dict[str, Path] = {}
        for base, top in self._roots():
            if (base / top).is_dir():
                for path in sorted((base / top).rglob("*")):
                    if path.is_file():
                        found.setdefault(path.relative_to(base).as_posix(), path)
        return found

    def _file(self, name: str, folders: bool = False) -> Path:
        files = self._files()
        if name in files:
            return files[name]
        for base, _top in self._roots() if folders else []:
            if (base / name.rstrip("/")).is_dir():
                return base / name.rstrip("/")
        raise FileNotFoundError(f"run {self.id} has no file {name!r} (files: "
                                f"{', '.join(sorted(files)) or 'none'})")


class StepRun(_RunFiles):
    """One step of a :class:`PipelineRun`: ``name`` is the v1 step name."""

    def __init__(self, parent: PipelineRun, key: str) -> None:
        self.parent = parent
        self.key = key  # the v2 step name
        self.name = parent._v1_names.get(key, key)
        self.id = f"{parent.id}_{key}"

    def get_status(self) -> str:
        steps = self.parent._result.job_result.steps if self.parent._result.job_result else {}
        return v1_status(steps[self.key].status if self.key in steps
                         else self.parent._result.status)

    def get_outputs(self) -> dict[str, StepRunOutput]:
        return {name: StepRunOutput(self.get_output_data(name))
                for name in self.parent.step_outputs.get(self.key, {})}

    def get_output_data(self, name: str) -> PortDataReference:
        outputs = self.parent.step_outputs.get(self.key, {})
        if name not in outputs:
            raise KeyError(f"step {self.name!r} has no output {name!r} "
                           f"(outputs: {', '.join(outputs) or 'none'})")
        return PortDataReference(name, outputs[name], f"azureml/{self.id}/{name}")

    def get_details(self) -> dict[str, Any]:
        """azureml's run details: ``runId``, ``status``, ``target``, ``logFiles`` and the
        datasets in its shape: ``inputDatasets`` (each ``{"dataset", "consumptionDetails":
        {"type": "RunInput", "inputName", "mechanism"}}``) and ``outputDatasets`` (each
        ``{"identifier", "dataset", "outputType": "RunOutput", "outputDetails":
        {"outputName"}}``), every ``dataset`` a ``FileDataset`` / ``TabularDataset`` of the
        data the step read or wrote."""
        step = self.parent._result.plan.step(self.key)
        described = step_datasets(step.environment_variables, as_objects=True)
        mechanisms = {name: getattr(value, "mode", None) for name, value in step.inputs.items()}
        inputs = [{"dataset": dataset,
                   "consumptionDetails": {"type": "RunInput", "inputName": name,
                                          "mechanism": _mechanism(mechanisms.get(name))},
                   "identifier": {"savedId": f"{self.id}_{name}"}}
                  for name, dataset in described.items()]
        outputs = [{"identifier": {"savedId": f"{self.id}_{name}"},
                    "dataset": FileDataset(path),
                    "outputType": "RunOutput", "outputDetails": {"outputName": name}}
                   for name, path in self.parent.step_outputs.get(self.key, {}).items()]
        logs = self.parent.logs.get(self.key)
        return {"runId": self.id, "target": step.compute or "local", "status": self.get_status(),
                "logs": logs, "logFiles": {"logs": str(logs)} if logs else {},
                "properties": {"azureml.runsource": "azureml.StepRun"},
                "inputDatasets": inputs, "outputDatasets": outputs}

    get_details_with_logs = get_details

    def _step_dirs(self) -> list[Path]:
        return [Path(self.parent.logs[self.key]).parent]

    def get_job_log(self) -> str:
        """The step's log (its std_log or the parallel step's job_result.txt)."""
        logs = self.parent.logs.get(self.key)
        if not logs:
            return ""
        layout = StepLogs.of(str(logs))
        for path in (layout.std_log, layout.job_result):
            if path.is_file():
                return path.read_text(encoding="utf-8", errors="replace")
        return ""

    def get_metrics(self, name: str | None = None, **kwargs: Any) -> dict[str, Any]:
        return {}

    def __repr__(self) -> str:
        return f"StepRun(Id: {self.id}, Name: {self.name}, Status: {self.get_status()})"


class PipelineRun(_RunFiles):
    """v1 ``PipelineRun``: the finished local run; other attributes are the
    :class:`mlpipe.sdk.running.RunResult`'s (``status``, ``outputs``, ``reports``, ...).
    ``v1_names`` maps each v2 step name to its v1 name."""

    def __init__(self, result: Any, experiment_name: str | None = None,
                 v1_names: Mapping[str, str] | None = None) -> None:
        self._result = result
        self._v1_names = dict(v1_names or {})
        self.id = result.name
        self.experiment_name = experiment_name

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._result, name)

    def get_status(self) -> str:
        return v1_status(self._result.status)

    def wait_for_completion(self, show_output: bool = True, timeout_seconds: int = sys.maxsize,
                            raise_on_error: bool = True) -> str:
        """The run ended before ``submit`` returned: print its status (and step logs)."""
        status = self.get_status()
        if show_output:
            print(f"PipelineRunId: {self.id}\nPipelineRun Status: {status}")
            for step, logs in self._result.logs.items():
                print(f"  StepRun({self._v1_names.get(step, step)}) logs: {logs}")
            sys.stdout.flush()
        if raise_on_error and status != "Finished":
            raise ActivityFailedException(f"pipeline run {self.id} ended {status}; see the "
                                          f"step logs under {self._result.run_dir}")
        return status

    def find_step_run(self, name: str) -> list[StepRun]:
        """The step runs named ``name`` (a v1 step name; its v2 name works too)."""
        return [StepRun(self, key) for key in self._result.step_outputs
                if self._v1_names.get(key, key) == name or key == v2_name(name)]

    def get_steps(self) -> Iterator[StepRun]:
        """The step runs, the last step first, as a generator (as azureml gives them)."""
        return self.get_children()

    def get_children(self, recursive: bool = False, tags: Any = None, properties: Any = None,
                     type: str | None = None, status: str | None = None,
                     _rehydrate_runs: bool = True) -> Iterator[StepRun]:
        """The step runs, the last step first, as a generator (azureml's
        ``next(pipeline_run.get_children())`` is the last step); ``status`` filters by v1
        status."""
        for key in reversed(list(self._result.step_outputs)):
            run = StepRun(self, key)
            if status is None or run.get_status() == status:
                yield run

    def get_details(self) -> dict[str, Any]:
        return {"runId": self.id, "status": self.get_status(), "target": "local",
                "runDefinition": {"run_dir": self._result.run_dir}}

    def get_metrics(self, name: str | None = None, recursive: bool = False,
                    **kwargs: Any) -> dict[str, Any]:
        return {}

    def get_portal_url(self) -> str:
        return Path(self._result.run_dir).as_uri()

    def _step_dirs(self) -> list[Path]:
        return [Path(logs).parent for logs in self._result.logs.values()]

    def __repr__(self) -> str:
        return (f"Run(Experiment: {self.experiment_name}, Id: {self.id}, "
                f"Type: azureml.PipelineRun, Status: {self.get_status()})")


class RunDetails:
    """``azureml.widgets.RunDetails``: ``show()`` prints where the run's logs are."""

    def __init__(self, run_instance: Any) -> None:
        self.run = run_instance

    def show(self) -> None:
        where = getattr(self.run, "run_dir", None)
        print(f"mlpipe: RunDetails widget not shown (no notebook widgets here); "
              f"run {getattr(self.run, 'id', '')} logs: {where}")


__all__ = ["PUBLISH_HINT", "PipelineRun", "PortDataReference", "RunDetails", "StepRun",
           "StepRunOutput", "v1_status"]
