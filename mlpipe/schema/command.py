"""``type: command``: command components and command steps."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, Tag

from mlpipe.schema.common import COMPONENT_DESCRIPTION, ComponentBase, NodeBase, component_kind
from mlpipe.schema.environment import Environment, Resources
from mlpipe.schema.fields import StrictModel, Text


class CommandLimits(StrictModel):
    """``limits:`` of a command step."""

    timeout: Annotated[int | None, Field(ge=1, description="Seconds the command may run.")] = None


class CommandComponent(ComponentBase):
    """A command component file (``type: command``)."""

    type: Literal["command"] = Field(description="Always 'command'.")
    command: Text | None = Field(
        None,
        description="Shell command run in the code folder; may bind ${{inputs.x}}/${{outputs.y}}.",
    )
    code: Text | None = Field(None, description="Local code folder (or azureml: code asset).")
    environment: Environment | None = None
    environment_variables: dict[str, Text] | None = Field(
        None, description="Not applied: azure-ai-ml drops a component's environment_variables "
        "(set them on the step).")
    resources: Resources | None = None
    distribution: dict[str, Any] | None = Field(None,
                                                description="Cloud only: distributed training.")
    additional_includes: list[Text] | None = None


class CommandNode(NodeBase):
    """A ``type: command`` step: inline ``command``/``code``/``environment``, or ``component``."""

    type: Literal["command"]
    component: (Annotated[Annotated[Text, Tag("reference")] | Annotated[CommandComponent,
                                                                        Tag("inline")],
                          component_kind(CommandComponent)] | None) = Field(None,
                                                                            description=COMPONENT_DESCRIPTION)
    command: Text | None = None
    code: Text | None = None
    environment: Environment | None = None
    resources: Resources | None = None
    limits: CommandLimits | None = None
    distribution: dict[str, Any] | None = Field(None,
                                                description="Cloud only: distributed training.")
    queue_settings: dict[str, Any] | None = Field(None,
                                                  description="Cloud only: job tier/priority.")
