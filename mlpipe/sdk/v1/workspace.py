"""v1 ``Workspace``, ``ComputeTarget`` / ``AmlCompute`` and the authentication classes,
answered locally: the workspace needs no ``config.json``, every compute is this machine."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import Any

from mlpipe.cores import core_count
from mlpipe.sdk.client import read_workspace_config
from mlpipe.sdk.v1.datastores import DEFAULT_DATASTORE, Datastore

VERSION = "1.0.0+mlpipe.local"
LOCAL = "local"


class _ComputeTargets(Mapping[str, "AmlCompute"]):
    """``ws.compute_targets``: every name is this machine (so ``name in ...`` holds)."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def __getitem__(self, name: str) -> AmlCompute:
        return self._workspace._computes.get(name) or AmlCompute(self._workspace, name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str)

    def __iter__(self) -> Iterator[str]:
        return iter(self._workspace._computes or [LOCAL])

    def __len__(self) -> int:
        return max(1, len(self._workspace._computes))


class Workspace:
    """v1 ``Workspace``: the local stand-in (``from_config`` needs no ``config.json``)."""

    def __init__(self, subscription_id: str | None = None, resource_group: str | None = None,
                 workspace_name: str | None = None, auth: Any = None, **kwargs: Any) -> None:
        self.subscription_id = subscription_id or LOCAL
        self.resource_group = resource_group or LOCAL
        self.name = workspace_name or LOCAL
        self.location = kwargs.get("location") or LOCAL
        self._computes: dict[str, AmlCompute] = {}

    @classmethod
    def from_config(cls, path: str | None = None, auth: Any = None, _logger: Any = None,
                    _file_name: str | None = None) -> Workspace:
        config = read_workspace_config(path, _file_name)
        return cls(config.get("subscription_id"), config.get("resource_group"),
                   config.get("workspace_name"))

    get = classmethod(lambda cls, name=None, **kwargs: cls(workspace_name=name, **kwargs))

    @property
    def compute_targets(self) -> Mapping[str, AmlCompute]:
        return _ComputeTargets(self)

    @property
    def datastores(self) -> dict[str, Datastore]:
        return {DEFAULT_DATASTORE: Datastore(self, DEFAULT_DATASTORE)}

    def get_default_datastore(self) -> Datastore:
        return Datastore(self, DEFAULT_DATASTORE)

    def get_details(self) -> dict[str, Any]:
        return {"name": self.name, "location": self.location, "resourceGroup":
                self.resource_group, "subscriptionId": self.subscription_id}

    def write_config(self, path: str | None = None, file_name: str | None = None) -> None:
        """Nothing to write: the local workspace needs no config."""

    def __repr__(self) -> str:
        return f"Workspace.create(name='{self.name}', subscription_id='{self.subscription_id}', " \
               f"resource_group='{self.resource_group}')"


class _Status:
    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def serialize(self) -> dict[str, Any]:
        return dict(self._data)


class ComputeTarget:
    """v1 ``ComputeTarget``: ``create`` notes the request; steps run on this machine."""

    def __init__(self, workspace: Any = None, name: str = LOCAL, **kwargs: Any) -> None:
        self.workspace = workspace
        self.name = name
        self.type = "AmlCompute"
        self.provisioning_state = "Succeeded"
        self.provisioning_configuration_ = kwargs.get("provisioning_configuration")

    @staticmethod
    def create(workspace: Any, name: str, provisioning_configuration: Any) -> AmlCompute:
        print(f"mlpipe: compute {name!r} is recorded only; steps run on this machine",
              file=sys.stderr)
        compute = AmlCompute(workspace, name, provisioning_configuration=provisioning_configuration)
        if isinstance(workspace, Workspace):
            workspace._computes[name] = compute
        return compute

    def wait_for_completion(self, show_output: bool = False, min_node_count: int | None = None,
                            timeout_in_minutes: int = 20, is_delete_operation: bool = False
                            ) -> None:
        if show_output:
            print(f"{self.name}: Succeeded (this machine)")

    def get_status(self) -> _Status:
        return _Status({"name": self.name, "provisioningState": self.provisioning_state,
                        "currentNodeCount": 1, "vmSize": "local",
                        "cores": core_count()})

    def delete(self) -> None:
        """Nothing to delete locally."""

    def __repr__(self) -> str:
        return f"AmlCompute(workspace={self.workspace!r}, name={self.name}, " \
               "provisioning_state=Succeeded, location=local, tags={})"


class AmlCompute(ComputeTarget):
    """v1 ``AmlCompute``: a cluster is this machine."""

    @staticmethod
    def provisioning_configuration(**kwargs: Any) -> dict[str, Any]:
        return dict(kwargs)


class InteractiveLoginAuthentication:
    """v1 authentication objects: a local run needs none."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass


ServicePrincipalAuthentication = InteractiveLoginAuthentication
MsiAuthentication = InteractiveLoginAuthentication

__all__ = ["VERSION", "AmlCompute", "ComputeTarget", "InteractiveLoginAuthentication",
           "MsiAuthentication", "ServicePrincipalAuthentication", "Workspace"]
