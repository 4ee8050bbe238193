"""The Python SDK: compose, validate, dump and run pipelines in code (azure-ai-ml v2 style).

A thin front: SDK objects -> the YAML-equivalent document -> ``mlpipe.schema``
-> ``mlpipe.compiler`` -> ``mlpipe.jobs``. Validation and execution rules live
in those layers only.
"""

from __future__ import annotations

from mlpipe.sdk.bindings import NodeOutput
from mlpipe.sdk.builder import pipeline
from mlpipe.sdk.client import MLClient
from mlpipe.sdk.entities import (
    BatchRetrySettings,
    Environment,
    JobResourceConfiguration,
    RetrySettings,
    RunFunction,
)
from mlpipe.sdk.functions import command, parallel_run_function
from mlpipe.sdk.io import Input, Output, PipelineInput
from mlpipe.sdk.job import PipelineJob, PipelineJobSettings
from mlpipe.sdk.loading import load_component, load_job
from mlpipe.sdk.nodes import CommandNode, Component, Node, ParallelNode
from mlpipe.sdk.running import RunResult, compile_job, run

__all__ = [
    "BatchRetrySettings",
    "CommandNode",
    "Component",
    "Environment",
    "Input",
    "JobResourceConfiguration",
    "MLClient",
    "Node",
    "NodeOutput",
    "Output",
    "ParallelNode",
    "PipelineInput",
    "PipelineJob",
    "PipelineJobSettings",
    "RetrySettings",
    "RunFunction",
    "RunResult",
    "command",
    "compile_job",
    "load_component",
    "load_job",
    "parallel_run_function",
    "pipeline",
    "run",
]
