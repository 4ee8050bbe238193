"""The azureml v1 API (``ParallelRunConfig`` / ``ParallelRunStep`` / ``Pipeline`` and the
names around them), run locally as v2; ``mlpipe.v1`` re-exports these names.

One module per kind of thing:

- ``config``: ``ParallelRunConfig`` (v1 defaults, validation, YAML file)
- ``parameters``: ``PipelineParameter`` and the values in force for a submission
- ``datastores``: ``Datastore`` / ``DataPath`` as local folders
- ``mltables``: MLTable folders written for CSV files and partitioned tables
- ``datasets``: ``Dataset``, ``FileDataset``, ``TabularDataset``, ``PipelineData``, ...
- ``steps``: ``PythonScriptStep``, ``CommandStep``, ``ParallelRunStep`` (``run_after``)
- ``wiring``: a step's data as v2 inputs, outputs and argument text
- ``translation``: each step as a v2 node (the v1 -> v2 tables)
- ``pipeline``: ``Pipeline`` (any mix of steps), ``Experiment``
- ``runs``: ``PipelineRun``, ``StepRun``, ``RunDetails`` over a finished local run
- ``workspace``, ``models``, ``environments``, ``runconfig``, ``run_context``, ``exceptions``:
  ``Workspace`` / ``ComputeTarget``, ``Model``, ``Environment`` / ``CondaDependencies``,
  ``RunConfiguration``, ``Run.get_context()``, ``azureml.exceptions``
"""

from __future__ import annotations

from mlpipe.sdk.v1.config import ParallelRunConfig
from mlpipe.sdk.v1.datasets import (
    DataReference,
    Dataset,
    DatasetConsumptionConfig,
    FileDataset,
    FileDatasetFactory,
    OutputFileDatasetConfig,
    OutputTabularDatasetConfig,
    PipelineData,
    PipelineOutputFileDataset,
    PipelineOutputTabularDataset,
    TabularDataset,
    TabularDatasetFactory,
)
from mlpipe.sdk.v1.datastores import DataPath, DataPathComputeBinding, Datastore
from mlpipe.sdk.v1.environments import (
    DEFAULT_CPU_IMAGE,
    DEFAULT_GPU_IMAGE,
    CondaDependencies,
    Environment,
)
from mlpipe.sdk.v1.exceptions import (
    ActivityFailedException,
    AuthenticationException,
    AzureMLException,
    ComputeTargetException,
    ExperimentExecutionException,
    ModelNotFoundException,
    ProjectSystemException,
    RunConfigurationException,
    ServiceException,
    UserErrorException,
    WebserviceException,
    WorkspaceException,
)
from mlpipe.sdk.v1.models import Model
from mlpipe.sdk.v1.parameters import PipelineParameter
from mlpipe.sdk.v1.pipeline import Experiment, Pipeline
from mlpipe.sdk.v1.run_context import Run
from mlpipe.sdk.v1.runconfig import (
    DockerConfiguration,
    MpiConfiguration,
    PyTorchConfiguration,
    RunConfiguration,
    ScriptRunConfig,
    TensorflowConfiguration,
)
from mlpipe.sdk.v1.runs import (
    PipelineRun,
    PortDataReference,
    RunDetails,
    StepRun,
    StepRunOutput,
)
from mlpipe.sdk.v1.steps import CommandStep, ParallelRunStep, PythonScriptStep
from mlpipe.sdk.v1.workspace import (
    VERSION,
    AmlCompute,
    ComputeTarget,
    InteractiveLoginAuthentication,
    MsiAuthentication,
    ServicePrincipalAuthentication,
    Workspace,
)

__all__ = ["ActivityFailedException", "AmlCompute", "AuthenticationException", "AzureMLException",
           "CommandStep", "ComputeTarget", "ComputeTargetException", "CondaDependencies",
           "DEFAULT_CPU_IMAGE", "DEFAULT_GPU_IMAGE", "DataPath", "DataPathComputeBinding",
           "DataReference", "Dataset", "DatasetConsumptionConfig", "Datastore",
           "DockerConfiguration", "Environment", "Experiment", "ExperimentExecutionException",
           "FileDataset", "FileDatasetFactory", "InteractiveLoginAuthentication", "Model",
           "ModelNotFoundException",
           "MpiConfiguration", "MsiAuthentication", "OutputFileDatasetConfig",
           "OutputTabularDatasetConfig", "ParallelRunConfig", "ParallelRunStep", "Pipeline",
           "PipelineData", "PipelineOutputFileDataset", "PipelineOutputTabularDataset",
           "PipelineParameter", "PipelineRun", "PortDataReference", "ProjectSystemException",
           "PyTorchConfiguration", "PythonScriptStep", "Run", "RunConfiguration",
           "RunConfigurationException", "RunDetails", "ScriptRunConfig", "ServiceException",
           "ServicePrincipalAuthentication", "StepRun", "StepRunOutput", "TabularDataset",
           "TabularDatasetFactory",
           "TensorflowConfiguration", "UserErrorException", "VERSION", "WebserviceException",
           "Workspace", "WorkspaceException"]
