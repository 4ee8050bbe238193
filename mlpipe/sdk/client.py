"""A local ``MLClient``: ``ml_client.jobs.create_or_update(job)`` runs the job on this machine.

It lets azure-ai-ml scripts run unchanged but for their imports. Workspace
arguments and credentials are accepted and kept; nothing leaves the machine.
The operation groups (``jobs``, ``compute``, ``data``, ``models``,
``environments``, ``components``, ``datastores``, ``workspaces``) answer locally; any other
group or call raises :class:`mlpipe.sdk.operations.NotAvailableLocally`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mlpipe.sdk.assets import Model
from mlpipe.sdk.datastores import (
    AzureBlobDatastore,
    AzureDataLakeGen2Datastore,
    DatastoreOperations,
)
from mlpipe.sdk.entities import Environment
from mlpipe.sdk.mldesigner import as_component
from mlpipe.sdk.nodes import Component
from mlpipe.sdk.operations import (
    ComponentOperations,
    ComputeOperations,
    DataOperations,
    EnvironmentOperations,
    JobOperations,
    ModelOperations,
    NotAvailableLocally,
    Unavailable,
    WorkspaceOperations,
)
from mlpipe.sdk.operations.jobs import Poller
from mlpipe.sdk.resources import Compute, Workspace
from mlpipe.sdk.running import Job

LOCAL_WORKSPACE = "local"


class AccessToken(tuple[str, int]):
    """``azure.core.credentials.AccessToken``: ``(token, expires_on)``."""

    @property
    def token(self) -> str:
        return str(self[0])

    @property
    def expires_on(self) -> int:
        return int(self[1])


class DefaultAzureCredential:
    """Stands in for ``azure.identity`` credentials: a local run needs no token, so
    ``get_token`` gives a placeholder that nothing checks."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken(("mlpipe-local", 2**31 - 1))

    def close(self) -> None:
        pass


InteractiveBrowserCredential = DefaultAzureCredential
AzureCliCredential = DefaultAzureCredential
ManagedIdentityCredential = DefaultAzureCredential
ClientSecretCredential = DefaultAzureCredential
ChainedTokenCredential = DefaultAzureCredential


class MLClient:
    """A local stand-in for ``azure.ai.ml.MLClient`` (runs and assets go to ``runs_dir``)."""

    def __init__(self, credential: Any = None, subscription_id: str | None = None,
                 resource_group_name: str | None = None, workspace_name: str | None = None,
                 registry_name: str | None = None, *, runs_dir: str | Path | None = None,
                 **kwargs: Any) -> None:
        self.subscription_id = subscription_id
        self.resource_group_name = resource_group_name
        self.workspace_name = workspace_name or LOCAL_WORKSPACE
        self.runs_dir = runs_dir
        self.jobs = JobOperations(runs_dir)
        self.compute = ComputeOperations(runs_dir)
        self.data = DataOperations(runs_dir)
        self.models = ModelOperations(runs_dir)
        self.environments = EnvironmentOperations(runs_dir)
        self.components = ComponentOperations(runs_dir)
        self.datastores = DatastoreOperations(runs_dir)
        self.workspaces = WorkspaceOperations(
            Workspace(name=self.workspace_name, resource_group=resource_group_name), runs_dir)

    @classmethod
    def from_config(cls, credential: Any = None, *, path: str | Path | None = None,
                    file_name: str | None = None, **kwargs: Any) -> MLClient:
        """A client for the local workspace; a ``config.json`` is read when there is one
        (for its names) and not needed otherwise."""
        config = read_workspace_config(path, file_name)
        return cls(credential, config.get("subscription_id"), config.get("resource_group"),
                   config.get("workspace_name"),
                   **{k: v for k, v in kwargs.items() if k == "runs_dir"})

    def create_or_update(self, entity: Any, **kwargs: Any) -> Any:
        """azure-ai-ml's ``ml_client.create_or_update(entity)``: by the entity's type, a job
        runs (``jobs``), a model, environment or component is registered; any other type is
        refused as azure-ai-ml refuses it (a ``Data`` asset goes through ``ml_client.data``)."""
        entity = as_component(entity)  # a @command_component function is its component
        if isinstance(entity, Job):
            return self.jobs.create_or_update(entity, **kwargs)
        if isinstance(entity, Model):
            return self.models.create_or_update(entity)
        if isinstance(entity, Environment):
            return self.environments.create_or_update(entity)
        if isinstance(entity, Component):
            return self.components.create_or_update(entity, **kwargs)
        kind = type(entity).__name__
        if isinstance(entity, (AzureBlobDatastore, AzureDataLakeGen2Datastore)):
            return self.datastores.create_or_update(entity)
        if kind in ("Datastore", "AzureFileDatastore", "Index"):
            raise NotAvailableLocally(f"ml_client.create_or_update({kind})")
        raise TypeError(f"ml_client.create_or_update() takes a Job, Model, Environment or "
                        f"Component (as azure-ai-ml's), got {kind}"
                        + ("; register data with ml_client.data.create_or_update(data)"
                           if kind == "Data" else ""))

    def begin_create_or_update(self, entity: Any, **kwargs: Any) -> Poller:
        """azure-ai-ml's ``ml_client.begin_create_or_update(entity)``: a compute is recorded
        (``ml_client.compute``), the workspace is the local one; endpoints, deployments,
        schedules and registries need a workspace."""
        if isinstance(entity, Compute):
            return self.compute.begin_create_or_update(entity, **kwargs)
        if isinstance(entity, Workspace):
            return Poller(self.workspaces.get(entity.name))
        raise NotAvailableLocally(f"ml_client.begin_create_or_update({type(entity).__name__})")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return Unavailable(f"ml_client.{name}")

    def __repr__(self) -> str:
        return f"MLClient(workspace_name={self.workspace_name!r}, runs_dir={self.runs_dir!r})"


def read_workspace_config(path: str | Path | None, file_name: str | None) -> dict[str, Any]:
    """The workspace ``config.json`` azure-ai-ml would read (``{}`` when there is none)."""
    import json

    start = Path(path) if path else Path.cwd()
    name = file_name or "config.json"
    candidates = [start] if start.is_file() else [
        folder / sub / name for folder in (start, *start.parents) for sub in ("", ".azureml")]
    for candidate in candidates:
        try:
            data = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        return data if isinstance(data, dict) else {}
    return {}
