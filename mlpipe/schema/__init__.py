"""The schema layer: YAML files -> validated pydantic models + diagnostics with positions.

Public entry points::

    load_pipeline(path) -> Loaded[PipelineJob]
    load_component(path or YamlDocument) -> Loaded[ParallelComponent | CommandComponent |
                                                   PipelineComponent]
    load_pipeline_data(data, source, positions=None) -> Loaded[PipelineJob]
    load_component_data(data, source, positions=None) -> Loaded[...]

See docs/schema.md for the models and the rules.
"""

from mlpipe.schema.automl import AutoMLNode
from mlpipe.schema.bindings import binding_expression, contains_binding, find_bindings, is_binding
from mlpipe.schema.command import CommandComponent, CommandNode
from mlpipe.schema.compute import CommandLimits, Identity, Resources
from mlpipe.schema.data_transfer import DataTransferCopyComponent, DataTransferNode
from mlpipe.schema.environment import DockerBuild, InlineEnvironment
from mlpipe.schema.import_job import ImportComponent, ImportNode
from mlpipe.schema.inputs_outputs import (
    ComponentInput,
    ComponentOutput,
    DataInput,
    JobOutput,
    LiteralInput,
    LiteralValueInput,
    literal_type_problem,
)
from mlpipe.schema.loader import (
    Component,
    Loaded,
    load_component,
    load_component_data,
    load_pipeline,
    load_pipeline_data,
)
from mlpipe.schema.parallel import (
    ParallelComponent,
    ParallelNode,
    ParallelSettings,
    ParallelTask,
    RetrySettings,
)
from mlpipe.schema.pipeline import (
    NODE_TYPES,
    PipelineComponent,
    PipelineJob,
    PipelineNode,
    PipelineSettings,
)
from mlpipe.schema.ranges import SettingError, check_setting
from mlpipe.schema.references import Reference, classify_reference
from mlpipe.schema.spark import SparkComponent, SparkNode
from mlpipe.schema.sweep import SweepNode
from mlpipe.schema.yamlio import (
    KeyPath,
    PositionMap,
    YamlDocument,
    describe_value,
    format_key_path,
    load_yaml_file,
    load_yaml_text,
)

__all__ = [
    "NODE_TYPES", "AutoMLNode", "CommandComponent", "CommandLimits", "CommandNode", "Component",
    "ComponentInput", "ComponentOutput", "DataInput", "DataTransferCopyComponent",
    "DataTransferNode", "DockerBuild", "Identity", "ImportComponent", "ImportNode",
    "InlineEnvironment", "JobOutput", "KeyPath", "LiteralInput", "LiteralValueInput", "Loaded",
    "ParallelComponent", "ParallelNode", "ParallelSettings", "ParallelTask", "PipelineComponent",
    "PipelineJob", "PipelineNode", "PipelineSettings", "PositionMap", "Reference", "Resources",
    "RetrySettings", "SettingError", "SparkComponent", "SparkNode", "SweepNode", "YamlDocument",
    "binding_expression", "check_setting", "classify_reference", "contains_binding",
    "describe_value", "find_bindings", "format_key_path", "is_binding", "literal_type_problem",
    "load_component", "load_component_data", "load_pipeline", "load_pipeline_data",
    "load_yaml_file", "load_yaml_text",
]
