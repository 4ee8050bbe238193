"""``mlpipe.constants``: mirror of ``azure.ai.ml.constants`` and of the private modules
published code imports from (``azure.ai.ml.constants._common``, ``._component``, ``._job``,
``._compute``; ``mlpipe run-script`` maps all of them here).

The values the schema knows are not repeated here: each such class is built from the
schema that owns them (``mlpipe.schema``), so a type or mode the validator accepts is a
constant here and nothing else is. The rest (``LROConfigurations``, ``ComputeType``, ...)
are azure-ai-ml's own values, which nothing local acts on. Names follow azure-ai-ml
(``AssetTypes.URI_FOLDER``). Mirror module: docs/architecture.md lists every mirror.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Any, get_args

from mlpipe.io_types import DataType, InputMode, LiteralType, OutputMode
from mlpipe.schema.parallel import ParallelTask
from mlpipe.schema.pipeline import NODE_TYPES


def _members(values: Iterable[str]) -> dict[str, Any]:
    """``{"URI_FOLDER": "uri_folder", ...}`` for the values, in a stable order."""
    return {value.upper(): value for value in sorted(set(values))}


def _constants(name: str, doc: str, values: Iterable[str]) -> type:
    return type(name, (), {"__doc__": doc, "__module__": __name__, **_members(values)})


AssetTypes = _constants("AssetTypes", "Data input/output ``type`` values.", get_args(DataType))
InputTypes = _constants("InputTypes", "Literal input ``type`` values.", get_args(LiteralType))
InputOutputModes = _constants("InputOutputModes", "Input/output ``mode`` values.",
                              (*get_args(InputMode), *get_args(OutputMode)))
ParallelTaskType = _constants("ParallelTaskType", "``task.type`` of a parallel step.",
                              get_args(ParallelTask.model_fields["type"].annotation))
JobType = _constants("JobType", "Node and job ``type`` values.", NODE_TYPES)
NodeType = _constants("NodeType", "Pipeline node ``type`` values (``constants._component``).",
                      NODE_TYPES)
DistributionType = _constants("DistributionType", "``distribution.type`` of a command step.",
                              ("mpi", "pytorch", "ray", "tensorflow"))
LegacyAssetTypes = _constants("LegacyAssetTypes", "azure-ai-ml's legacy asset type.", ("path",))


class LROConfigurations:
    """azure-ai-ml's polling settings (``constants._common``); local calls return at once."""

    MAX_WAIT_COUNT = 400
    POLLING_TIMEOUT = 720
    POLL_INTERVAL = 5
    SLEEP_TIME = 5


class ModelType:
    """``Model(type=...)`` values azure-ai-ml's REST layer uses."""

    CUSTOM = "CustomModel"
    MLFLOW = "MLFlowModel"
    TRITON = "TritonModel"


class ComponentSource:
    """Where azure-ai-ml says a component came from (``constants._component``)."""

    BUILDER = "BUILDER"
    BUILTIN = "BUILTIN"
    CLASS = "CLASS"
    DSL = "DSL"
    REMOTE_REGISTRY = "REMOTE.REGISTRY"
    REMOTE_WORKSPACE_COMPONENT = "REMOTE.WORKSPACE.COMPONENT"
    REMOTE_WORKSPACE_JOB = "REMOTE.WORKSPACE.JOB"
    YAML_COMPONENT = "YAML.COMPONENT"
    YAML_JOB = "YAML.JOB"


class ComputeType:
    """``type`` of a compute (``constants._compute``); every compute is this machine here."""

    ADF = "DataFactory"
    AMLCOMPUTE = "amlcompute"
    COMPUTEINSTANCE = "computeinstance"
    KUBERNETES = "kubernetes"
    MANAGED = "managed"
    SYNAPSESPARK = "synapsespark"
    VIRTUALMACHINE = "virtualmachine"


class ComputeTier:
    """``AmlCompute(tier=...)`` values (``constants._compute``), recorded only."""

    DEDICATED = "dedicated"
    LOWPRIORITY = "low_priority"


class AzureMLResourceType:
    """azure-ai-ml's names of workspace resource kinds (``constants._common``)."""

    BATCH_DEPLOYMENT = "batch_deployments"
    BATCH_ENDPOINT = "batch_endpoints"
    CAPABILITY_HOST = "capability_hosts"
    CODE = "codes"
    COMPONENT = "components"
    COMPUTE = "computes"
    CONNECTION = "connections"
    CONNECTIONS = "connections"
    DATA = "data"
    DATASTORE = "datastores"
    DEPLOYMENT = "deployments"
    DEPLOYMENT_TEMPLATE = "deployment_template"
    ENVIRONMENT = "environments"
    FEATURE_SET = "feature_sets"
    FEATURE_STORE = "feature_store"
    FEATURE_STORE_ENTITY = "feature_store_entities"
    HUB = "hub"
    INDEX = "indexes"
    JOB = "jobs"
    MARKETPLACE_SUBSCRIPTION = "marketplace_subscriptions"
    MODEL = "models"
    ONLINE_DEPLOYMENT = "online_deployments"
    ONLINE_ENDPOINT = "online_endpoints"
    PROJECT = "project"
    REGISTRY = "registries"
    SCHEDULE = "schedules"
    SERVERLESS_ENDPOINT = "serverless_endpoints"
    VIRTUALCLUSTER = "virtualclusters"
    WORKSPACE = "workspaces"


# azure-ai-ml's plain names in ``constants._common`` that published code uses.
ARM_ID_PREFIX = "azureml:"
FILE_PREFIX = "file:"
BASE_PATH_CONTEXT_KEY = "base_path"
PARAMS_OVERRIDE_KEY = "params_override"
AZUREML_RESOURCE_PROVIDER = "Microsoft.MachineLearningServices"
RESOURCE_ID_FORMAT = "/subscriptions/{}/resourceGroups/{}/providers/{}/workspaces/{}"
LOCAL_COMPUTE_TARGET = "local"
SERVERLESS_COMPUTE = "serverless"
DEFAULT_EXPERIMENT_NAME = "Default"


class ListViewType(str, Enum):
    """``list_view_type`` of ``ml_client.<assets>.list`` (local stores have only active assets)."""

    ACTIVE_ONLY = "ActiveOnly"
    ARCHIVED_ONLY = "ArchivedOnly"
    ALL = "All"


__all__ = ["ARM_ID_PREFIX", "AZUREML_RESOURCE_PROVIDER", "AssetTypes", "AzureMLResourceType",
           "BASE_PATH_CONTEXT_KEY", "ComponentSource", "ComputeTier", "ComputeType",
           "DEFAULT_EXPERIMENT_NAME", "DistributionType", "FILE_PREFIX", "InputOutputModes",
           "InputTypes", "JobType", "LOCAL_COMPUTE_TARGET", "LROConfigurations",
           "LegacyAssetTypes", "ListViewType", "ModelType", "NodeType", "PARAMS_OVERRIDE_KEY",
           "ParallelTaskType", "RESOURCE_ID_FORMAT", "SERVERLESS_COMPUTE"]
