"""v1 runs: ``Experiment.submit`` returns a :class:`PipelineRun` over the local run's result,
with v1's ``wait_for_completion``, ``find_step_run`` and ``get_output_data(...).download(...)``;
``RunDetails`` (``azureml.widgets``) prints where its logs are.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from mlpipe.sdk.v1.translation import v2_name

_STATUS = {"completed": "Finished", "failed": "Failed", "canceled": "Canceled"}


class ActivityFailedException(RuntimeError):
    """v1's error from ``wait_for_completion`` when the run did not finish."""


class PortDataReference:
    """v1's handle on a step output: ``download(local_path)`` copies it to
    ``<local_path>/<path_on_datastore>``."""

    def __init__(self, name: str, path: str, path_on_datastore: str) -> None:
        self.name = name
        self.path = path
        self.path_on_datastore = path_on_datastore

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


class StepRun:
    """One step of a :class:`PipelineRun`."""

    def __init__(self, parent: PipelineRun, name: str) -> None:
        self.parent = parent
        self.name = v2_name(name)
        self.id = f"{parent.id}_{self.name}"

    def get_status(self) -> str:
        status = self.parent.job_result.steps[self.name].status if self.parent.job_result \
            else self.parent.status
        return _STATUS.get(status, str(status).capitalize())

    def get_output_data(self, name: str) -> PortDataReference:
        outputs = self.parent.step_outputs.get(self.name, {})
        if name not in outputs:
            raise KeyError(f"step {self.name!r} has no output {name!r} "
                           f"(outputs: {', '.join(outputs) or 'none'})")
        return PortDataReference(name, outputs[name], f"azureml/{self.id}/{name}")

    def get_details(self) -> dict[str, Any]:
        return {"runId": self.id, "status": self.get_status(),
                "logs": self.parent.logs.get(self.name)}

    def __repr__(self) -> str:
        return f"StepRun(Id: {self.id}, Status: {self.get_status()})"


class PipelineRun:
    """v1 ``PipelineRun``: the finished local run; other attributes are the
    :class:`mlpipe.sdk.running.RunResult`'s (``status``, ``outputs``, ``reports``, ...)."""

    def __init__(self, result: Any, experiment_name: str | None = None) -> None:
        self._result = result
        self.id = result.name
        self.experiment_name = experiment_name

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._result, name)

    def get_status(self) -> str:
        return _STATUS.get(self._result.status, str(self._result.status).capitalize())

    def wait_for_completion(self, show_output: bool = True, timeout_seconds: int = sys.maxsize,
                            raise_on_error: bool = True) -> str:
        """The run ended before ``submit`` returned: print its status (and step logs)."""
        status = self.get_status()
        if show_output:
            print(f"PipelineRunId: {self.id}\nPipelineRun Status: {status}")
            for step, logs in self._result.logs.items():
                print(f"  StepRun({step}) logs: {logs}")
            sys.stdout.flush()
        if raise_on_error and status != "Finished":
            raise ActivityFailedException(f"pipeline run {self.id} ended {status}; see the "
                                          f"step logs under {self._result.run_dir}")
        return status

    def find_step_run(self, name: str) -> list[StepRun]:
        """The step runs named ``name`` (one, or none)."""
        return [StepRun(self, name)] if v2_name(name) in self._result.step_outputs else []

    def get_steps(self) -> list[StepRun]:
        return [StepRun(self, name) for name in self._result.step_outputs]

    def get_details(self) -> dict[str, Any]:
        return {"runId": self.id, "status": self.get_status(), "target": "local",
                "runDefinition": {"run_dir": self._result.run_dir}}

    def get_portal_url(self) -> str:
        return Path(self._result.run_dir).as_uri()

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


__all__ = ["ActivityFailedException", "PipelineRun", "PortDataReference", "RunDetails", "StepRun"]
