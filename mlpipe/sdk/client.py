"""A local ``MLClient``: ``ml_client.jobs.create_or_update(job)`` runs the job on this machine.

It lets azure-ai-ml scripts run unchanged but for their imports. Workspace
arguments and credentials are accepted and ignored; nothing leaves the machine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mlpipe.sdk.job import PipelineJob
from mlpipe.sdk.nodes import Component


class DefaultAzureCredential:
    """Stands in for ``azure.identity.DefaultAzureCredential``; holds nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        raise RuntimeError("mlpipe runs locally: no Azure token is available or needed")


InteractiveBrowserCredential = DefaultAzureCredential


class JobOperations:
    """``ml_client.jobs``: validate and run pipeline jobs locally."""

    def __init__(self, client: MLClient) -> None:
        self._client = client
        self._results: dict[str, Any] = {}

    def create_or_update(self, job: PipelineJob, *, experiment_name: str | None = None,
                         **kwargs: Any) -> Any:
        """Run ``job`` now (with :func:`mlpipe.run`) and return its result."""
        from mlpipe.sdk.running import run

        if experiment_name and isinstance(job, PipelineJob) and not job.experiment_name:
            job.experiment_name = experiment_name
        result = run(job, runs_dir=self._client.runs_dir, **kwargs)
        self._results[result.name] = result
        return result

    def validate(self, job: PipelineJob, **kwargs: Any) -> Any:
        """Raise :class:`mlpipe.ValidationError` for an invalid job; return the warnings."""
        return job.validate()

    def get(self, name: str) -> Any:
        return self._results[name]

    def stream(self, name: str) -> None:
        """The run already finished when ``create_or_update`` returned: nothing to wait for."""


class ComponentOperations:
    """``ml_client.components``: components stay local files."""

    def create_or_update(self, component: Component, **kwargs: Any) -> Component:
        return component


class MLClient:
    """A local stand-in for ``azure.ai.ml.MLClient`` (runs go to ``runs_dir``)."""

    def __init__(self, credential: Any = None, subscription_id: str | None = None,
                 resource_group_name: str | None = None, workspace_name: str | None = None,
                 *, runs_dir: str | Path | None = None, **kwargs: Any) -> None:
        self.subscription_id = subscription_id
        self.resource_group_name = resource_group_name
        self.workspace_name = workspace_name
        self.runs_dir = runs_dir
        self.jobs = JobOperations(self)
        self.components = ComponentOperations()

    @classmethod
    def from_config(cls, credential: Any = None, *args: Any, **kwargs: Any) -> MLClient:
        return cls(credential, **{k: v for k, v in kwargs.items() if k == "runs_dir"})
