"""``type: import``: import steps and import components (azure-ai-ml's ``ImportSchema``,
``PipelineImportJobSchema`` and ``ImportComponentSchema``): data imported from a database or
S3 into an Azure ML data asset. A local run cannot do that."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, Tag

from mlpipe.schema.common import COMPONENT_DESCRIPTION, ComponentBase, NodeBase, component_kind
from mlpipe.schema.compute import Identity
from mlpipe.schema.fields import Identifier, StrictModel, Text, chosen_by, one_of
from mlpipe.schema.inputs_outputs import ComponentInput, ComponentOutput, JobOutput

DATABASE_SOURCES = ("azuresqldb", "azuresynapseanalytics", "snowflake")


class ImportComponent(ComponentBase):
    """An import component file (``type: import``): ``source`` parameters and one ``output``."""

    type: Annotated[str, one_of("import", bindable=False)] = Field(description="Always 'import'.")
    source: dict[Identifier, ComponentInput] = Field(description="The source's parameters.")
    output: ComponentOutput = Field(description="The imported data.")


class DatabaseSource(StrictModel):
    """``source: {type: azuresqldb | azuresynapseanalytics | snowflake, connection, query}``."""

    type: Annotated[str, one_of(*DATABASE_SOURCES, bindable=False)]
    connection: Text
    query: Text


class FileSource(StrictModel):
    """``source: {type: s3, connection, path}``."""

    type: Annotated[str, one_of("s3", bindable=False)]
    connection: Text
    path: Text


ImportSource = Annotated[
    Annotated[DatabaseSource, Tag("database")] | Annotated[FileSource, Tag("s3")],
    chosen_by(("database", "s3"), what="import source",
              aliases={name: "database" for name in DATABASE_SOURCES},
              shown=(*DATABASE_SOURCES, "s3")),
]


class ImportNode(NodeBase):
    """A ``type: import`` step: an import ``component:``, or inline ``source`` and ``output``."""

    type: Annotated[str, one_of("import", bindable=False)]
    component: (Annotated[Annotated[Text, Tag("reference")]
                          | Annotated[ImportComponent, Tag("inline")],
                          component_kind(ImportComponent)] | None) = Field(
        None, description=COMPONENT_DESCRIPTION)
    source: ImportSource | None = None
    output: JobOutput | None = None
    identity: Identity | None = None


__all__ = ["DatabaseSource", "FileSource", "ImportComponent", "ImportNode"]
