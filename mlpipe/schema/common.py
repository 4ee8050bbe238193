"""Keys every component shares, keys every step shares, and the ``component:`` union."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Discriminator, Field

from mlpipe.schema.fields import Identifier, InputName, Scalar, StrictModel, Text, Version
from mlpipe.schema.inputs_outputs import (
    ComponentInput,
    ComponentOutput,
    IntellectualProperty,
    JobInput,
    StepOutput,
)


class ComponentBase(StrictModel):
    """Metadata and interface of a component file."""

    schema_: Text | None = Field(None, alias="$schema", description="JSON Schema URL (ignored).")
    name: Text | None = None
    version: Version | None = None
    display_name: Text | None = None
    description: Text | None = None
    tags: dict[str, Scalar | None] | None = None
    is_deterministic: bool | None = Field(None, description="May Azure reuse earlier results?")
    compute: Text | None = Field(None, description="Not used: a component runs on its step's "
                                 "compute (azure-ai-ml keeps the key, the service ignores it).")
    inputs: dict[InputName, ComponentInput] | None = Field(
        None, description="Declared inputs, bound in the component as ${{inputs.<name>}}.")
    outputs: dict[Identifier, ComponentOutput] | None = Field(
        None, description="Declared outputs, bound in the component as ${{outputs.<name>}}.")
    intellectual_property: IntellectualProperty | None = Field(
        None, description="Registry IP protection (publisher, protection_level: all|none).")


class NodeBase(StrictModel):
    """Keys of a pipeline step besides its type-specific settings."""

    name: Text | None = None
    display_name: Text | None = None
    description: Text | None = None
    tags: dict[str, Scalar | None] | None = None
    properties: dict[str, Any] | None = None
    experiment_name: Text | None = None
    compute: Text | None = Field(None, description="Compute target (ignored locally).")
    inputs: dict[InputName, JobInput] | None = Field(
        None, description="Step inputs: literals, bindings or data mappings.")
    outputs: dict[Identifier, StepOutput] | None = Field(
        None, description="Step outputs: a binding to a pipeline output, a mapping, or empty.")
    is_deterministic: bool | None = None
    comment: Text | None = None


COMPONENT_DESCRIPTION = ("./file.yml, file:./file.yml, azureml:name:version, azureml:name@latest, "
                         "azureml://registries/..., or an inline component mapping.")


def component_kind(component: type[BaseModel]) -> Discriminator:
    """Tells a ``component:`` reference string from an inline ``component`` mapping.

    Used as ``Annotated[Union[Annotated[Text, Tag("reference")],
    Annotated[<Component>, Tag("inline")]], component_kind(<Component>)]``.
    """

    def tag(value: Any) -> str | None:
        if isinstance(value, str):
            return "reference"
        if isinstance(value, (dict, component)):
            return "inline"
        return None

    return Discriminator(tag, custom_error_type="component_kind",
                         custom_error_message="must be a component file path, an azureml: "
                                              "reference or an inline component mapping")
