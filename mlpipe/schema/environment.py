"""Environments. A local run never builds an environment; these models only make sure the
YAML is well formed."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Discriminator, Field, PlainValidator, Tag, WithJsonSchema

from mlpipe.schema.fields import (
    PathOrMapping,
    Scalar,
    StrictModel,
    Text,
    Version,
    fail,
)
from mlpipe.schema.yamlio import describe_value

ASSET_REFERENCE = re.compile(r"^azureml:\S+$")
# azure-ai-ml's EnvironmentField also reads a local environment YAML: ``file:./env.yml``
ENVIRONMENT_REFERENCE = re.compile(r"^(azureml|file):\S+$")


def _validate_reference(value: Any) -> str:
    if not isinstance(value, str):
        raise fail("type",
                   f"must be an environment reference or mapping, got {describe_value(value)}")
    if not ENVIRONMENT_REFERENCE.match(value):
        local = value.lower().endswith((".yml", ".yaml"))
        raise fail("pattern",
                   "must be 'azureml:<name>:<version>', 'azureml:<name>@latest', "
                   f"'azureml://registries/...' or 'file:<environment YAML>', got {value!r}",
                   hint=None if " " in value else
                   f"write 'file:{value}'" if local else f"write 'azureml:{value}'")
    return value


EnvironmentReference = Annotated[str, PlainValidator(_validate_reference),
                                 WithJsonSchema({"type": "string",
                                                 "pattern": ENVIRONMENT_REFERENCE.pattern,
                                                 "description": "azureml:<name>:<version>, "
                                                                "azureml:<name>@latest, "
                                                                "azureml://registries/... or "
                                                                "file:<environment YAML>"})]


class DockerBuild(StrictModel):
    """``build:`` of an inline environment (a Docker build context)."""

    path: Text = Field(description="Build context folder.")
    dockerfile_path: Text | None = None


class InlineEnvironment(StrictModel):
    """An inline environment: image + conda file (path or inline dict), or a build context."""

    name: Text | None = None
    version: Version | None = None
    description: Text | None = None
    image: Text | None = Field(None, description="Docker image (not pulled locally).")
    conda_file: PathOrMapping | None = Field(
        None, description="Path of a conda YAML, or the conda specification inline."
    )
    build: DockerBuild | None = None
    os_type: Text | None = None
    tags: dict[str, Scalar] | None = None
    inference_config: dict[str, Any] | None = None
    datastore: Text | None = None


def _environment_tag(value: Any) -> str | None:
    if isinstance(value, (dict, InlineEnvironment)):
        return "inline"
    return "reference"


Environment = Annotated[
    Annotated[EnvironmentReference, Tag("reference")] | Annotated[InlineEnvironment, Tag("inline")],
    Discriminator(_environment_tag),
]
"""``azureml:name:version`` / ``azureml://registries/...`` or an inline mapping."""
