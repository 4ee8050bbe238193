"""Job identity, distribution and interactive-service settings of azure-ai-ml: recorded in
the job YAML for the cloud (a local step runs as the current user, in one process per
worker, with no JupyterLab, VS Code, TensorBoard or SSH endpoint)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mlpipe.sdk.tracking import Record


class _Typed(Record):
    """A settings mapping with a fixed ``type``."""

    _type = ""

    def _begin(self, kwargs: dict[str, Any]) -> None:
        self.type = kwargs.pop("type", self._type)


class UserIdentityConfiguration(_Typed):
    """``identity: {type: user_identity}``."""

    _keys = ("type",)
    _type = "user_identity"

    def __init__(self, **kwargs: Any) -> None:
        self._begin(kwargs)
        self._finish(kwargs)


class AmlTokenConfiguration(UserIdentityConfiguration):
    """``identity: {type: aml_token}``."""

    _type = "aml_token"


class ManagedIdentityConfiguration(_Typed):
    """``identity: {type: managed_identity, client_id, object_id, resource_id}``."""

    _keys = ("type", "client_id", "object_id", "resource_id")
    _type = "managed_identity"

    def __init__(self, *, client_id: str | None = None, resource_id: str | None = None,
                 object_id: str | None = None, principal_id: str | None = None,
                 **kwargs: Any) -> None:
        self._begin(kwargs)
        self.client_id = client_id
        self.object_id = object_id
        self.resource_id = resource_id
        self.principal_id = principal_id
        self._finish(kwargs)


class MpiDistribution(_Typed):
    """``distribution: {type: mpi, process_count_per_instance}``."""

    _keys = ("type", "process_count_per_instance")
    _type = "mpi"

    def __init__(self, *, process_count_per_instance: int | None = None, **kwargs: Any) -> None:
        self._begin(kwargs)
        self.process_count_per_instance = process_count_per_instance
        self._finish(kwargs)


class PyTorchDistribution(MpiDistribution):
    """``distribution: {type: pytorch, process_count_per_instance}``."""

    _type = "pytorch"


class RayDistribution(_Typed):
    """``distribution: {type: ray, ...}``."""

    _keys = ("type", "port", "address", "include_dashboard", "dashboard_port",
             "head_node_additional_args", "worker_node_additional_args")
    _type = "ray"

    def __init__(self, *, port: int | None = None, address: str | None = None,
                 include_dashboard: bool | None = None, dashboard_port: int | None = None,
                 head_node_additional_args: str | None = None,
                 worker_node_additional_args: str | None = None, **kwargs: Any) -> None:
        self._begin(kwargs)
        self.port = port
        self.address = address
        self.include_dashboard = include_dashboard
        self.dashboard_port = dashboard_port
        self.head_node_additional_args = head_node_additional_args
        self.worker_node_additional_args = worker_node_additional_args
        self._finish(kwargs)


class TensorFlowDistribution(_Typed):
    """``distribution: {type: tensorflow, parameter_server_count, worker_count}``."""

    _keys = ("type", "parameter_server_count", "worker_count")
    _type = "tensorflow"

    def __init__(self, *, parameter_server_count: int | None = 0,
                 worker_count: int | None = None, **kwargs: Any) -> None:
        self._begin(kwargs)
        self.parameter_server_count = parameter_server_count
        self.worker_count = worker_count
        self._finish(kwargs)


def distribution_of(value: Any) -> Any:
    """A ``distribution=`` mapping as its object (``{"type": "tensorflow", ...}`` ->
    :class:`TensorFlowDistribution`), as azure-ai-ml converts it on a node; anything else,
    or a mapping of an unknown type, is left for the schema to judge."""
    kinds: dict[str, type[_Typed]] = {"mpi": MpiDistribution, "pytorch": PyTorchDistribution,
                                      "ray": RayDistribution,
                                      "tensorflow": TensorFlowDistribution}
    if isinstance(value, Mapping) and str(value.get("type", "")).lower() in kinds:
        fields = {k: v for k, v in value.items() if k != "type"}
        return kinds[str(value["type"]).lower()](**fields)
    return value


__all__ = ["AmlTokenConfiguration", "ManagedIdentityConfiguration", "MpiDistribution",
           "PyTorchDistribution", "RayDistribution", "TensorFlowDistribution",
           "UserIdentityConfiguration", "distribution_of"]


class JobService(_Typed):
    """``services: {<name>: {type: jupyter_lab | vs_code | tensor_board | ssh, ...}}`` of a
    command step (recorded: a local step opens no endpoint)."""

    _keys = ("type", "nodes", "port", "endpoint", "status", "properties", "log_dir",
             "ssh_public_keys")

    def __init__(self, *, endpoint: str | None = None, type: str | None = None,
                 nodes: str | None = None, status: str | None = None, port: int | None = None,
                 properties: dict[str, str] | None = None, **kwargs: Any) -> None:
        self.type = type or self._type or None
        self.endpoint = endpoint
        self.nodes = nodes
        self.status = status
        self.port = port
        self.properties = properties
        self.log_dir = kwargs.pop("log_dir", None)
        self.ssh_public_keys = kwargs.pop("ssh_public_keys", None)
        self._finish(kwargs)


class JupyterLabJobService(JobService):
    """``{type: jupyter_lab}``."""

    _type = "jupyter_lab"


class VsCodeJobService(JobService):
    """``{type: vs_code}``."""

    _type = "vs_code"


class TensorBoardJobService(JobService):
    """``{type: tensor_board, log_dir}``."""

    _type = "tensor_board"


class SshJobService(JobService):
    """``{type: ssh, ssh_public_keys}``."""

    _type = "ssh"

