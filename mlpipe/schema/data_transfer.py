"""``type: data_transfer``: copy, import and export steps (azure-ai-ml's
``DataTransferCopySchema``, ``DataTransferImportSchema``, ``DataTransferExportSchema``, their
``Pipeline...JobSchema`` spellings, and ``DataTransferCopyComponentSchema``). They move data
between Azure stores and databases; a local run cannot do that."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, Tag, model_validator

from mlpipe.schema.common import COMPONENT_DESCRIPTION, ComponentBase, NodeBase, component_kind
from mlpipe.schema.compute import Identity
from mlpipe.schema.fields import StrictModel, Text, chosen_by, fail, one_of

DATA_TRANSFER_TASKS = ("copy_data", "import_data", "export_data")
COPY_MODES = ("merge_with_overwrite", "fail_if_conflict")


class DataTransferCopyComponent(ComponentBase):
    """A data transfer component file (``type: data_transfer``, ``task: copy_data``)."""

    type: Annotated[str, one_of("data_transfer", bindable=False)] = Field(
        description="Always 'data_transfer'.")
    task: Annotated[str, one_of("copy_data", bindable=False)]
    data_copy_mode: Annotated[str, one_of(*COPY_MODES, bindable=False)] | None = None


class StoredProcedureParam(StrictModel):
    """One parameter of a stored procedure."""

    name: Text | None = None
    value: Text | None = None
    type: Text | None = None


class Database(StrictModel):
    """A database table, query or stored procedure reached through a connection."""

    type: Annotated[str, one_of("database", bindable=False)]
    connection: Text = Field(description="azureml:<connection name>.")
    table_name: Text | None = None
    query: Text | None = None
    stored_procedure: Text | None = None
    stored_procedure_params: list[StoredProcedureParam] | None = None


class FileSystem(StrictModel):
    """A path on a file system reached through a connection."""

    type: Annotated[str, one_of("file_system", bindable=False)] | None = None
    connection: Text = Field(description="azureml:<connection name>.")
    path: Text | None = None


Store = Annotated[
    Annotated[Database, Tag("database")] | Annotated[FileSystem, Tag("file_system")],
    chosen_by(("database", "file_system"), what="data store"),
]


class DataTransferBase(NodeBase):
    """The keys every data transfer step has."""

    type: Annotated[str, one_of("data_transfer", bindable=False)]
    identity: Identity | None = None


class DataTransferCopyNode(DataTransferBase):
    """``task: copy_data``: copy the step's inputs to its outputs with a copy component."""

    task: Annotated[str, one_of("copy_data", bindable=False)]
    component: (Annotated[Annotated[Text, Tag("reference")]
                          | Annotated[DataTransferCopyComponent, Tag("inline")],
                          component_kind(DataTransferCopyComponent)] | None) = Field(
        None, description=COMPONENT_DESCRIPTION)
    data_copy_mode: Annotated[str, one_of(*COPY_MODES, bindable=False)] | None = None


class DataTransferImportNode(DataTransferBase):
    """``task: import_data``: import a database or file system ``source`` into output ``sink``."""

    task: Annotated[str, one_of("import_data", bindable=False)]
    component: Text | None = Field(None, description="A registered import component.")
    source: Store

    @model_validator(mode="after")
    def _one_output_sink(self) -> DataTransferImportNode:
        if "inputs" in self.model_fields_set and self.inputs:
            raise fail("conflict", "inputs is not a valid field in task type import_data")
        if self.outputs is not None and list(self.outputs) != ["sink"]:
            raise fail("conflict", "outputs of task type import_data must be exactly one output "
                                   f"called sink, got {', '.join(self.outputs) or 'none'}")
        return self


class DataTransferExportNode(DataTransferBase):
    """``task: export_data``: export input ``source`` to a database or file system ``sink``."""

    task: Annotated[str, one_of("export_data", bindable=False)] | None = None
    component: Text | None = Field(None, description="A registered export component.")
    sink: Store

    @model_validator(mode="after")
    def _one_input_source(self) -> DataTransferExportNode:
        if self.outputs:
            raise fail("conflict", "outputs is not a valid field in task type export_data")
        if self.inputs is not None and list(self.inputs) != ["source"]:
            raise fail("conflict", "inputs of task type export_data must be exactly one input "
                                   f"called source, got {', '.join(self.inputs) or 'none'}")
        return self


DataTransferNode = Annotated[
    Annotated[DataTransferCopyNode, Tag("copy_data")]
    | Annotated[DataTransferImportNode, Tag("import_data")]
    | Annotated[DataTransferExportNode, Tag("export_data")],
    chosen_by(DATA_TRANSFER_TASKS, what="data transfer", key="task"),
]
"""A ``type: data_transfer`` step, chosen by its ``task``."""


def data_transfer_task(value: Any) -> str | None:
    """The ``task`` of a data transfer step mapping (lower-cased), if it has one."""
    task = value.get("task") if isinstance(value, dict) else getattr(value, "task", None)
    return task.lower() if isinstance(task, str) else None


__all__ = ["DATA_TRANSFER_TASKS", "DataTransferCopyComponent", "DataTransferCopyNode",
           "DataTransferExportNode", "DataTransferImportNode", "DataTransferNode", "Database",
           "FileSystem"]
