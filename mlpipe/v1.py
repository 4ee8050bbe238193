"""``mlpipe.v1``: the azureml v1 API, run locally: ``ParallelRunConfig`` / ``ParallelRunStep`` /
``Pipeline`` and the names around them (``Workspace``, ``Datastore``, ``Dataset``, ``Model``,
``Environment``, ``PipelineParameter``, ``Run``, ...). ``mlpipe run-script`` gives a script
this namespace for ``azureml.core``, ``azureml.data``, ``azureml.pipeline.*`` and
``azureml.widgets``.

    from mlpipe.v1 import ParallelRunConfig, ParallelRunStep, Pipeline

Mirror module: it exists so ``azureml.pipeline.steps / azureml.core (SDK v1)`` imports keep
working with ``mlpipe`` in their place; it only re-exports (the code lives in
mlpipe.sdk.v1). Not to be confused with the same-named modules under ``mlpipe.sdk`` /
``mlpipe.schema``; see docs/architecture.md.
"""

from __future__ import annotations

from mlpipe.sdk.v1 import (
    Dataset,
    DatasetConsumptionConfig,
    Experiment,
    FileDataset,
    OutputFileDatasetConfig,
    ParallelRunConfig,
    ParallelRunStep,
    Pipeline,
    PipelineData,
    TabularDataset,
)
from mlpipe.sdk.v1_data import DataPath, Datastore
from mlpipe.sdk.v1_runs import (
    ActivityFailedException,
    PipelineParameter,
    PipelineRun,
    PortDataReference,
    StepRun,
)
from mlpipe.sdk.v1_workspace import (
    DEFAULT_CPU_IMAGE,
    DEFAULT_GPU_IMAGE,
    VERSION,
    AmlCompute,
    ComputeTarget,
    CondaDependencies,
    Environment,
    InteractiveLoginAuthentication,
    Model,
    MsiAuthentication,
    Run,
    RunDetails,
    ServicePrincipalAuthentication,
    Workspace,
)

__all__ = ["DEFAULT_CPU_IMAGE", "DEFAULT_GPU_IMAGE", "VERSION", "ActivityFailedException",
           "AmlCompute", "ComputeTarget", "CondaDependencies", "DataPath", "Dataset",
           "DatasetConsumptionConfig", "Datastore", "Environment", "Experiment", "FileDataset",
           "InteractiveLoginAuthentication", "Model", "MsiAuthentication",
           "OutputFileDatasetConfig", "ParallelRunConfig", "ParallelRunStep", "Pipeline",
           "PipelineData", "PipelineParameter", "PipelineRun", "PortDataReference", "Run",
           "RunDetails", "ServicePrincipalAuthentication", "StepRun", "TabularDataset",
           "Workspace"]
