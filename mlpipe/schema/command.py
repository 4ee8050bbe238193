"""``type: command``: command components and command steps (azure-ai-ml's
``CommandComponentSchema``, ``CommandSchema`` and ``PipelineCommandJobSchema``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, Tag

from mlpipe.schema.common import COMPONENT_DESCRIPTION, ComponentBase, NodeBase, component_kind
from mlpipe.schema.compute import (
    CommandLimits,
    Distribution,
    Identity,
    JobService,
    QueueSettings,
    Resources,
)
from mlpipe.schema.environment import Environment
from mlpipe.schema.fields import CaseInsensitive, Identifier, StrictModel, Text
from mlpipe.schema.inputs_outputs import CommandComponentOutput


class CommandSettings(StrictModel):
    """The keys a command component and a command step share."""

    command: Text | None = Field(
        None,
        description="Shell command run in the code folder; may bind ${{inputs.x}}/${{outputs.y}}.",
    )
    code: Text | None = Field(None, description="Local code folder (or azureml: code asset).")
    environment: Environment | None = None
    environment_variables: dict[str, Text] | None = Field(
        None, description="Environment variables of the command's process (on a component: "
        "not applied, azure-ai-ml drops them; set them on the step).")
    resources: Resources | None = None
    distribution: Distribution | None = Field(
        None, description="Cloud only: distributed training (pytorch, mpi, tensorflow, ray).")
    queue_settings: QueueSettings | None = Field(None, description="Cloud only: job tier/priority.")


class CommandComponent(ComponentBase, CommandSettings):
    """A command component file (``type: command``)."""

    type: Annotated[Literal["command"], CaseInsensitive] = Field(
        "command", description="'command' (the default of a component without 'type').")
    outputs: dict[Identifier, CommandComponentOutput] | None = Field(  # type: ignore[assignment]
        None, description="Declared outputs, bound in the command as ${{outputs.<name>}}; "
        "data, or a primitive value the step writes.")
    additional_includes: list[Text] | None = None
    properties: dict[str, Any] | None = None


class CommandNode(NodeBase, CommandSettings):
    """A ``type: command`` step: inline ``command``/``code``/``environment``, or ``component``."""

    type: Annotated[Literal["command"], CaseInsensitive] = Field(
        "command", description="'command' (the default of a step without 'type').")
    component: (Annotated[Annotated[Text, Tag("reference")]
                          | Annotated[CommandComponent, Tag("inline")],
                          component_kind(CommandComponent)] | None) = Field(
        None, description=COMPONENT_DESCRIPTION)
    limits: CommandLimits | None = None
    identity: Identity | None = None
    services: dict[str, JobService] | None = Field(
        None, description="Cloud only: interactive services (jupyter_lab, ssh, ...).")
