"""``mlpipe.entities``: the ``azure.ai.ml.entities`` names a pipeline script touches.

Steps and settings run locally; compute, workspace and asset entities describe
this machine or are registered in the runs folder (see ``MLClient``).
"""

from __future__ import annotations

from mlpipe.sdk.assets import Data, Model
from mlpipe.sdk.entities import (
    BatchRetrySettings,
    Environment,
    JobResourceConfiguration,
    RetrySettings,
)
from mlpipe.sdk.job import PipelineJob, PipelineJobSettings
from mlpipe.sdk.nodes import CommandNode, Component, ParallelNode
from mlpipe.sdk.resources import (
    AmlCompute,
    BuildContext,
    Compute,
    ComputeInstance,
    ResourceConfiguration,
    Workspace,
)

Command = CommandNode
Parallel = ParallelNode
# A component read with load_component() (azure-ai-ml gives the subclass of its ``type``).
CommandComponent = Component
ParallelComponent = Component
PipelineComponent = Component

__all__ = ["AmlCompute", "BatchRetrySettings", "BuildContext", "Command", "CommandComponent",
           "Compute", "ComputeInstance", "Data", "Environment", "JobResourceConfiguration",
           "Model", "Parallel", "ParallelComponent", "PipelineComponent", "PipelineJob",
           "PipelineJobSettings", "ResourceConfiguration", "RetrySettings", "Workspace"]
