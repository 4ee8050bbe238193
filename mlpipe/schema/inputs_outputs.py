"""Inputs and outputs: of pipeline jobs, of steps (nodes) and of components."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, model_validator

from mlpipe.io_types import (
    DATA_TYPES,
    LITERAL_TYPES,
    DataType,
    InputMode,
    LiteralType,
    OutputMode,
)
from mlpipe.schema.fields import (
    CaseInsensitive,
    Number,
    Scalar,
    ScalarOrNull,
    StrictModel,
    Text,
    Version,
    fail,
)
from mlpipe.schema.yamlio import describe_value

OutputType = DataType  # an output is data
InputType = Literal[DataType, LiteralType]
PortType = Literal[OutputType, "path"]  # 'path': azure-ai-ml's legacy port type (any data)
ComponentInputType = Literal[InputType, "path"]


class DataInput(StrictModel):
    """A data input: ``{type: uri_folder, path: ./data, mode: ro_mount}``.

    ``path`` is a local path, a cloud URI (``azureml://``, ``https://``, ...), a data
    asset (``azureml:name:1``) or a binding (``${{parent.jobs.a.outputs.b}}``).
    """

    type: Annotated[DataType | None, CaseInsensitive] = Field(
        None, description="Data type; a step input bound to another output may leave it out.")
    path: Text | None = Field(None, description="Local path, cloud URI, data asset or binding.")
    mode: Annotated[InputMode | None, CaseInsensitive] = Field(
        None, description="How the data reaches the step (ro_mount when unset).")
    description: Text | None = None
    optional: bool | None = None
    datastore: Text | None = Field(None, description="Cloud only: datastore of the path.")
    path_on_compute: Text | None = Field(None, description="Cloud only: mount point on the node.")


class LiteralInput(StrictModel):
    """A literal input written as a mapping: ``{type: integer, default: 3}``."""

    type: Annotated[LiteralType, CaseInsensitive] = Field(description="Literal type.")
    default: ScalarOrNull = Field(None, description="The value used when nothing is bound.")
    value: ScalarOrNull = Field(None, description="The value (same as default here).")
    description: Text | None = None
    optional: bool | None = None
    min: Number | None = Field(None, description="Smallest allowed value.")
    max: Number | None = Field(None, description="Largest allowed value.")
    enum: list[Scalar] | None = Field(None, description="Allowed values.")

    @model_validator(mode="after")
    def _fits_type(self) -> LiteralInput:
        for key in ("default", "value"):
            problem = literal_type_problem(self.type, getattr(self, key))
            if problem:
                raise fail("type", f"{key} {problem}")
        return self


class LiteralValueInput(StrictModel):
    """A literal input written as ``{value: ...}``."""

    value: ScalarOrNull = Field(description="The literal value or a binding.")
    type: Annotated[LiteralType | None, CaseInsensitive] = None
    description: Text | None = None


def _input_tag(value: Any) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, (str, int, float, bool)):
        return "literal"
    if isinstance(value, dict):
        if "value" in value:
            return "value"
        kind = value.get("type")
        if isinstance(kind, str) and kind.lower() in LITERAL_TYPES:
            return "literal_spec"
        return "data"
    if isinstance(value, (DataInput, LiteralInput, LiteralValueInput)):
        return {DataInput: "data", LiteralInput: "literal_spec",
                LiteralValueInput: "value"}[type(value)]
    return None


JobInput = Annotated[
    Annotated[Scalar, Tag("literal")]
    | Annotated[LiteralValueInput, Tag("value")]
    | Annotated[LiteralInput, Tag("literal_spec")]
    | Annotated[DataInput, Tag("data")]
    | Annotated[None, Tag("null")],
    Discriminator(_input_tag, custom_error_type="input_kind",
                  custom_error_message="must be a literal, a binding or an input mapping"),
]
"""A pipeline or step input: literal, binding string, ``{value:}``, literal or data mapping."""


class JobOutput(StrictModel):
    """An output of a pipeline or a step: ``{type: uri_folder, mode: rw_mount, path: ...}``."""

    type: Annotated[OutputType | None, CaseInsensitive] = Field(
        None, description="Output type (uri_folder when unset)."
    )
    path: Text | None = Field(None,
                              description="Where the output goes (local path, datastore URI "
                                          "template, or binding).")
    mode: Annotated[OutputMode | None, CaseInsensitive] = Field(
        None, description="rw_mount, upload, direct; 'mount' is a legacy alias of rw_mount."
    )
    name: Text | None = Field(None, description="Cloud only: register the output as this asset.")
    version: Version | None = Field(None,
                                    description="Cloud only: version of the registered asset.")
    description: Text | None = None
    datastore: Text | None = None
    is_control: bool | None = None
    early_available: bool | None = None


def _output_tag(value: Any) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, str):
        return "binding"
    if isinstance(value, (dict, JobOutput)):
        return "output"
    return None


StepOutput = Annotated[
    Annotated[Text, Tag("binding")]
    | Annotated[JobOutput, Tag("output")]
    | Annotated[None, Tag("null")],
    Discriminator(_output_tag, custom_error_type="output_kind",
                  custom_error_message="must be a binding such as ${{parent.outputs.x}}, an output "
                                       "mapping, or empty"),
]
"""A step output: a binding to a pipeline output, an output mapping, or null (defaults)."""


class IntellectualProperty(StrictModel):
    """``intellectual_property`` of a component published to a registry (azure-ai-ml's IP
    protection: who publishes it and what its consumers may see)."""

    publisher: Text | None = None
    protection_level: Annotated[str, CaseInsensitive] | None = Field(
        None, description="all or none")

    @model_validator(mode="after")
    def _level(self) -> IntellectualProperty:
        if self.protection_level is not None and self.protection_level not in ("all", "none"):
            raise fail("protection_level", "must be one of all, none, got "
                       f"'{self.protection_level}'")
        return self


class ComponentInput(StrictModel):
    """An input a component declares."""

    type: Annotated[ComponentInputType, CaseInsensitive] = Field(
        description="Data type (uri_folder, mltable, ...; legacy: path) or literal type (string, "
                    "integer, ...)."
    )
    description: Text | None = None
    optional: bool | None = Field(None, description="May the input be left unset? (false)")
    default: ScalarOrNull = Field(None, description="Value used when nothing is bound.")
    min: Number | None = Field(None, description="Smallest allowed value.")
    max: Number | None = Field(None, description="Largest allowed value.")
    enum: list[Scalar] | None = Field(None, description="Allowed values.")
    mode: Annotated[InputMode | None, CaseInsensitive] = None
    path: Text | None = Field(None, description="Default data path.")
    datastore: Text | None = None

    @model_validator(mode="after")
    def _fits_type(self) -> ComponentInput:
        literal = self.type in LITERAL_TYPES
        if not literal:
            for key in ("min", "max", "enum"):
                if getattr(self, key) is not None:
                    raise fail("type",
                               f"'{key}' applies only to literal inputs (string, integer, number, "
                               f"boolean), not {self.type}")
        if self.default is not None and literal and not self._boolean_choice():
            problem = literal_type_problem(self.type, self.default)
            if problem:
                raise fail("type", f"default {problem}")
        return self

    def _boolean_choice(self) -> bool:
        """A string input with an enum of 'True'/'False' and an unquoted ``default: True``:
        azure-ai-ml reads the default as the enum's text (a published component does this)."""
        return (self.type == "string" and isinstance(self.default, bool)
                and str(self.default) in [str(e) for e in self.enum or []])


class ComponentOutput(StrictModel):
    """An output a component declares (data: azure-ai-ml's ``OutputPortSchema``)."""

    type: Annotated[PortType, CaseInsensitive] = Field(
        description="Output data type (legacy: path).")
    description: Text | None = None
    mode: Annotated[OutputMode | None, CaseInsensitive] = None
    path: Text | None = None
    is_control: bool | None = None
    early_available: bool | None = None


class CommandComponentOutput(ComponentOutput):
    """An output a command component declares: data, or a primitive (``string``,
    ``integer``, ``number``, ``boolean``: a value the step writes, which later steps' inputs
    read). Only command components have primitive outputs in azure-ai-ml
    (``PrimitiveOutputSchema``); parallel and pipeline components' are data."""

    type: Annotated[Literal[PortType, LiteralType], CaseInsensitive] = Field(  # type: ignore[assignment]
        description="Output data type (legacy: path), or a primitive type.")


def literal_type_problem(type_name: str, value: Any) -> str | None:
    """Why ``value`` does not fit the literal type ``type_name`` (``None`` when it fits).

    Bindings always fit (they are checked once resolved); ``integer`` accepts 3 and
    3.0 but not 3.5; ``number`` accepts ints; ``boolean`` only true/false.
    """
    from mlpipe.schema.bindings import is_binding

    if is_binding(value) or value is None:
        return None
    if type_name == "string":
        return None if isinstance(value, str) else f"must be a string, got {describe_value(value)}"
    if type_name == "boolean":
        if isinstance(value, bool) or (isinstance(value, str)
                                       and value.lower() in ("true", "false")):
            return None
        return f"must be true or false, got {describe_value(value)}"
    if type_name == "integer":
        if isinstance(value, bool):
            return f"must be an integer, got {describe_value(value)}"
        if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
            return None
        if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
            return None
        return f"must be an integer, got {describe_value(value)}"
    if type_name == "number":
        if isinstance(value, bool):
            return f"must be a number, got {describe_value(value)}"
        if isinstance(value, (int, float)):
            return None
        try:
            float(value)
        except (TypeError, ValueError):
            return f"must be a number, got {describe_value(value)}"
        return None
    return None


__all__ = [
    "DataInput",
    "LiteralInput",
    "LiteralValueInput",
    "JobInput",
    "JobOutput",
    "StepOutput",
    "ComponentInput",
    "CommandComponentOutput",
    "ComponentOutput",
    "literal_type_problem",
    "DATA_TYPES",
    "LITERAL_TYPES",
]
