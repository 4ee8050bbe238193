"""``type: spark``: Spark components and Spark steps (azure-ai-ml's ``SparkComponentSchema``,
``SparkSchema`` and ``PipelineSparkJobSchema``): the entry file or class, the files shipped
with it, ``conf``, ``args`` and the serverless Spark ``resources``."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Discriminator, Field, Tag, field_validator

from mlpipe.schema.common import COMPONENT_DESCRIPTION, ComponentBase, NodeBase, component_kind
from mlpipe.schema.compute import Identity
from mlpipe.schema.environment import Environment
from mlpipe.schema.fields import StrictModel, Text, Version, fail, one_of

SPARK_INSTANCE_TYPES = ("standard_e4s_v3", "standard_e8s_v3", "standard_e16s_v3",
                        "standard_e32s_v3", "standard_e64s_v3")
# conf keys azure-ai-ml reads into the job's own settings (and checks together)
CONF_KEYS = {
    "driver_cores": "spark.driver.cores",
    "driver_memory": "spark.driver.memory",
    "executor_cores": "spark.executor.cores",
    "executor_memory": "spark.executor.memory",
    "executor_instances": "spark.executor.instances",
    "dynamic_allocation_enabled": "spark.dynamicAllocation.enabled",
    "dynamic_allocation_min_executors": "spark.dynamicAllocation.minExecutors",
    "dynamic_allocation_max_executors": "spark.dynamicAllocation.maxExecutors",
}


class EntryFile(StrictModel):
    """``entry: {file: main.py}``: a Python file in the code folder."""

    file: Text = Field(description="The entry file, relative to the code folder.")


class EntryClass(StrictModel):
    """``entry: {class_name: org.example.Main}``: a JVM class in the jars."""

    class_name: Text


def _entry_tag(value: Any) -> str | None:
    if isinstance(value, (EntryFile, EntryClass)):
        return "file" if isinstance(value, EntryFile) else "class_name"
    if isinstance(value, dict):
        return "file" if "file" in value else "class_name" if "class_name" in value else "file"
    return None


SparkEntry = Annotated[
    Annotated[EntryFile, Tag("file")] | Annotated[EntryClass, Tag("class_name")],
    Discriminator(_entry_tag, custom_error_type="spark_entry",
                  custom_error_message="must be a mapping: {file: main.py} or {class_name: Main}"),
]


def _no_duplicates(value: list[str] | None, info: Any) -> list[str] | None:
    if value is not None:
        repeated = sorted({item for item in value if value.count(item) > 1})
        if repeated:
            raise fail("conflict", f"{info.field_name} must not contain duplicate entries, got "
                                   f"{', '.join(repr(r) for r in repeated)} more than once")
    return value


class SparkSettings(StrictModel):
    """The keys a Spark component and a Spark step share."""

    code: Text | None = Field(None, description="Local code folder (or azureml: code asset).")
    entry: SparkEntry | None = Field(None, description="{file: main.py} or {class_name: Main}.")
    py_files: list[Text] | None = Field(None, description="Python files put on the PYTHONPATH.")
    jars: list[Text] | None = Field(None, description="Jars put on the class path.")
    files: list[Text] | None = Field(None, description="Files put in the working folder.")
    archives: list[Text] | None = Field(None, description="Archives extracted in the working "
                                                          "folder.")
    conf: dict[str, Any] | None = Field(None, description="Spark configuration (spark.* keys).")
    properties: dict[str, Any] | None = None
    environment: Environment | None = None
    args: Text | None = Field(None, description="Arguments of the entry; may bind "
                                                "${{inputs.x}}/${{outputs.y}}.")

    _unique = field_validator("py_files", "jars", "files", "archives")(_no_duplicates)


class SparkResources(StrictModel):
    """``resources:`` of serverless Spark: the VM size and the Spark runtime version."""

    instance_type: Annotated[str, one_of(*SPARK_INSTANCE_TYPES)] = Field(
        description="One of " + ", ".join(SPARK_INSTANCE_TYPES) + ".")
    runtime_version: Version = Field(description="Spark runtime version, e.g. \"3.4\".")


class SparkComponent(ComponentBase, SparkSettings):
    """A Spark component file (``type: spark``)."""

    type: Annotated[str, one_of("spark", bindable=False)] = Field(description="Always 'spark'.")
    additional_includes: list[Text] | None = None


class SparkNode(NodeBase, SparkSettings):
    """A ``type: spark`` step: a ``component:`` plus overrides, or inline (``code``, ``entry``)."""

    type: Annotated[str, one_of("spark", bindable=False)]
    component: (Annotated[Annotated[Text, Tag("reference")]
                          | Annotated[SparkComponent, Tag("inline")],
                          component_kind(SparkComponent)] | None) = Field(
        None, description=COMPONENT_DESCRIPTION)
    resources: SparkResources | None = Field(
        None, description="Serverless Spark; a step gives either resources or a compute.")
    identity: Identity | None = None


__all__ = ["CONF_KEYS", "EntryClass", "EntryFile", "SPARK_INSTANCE_TYPES", "SparkComponent",
           "SparkNode", "SparkResources"]
