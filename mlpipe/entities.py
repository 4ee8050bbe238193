"""``mlpipe.entities``: mirror of ``azure.ai.ml.entities``, the names a pipeline script touches.

Steps and settings run locally; compute, workspace and asset entities describe
this machine or are registered in the runs folder (see ``MLClient``).

Mirror module: it only re-exports (the code lives in mlpipe.sdk). Not to be confused with the
same-named modules under ``mlpipe.sdk`` / ``mlpipe.schema``; docs/architecture.md lists every
mirror.
"""

from __future__ import annotations

from mlpipe.sdk.assets import Data, Model
from mlpipe.sdk.components import CommandComponent, ParallelComponent, PipelineComponent
from mlpipe.sdk.entities import (
    BatchRetrySettings,
    CommandJobLimits,
    Environment,
    JobResourceConfiguration,
    QueueSettings,
    RetrySettings,
)
from mlpipe.sdk.identities import (
    AmlTokenConfiguration,
    ManagedIdentityConfiguration,
    MpiDistribution,
    PyTorchDistribution,
    RayDistribution,
    TensorFlowDistribution,
    UserIdentityConfiguration,
)
from mlpipe.sdk.job import PipelineJob, PipelineJobSettings
from mlpipe.sdk.nodes import CommandNode, ParallelNode
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

__all__ = ["AmlCompute", "AmlTokenConfiguration", "BatchRetrySettings", "BuildContext",
           "Command", "CommandComponent", "CommandJobLimits", "Compute", "ComputeInstance",
           "Data", "Environment",
           "JobResourceConfiguration", "ManagedIdentityConfiguration", "Model",
           "MpiDistribution", "Parallel", "ParallelComponent", "PipelineComponent",
           "PipelineJob", "PipelineJobSettings", "PyTorchDistribution", "QueueSettings",
           "RayDistribution",
           "ResourceConfiguration", "RetrySettings", "TensorFlowDistribution",
           "UserIdentityConfiguration", "Workspace"]
