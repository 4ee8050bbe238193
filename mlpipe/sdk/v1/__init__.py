"""The azureml v1 API (``ParallelRunConfig`` / ``ParallelRunStep`` / ``Pipeline`` and the
names around them), run locally as v2; ``mlpipe.v1`` re-exports these names.

One module per kind of thing:

- ``config``: ``ParallelRunConfig`` (v1 defaults, validation, YAML file)
- ``parameters``: ``PipelineParameter`` and the values in force for a submission
- ``datastores``: ``Datastore`` / ``DataPath`` as local folders
- ``mltables``: MLTable folders written for CSV files and partitioned tables
- ``datasets``: ``Dataset``, ``FileDataset``, ``TabularDataset``, ``PipelineData``, ...
- ``translation``: a ``ParallelRunStep`` as a v2 parallel step (the v1 -> v2 table)
- ``pipeline``: ``ParallelRunStep``, ``Pipeline``, ``Experiment``
- ``runs``: ``PipelineRun``, ``StepRun``, ``RunDetails`` over a finished local run
- ``workspace``, ``models``, ``environments``, ``run_context``: ``Workspace`` /
  ``ComputeTarget``, ``Model``, ``Environment`` / ``CondaDependencies``, ``Run.get_context()``
"""

from __future__ import annotations

from mlpipe.sdk.v1.config import ParallelRunConfig
from mlpipe.sdk.v1.datasets import (
    Dataset,
    DatasetConsumptionConfig,
    FileDataset,
    OutputFileDatasetConfig,
    PipelineData,
    TabularDataset,
)
from mlpipe.sdk.v1.datastores import DataPath, Datastore
from mlpipe.sdk.v1.environments import (
    DEFAULT_CPU_IMAGE,
    DEFAULT_GPU_IMAGE,
    CondaDependencies,
    Environment,
)
from mlpipe.sdk.v1.models import Model
from mlpipe.sdk.v1.parameters import PipelineParameter
from mlpipe.sdk.v1.pipeline import Experiment, ParallelRunStep, Pipeline
from mlpipe.sdk.v1.run_context import Run
from mlpipe.sdk.v1.runs import (
    ActivityFailedException,
    PipelineRun,
    PortDataReference,
    RunDetails,
    StepRun,
)
from mlpipe.sdk.v1.workspace import (
    VERSION,
    AmlCompute,
    ComputeTarget,
    InteractiveLoginAuthentication,
    MsiAuthentication,
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
