"""``type: command``: command components and command steps."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag

from mlpipe.schema.environment import Environment, Identity, Resources
from mlpipe.schema.fields import Identifier, Scalar, StrictModel, Text, Version
from mlpipe.schema.inputs_outputs import ComponentInput, ComponentOutput, JobInput, StepOutput


class CommandLimits(StrictModel):
    """``limits:`` of a command step."""

    timeout: Annotated[int | None, Field(ge=1, description="Seconds the command may run.")] = None


class CommandComponent(StrictModel):
    """A command component file (``type: command``)."""

    schema_: Text | None = Field(None, alias="$schema", description="JSON Schema URL (ignored).")
    type: Literal["command"] = Field(description="Always 'command'.")
    name: Text | None = None
    version: Version | None = None
    display_name: Text | None = None
    description: Text | None = None
    tags: dict[str, Scalar | None] | None = None
    is_deterministic: bool | None = None
    inputs: dict[Identifier, ComponentInput] | None = None
    outputs: dict[Identifier, ComponentOutput] | None = None
    command: Text | None = Field(
        None, description="Shell command run in the code folder; may bind ${{inputs.x}}/${{outputs.y}}.")
    code: Text | None = Field(None, description="Local code folder (or azureml: code asset).")
    environment: Environment | None = None
    environment_variables: dict[str, Text] | None = None
    resources: Resources | None = None
    distribution: dict[str, Any] | None = Field(None, description="Cloud only: distributed training.")
    additional_includes: list[Text] | None = None


def _component_tag(value: Any) -> str | None:
    if isinstance(value, str):
        return "reference"
    if isinstance(value, (dict, CommandComponent)):
        return "inline"
    return None


CommandComponentRef = Annotated[
    Union[Annotated[Text, Tag("reference")], Annotated[CommandComponent, Tag("inline")]],
    Discriminator(_component_tag, custom_error_type="component_kind",
                  custom_error_message="must be a component file path, an azureml: reference "
                                       "or an inline component mapping"),
]


class CommandNode(StrictModel):
    """A ``type: command`` step: inline ``command:`` + ``code`` + ``environment``, or ``component:``."""

    type: Literal["command"]
    component: CommandComponentRef | None = Field(
        None, description="./file.yml, file:./file.yml, azureml:name:version, "
                          "azureml://registries/..., or an inline component.")
    command: Text | None = None
    code: Text | None = None
    environment: Environment | None = None
    name: Text | None = None
    display_name: Text | None = None
    description: Text | None = None
    tags: dict[str, Scalar | None] | None = None
    properties: dict[str, Any] | None = None
    experiment_name: Text | None = None
    compute: Text | None = None
    inputs: dict[Identifier, JobInput] | None = None
    outputs: dict[Identifier, StepOutput] | None = None
    environment_variables: dict[str, Text] | None = None
    resources: Resources | None = None
    limits: CommandLimits | None = None
    distribution: dict[str, Any] | None = Field(None, description="Cloud only: distributed training.")
    identity: Identity | None = None
    services: dict[str, Any] | None = Field(None, description="Cloud only: interactive services.")
    queue_settings: dict[str, Any] | None = Field(None, description="Cloud only: job tier/priority.")
    is_deterministic: bool | None = None


__all__ = ["CommandComponent", "CommandNode", "CommandLimits"]
