"""Where and how a step runs in the cloud: resources, identity, queue settings, distribution,
services and a command's limits, as azure-ai-ml declares them (``job_resource_configuration``,
``job/identity``, ``queue_settings``, ``job/distribution``, ``job/services``,
``job/job_limits``). A local run uses none of them but ``resources.instance_count`` of a
parallel step; the models make sure they are well formed, with azure-ai-ml's ranges and enums.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, Tag

from mlpipe.schema.fields import (
    Bool,
    InstanceCount,
    Int,
    StrictModel,
    Text,
    chosen_by,
    int_in,
    one_of,
)

DISTRIBUTION_TYPES = ("pytorch", "mpi", "tensorflow", "ray")
IDENTITY_TYPES = ("managed", "aml_token", "user_identity")
SERVICE_TYPES = ("jupyter_lab", "ssh", "tensor_board", "vs_code")


class Resources(StrictModel):
    """``resources:`` of a step. Only ``instance_count`` has a local meaning (parallel steps)."""

    instance_count: InstanceCount | None = Field(
        None, description="Number of nodes; locally: number of simulated nodes. [1, int.max]"
    )
    instance_type: Text | None = Field(None, description="Cloud only: VM size.")
    shm_size: Text | None = Field(None, description="Cloud only: Docker shared memory size.")
    docker_args: Text | list[Text] | None = Field(
        None, description="Cloud only: extra docker run arguments.")
    max_instance_count: InstanceCount | None = Field(None, description="Cloud only: elastic limit.")
    locations: list[Text] | None = Field(None, description="Cloud only: regions.")
    properties: dict[str, Any] | None = Field(None, description="Cloud only: extra properties.")


class ManagedIdentity(StrictModel):
    """``identity: {type: managed, client_id, object_id, msi_resource_id}``."""

    type: Annotated[str, one_of("managed", "managed_identity", snake=True, bindable=False)]
    client_id: Text | None = None
    object_id: Text | None = None
    msi_resource_id: Text | None = None
    resource_id: Text | None = None


class AmlTokenIdentity(StrictModel):
    """``identity: {type: aml_token}``."""

    type: Annotated[str, one_of("aml_token", snake=True, bindable=False)]


class UserIdentity(StrictModel):
    """``identity: {type: user_identity}``."""

    type: Annotated[str, one_of("user_identity", snake=True, bindable=False)]


Identity = Annotated[
    Annotated[ManagedIdentity, Tag("managed")]
    | Annotated[AmlTokenIdentity, Tag("aml_token")]
    | Annotated[UserIdentity, Tag("user_identity")],
    chosen_by(IDENTITY_TYPES, snake=True, aliases={"managed_identity": "managed"},
              what="identity"),
]
"""``identity:`` of a job or step (cloud only): managed, aml_token or user_identity."""


class QueueSettings(StrictModel):
    """``queue_settings:`` (cloud only): the job tier and priority."""

    job_tier: Annotated[str, one_of("spot", "basic", "standard", "premium", "null",
                                    bindable=False)] | None = None
    priority: Annotated[str, one_of("low", "medium", "high", bindable=False)] | None = None


class PyTorchDistribution(StrictModel):
    """``distribution: {type: pytorch, process_count_per_instance}``."""

    type: Annotated[str, one_of("pytorch")]
    process_count_per_instance: Int | None = None


class MpiDistribution(StrictModel):
    """``distribution: {type: mpi, process_count_per_instance}``."""

    type: Annotated[str, one_of("mpi")]
    process_count_per_instance: Int | None = None


class TensorFlowDistribution(StrictModel):
    """``distribution: {type: tensorflow, parameter_server_count, worker_count}``."""

    type: Annotated[str, one_of("tensorflow")]
    parameter_server_count: Int | None = None
    worker_count: Int | None = None


class RayDistribution(StrictModel):
    """``distribution: {type: ray, ...}`` (experimental in azure-ai-ml)."""

    type: Annotated[str, one_of("ray")]
    port: Int | None = None
    address: Text | None = None
    include_dashboard: Bool | None = None
    dashboard_port: Int | None = None
    head_node_additional_args: Text | None = None
    worker_node_additional_args: Text | None = None


Distribution = Annotated[
    Annotated[PyTorchDistribution, Tag("pytorch")]
    | Annotated[MpiDistribution, Tag("mpi")]
    | Annotated[TensorFlowDistribution, Tag("tensorflow")]
    | Annotated[RayDistribution, Tag("ray")],
    chosen_by(DISTRIBUTION_TYPES, what="distribution"),
]
"""``distribution:`` of a command (cloud only: distributed training)."""


class JobService(StrictModel):
    """One entry of ``services:`` (cloud only: interactive access to a running job)."""

    type: Annotated[str, one_of(*SERVICE_TYPES, bindable=False)] | None = None
    port: Int | None = None
    nodes: Annotated[str, one_of("all", bindable=False)] | None = None
    properties: dict[str, Any] | None = None
    log_dir: Text | None = Field(None, description="tensor_board only.")
    ssh_public_keys: Text | None = Field(None, description="ssh only.")


class CommandLimits(StrictModel):
    """``limits:`` of a command step."""

    timeout: Annotated[int | str, int_in(1)] | None = Field(
        None, description="Seconds the command may run.")


__all__ = ["AmlTokenIdentity", "CommandLimits", "Distribution", "Identity", "JobService",
           "ManagedIdentity", "MpiDistribution", "PyTorchDistribution", "QueueSettings",
           "RayDistribution", "Resources", "TensorFlowDistribution", "UserIdentity"]
