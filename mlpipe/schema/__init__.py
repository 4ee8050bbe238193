"""The schema layer: YAML files -> validated pydantic models + diagnostics with positions.

Public entry points::

    load_pipeline(path) -> Loaded[PipelineJob]
    load_component(path or YamlDocument) -> Loaded[ParallelComponent | CommandComponent |
                                                   PipelineComponent]
    load_pipeline_data(data, source, positions=None) -> Loaded[PipelineJob]
    load_component_data(data, source, positions=None) -> Loaded[...]
    load_job(path or YamlDocument) -> Loaded[CommandJob | SweepJob | SparkJob | <AutoML job>]
    load_job_data(data, source, positions=None) -> Loaded[...]
    load_runnable(path or YamlDocument) -> Loaded[...]: a standalone job or a pipeline job

See docs/schema.md for the models and the rules.
"""

from typing import TYPE_CHECKING

from mlpipe.exports import exports_on_first_use

if TYPE_CHECKING:
    from mlpipe.schema.automl import AutoMLNode
    from mlpipe.schema.bindings import (
        binding_expression,
        contains_binding,
        find_bindings,
        is_binding,
    )
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
        load_job,
        load_job_data,
        load_pipeline,
        load_pipeline_data,
        load_runnable,
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

# Imported on first use: importing one module of the package must not build the others
# (the step types only Azure runs are also built on first use: schema/lazy.py).
_EXPORTS = {
    "AutoMLNode": "mlpipe.schema.automl",
    "DataTransferCopyComponent": "mlpipe.schema.data_transfer",
    "DataTransferNode": "mlpipe.schema.data_transfer",
    "ImportComponent": "mlpipe.schema.import_job",
    "ImportNode": "mlpipe.schema.import_job",
    "SparkComponent": "mlpipe.schema.spark",
    "SparkNode": "mlpipe.schema.spark",
    "SweepNode": "mlpipe.schema.sweep",
    "CommandComponent": "mlpipe.schema.command",
    "CommandLimits": "mlpipe.schema.compute",
    "CommandNode": "mlpipe.schema.command",
    "Component": "mlpipe.schema.loader",
    "ComponentInput": "mlpipe.schema.inputs_outputs",
    "ComponentOutput": "mlpipe.schema.inputs_outputs",
    "DataInput": "mlpipe.schema.inputs_outputs",
    "DockerBuild": "mlpipe.schema.environment",
    "Identity": "mlpipe.schema.compute",
    "InlineEnvironment": "mlpipe.schema.environment",
    "JobOutput": "mlpipe.schema.inputs_outputs",
    "KeyPath": "mlpipe.schema.yamlio",
    "LiteralInput": "mlpipe.schema.inputs_outputs",
    "LiteralValueInput": "mlpipe.schema.inputs_outputs",
    "Loaded": "mlpipe.schema.loader",
    "NODE_TYPES": "mlpipe.schema.pipeline",
    "ParallelComponent": "mlpipe.schema.parallel",
    "ParallelNode": "mlpipe.schema.parallel",
    "ParallelSettings": "mlpipe.schema.parallel",
    "ParallelTask": "mlpipe.schema.parallel",
    "PipelineComponent": "mlpipe.schema.pipeline",
    "PipelineJob": "mlpipe.schema.pipeline",
    "PipelineNode": "mlpipe.schema.pipeline",
    "PipelineSettings": "mlpipe.schema.pipeline",
    "PositionMap": "mlpipe.schema.yamlio",
    "Reference": "mlpipe.schema.references",
    "Resources": "mlpipe.schema.compute",
    "RetrySettings": "mlpipe.schema.parallel",
    "SettingError": "mlpipe.schema.ranges",
    "YamlDocument": "mlpipe.schema.yamlio",
    "binding_expression": "mlpipe.schema.bindings",
    "check_setting": "mlpipe.schema.ranges",
    "classify_reference": "mlpipe.schema.references",
    "contains_binding": "mlpipe.schema.bindings",
    "describe_value": "mlpipe.schema.yamlio",
    "find_bindings": "mlpipe.schema.bindings",
    "format_key_path": "mlpipe.schema.yamlio",
    "is_binding": "mlpipe.schema.bindings",
    "literal_type_problem": "mlpipe.schema.inputs_outputs",
    "load_component": "mlpipe.schema.loader",
    "load_component_data": "mlpipe.schema.loader",
    "load_job": "mlpipe.schema.loader",
    "load_job_data": "mlpipe.schema.loader",
    "load_pipeline": "mlpipe.schema.loader",
    "load_pipeline_data": "mlpipe.schema.loader",
    "load_runnable": "mlpipe.schema.loader",
    "load_yaml_file": "mlpipe.schema.yamlio",
    "load_yaml_text": "mlpipe.schema.yamlio",
}

__getattr__ = exports_on_first_use(__name__, _EXPORTS)


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
    "load_component", "load_component_data", "load_job", "load_job_data", "load_runnable",
    "load_pipeline", "load_pipeline_data",
    "load_yaml_file", "load_yaml_text",
]
