"""Every azureml v1 name mlpipe mirrors, in one namespace: what ``mlpipe run-script`` gives a
script for ``azureml.core``, ``azureml.core.*``, ``azureml.data``, ``azureml.pipeline.core``,
``azureml.pipeline.steps`` and ``azureml.widgets``."""

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
