"""``mlpipe.azure_ai_ml``: mirror of ``azure.ai.ml`` (its top-level names), for
``mlpipe run-script``.

mlpipe's SDK names (``Input``, ``Output``, ``MLClient``, ``command``, ``load_job``,
``load_component``, ``dsl``), the distribution settings, and ``load_data`` /
``load_model`` / ``load_environment`` / ``load_compute`` reading asset YAML files.
azure-ai-ml's other top-level names (``spark``, endpoint and deployment loaders, ...)
are :class:`~mlpipe.sdk.operations.Unavailable`: using one raises a clear error.
Mirror module: docs/architecture.md lists every mirror.
"""

from __future__ import annotations

import os
from typing import Any

from mlpipe import dsl
from mlpipe.sdk import Input, MLClient, Output, command, load_component, load_job
from mlpipe.sdk.assets import Data, Model, asset_fields
from mlpipe.sdk.datastores import load_datastore
from mlpipe.sdk.entities import Environment
from mlpipe.sdk.identities import (
    AmlTokenConfiguration,
    ManagedIdentityConfiguration,
    MpiDistribution,
    PyTorchDistribution,
    RayDistribution,
    TensorFlowDistribution,
    UserIdentityConfiguration,
)
from mlpipe.sdk.operations import Unavailable
from mlpipe.sdk.resources import AmlCompute

# The azure-ai-ml release whose names this mirror follows (scripts print it; tests compare
# the signatures with it): ``azure.ai.ml.__version__`` and ``azure.ai.ml._version.VERSION``.
VERSION = "1.35.2+mlpipe.local"
__version__ = VERSION

# azure-ai-ml's top-level names that need a workspace or a runtime mlpipe does not have.
NOT_LOCAL = ("spark", "load_batch_deployment", "load_batch_endpoint",
             "load_deployment_template", "load_feature_set", "load_feature_store",
             "load_feature_store_entity", "load_index", "load_online_deployment",
             "load_online_endpoint", "load_workspace", "load_registry", "load_connection",
             "load_workspace_connection", "load_model_package", "load_marketplace_subscription",
             "load_serverless_endpoint", "load_capability_host")


def load_data(source: str | os.PathLike[str], *, relative_origin: str | None = None,
              params_override: Any = None, **kwargs: Any) -> Data:
    """A ``Data`` asset from its YAML file (relative ``path`` from the file's folder)."""
    return Data(**asset_fields(source, params_override))


def load_model(source: str | os.PathLike[str], *, relative_origin: str | None = None,
               params_override: Any = None, **kwargs: Any) -> Model:
    """A ``Model`` from its YAML file."""
    return Model(**asset_fields(source, params_override))


def load_environment(source: str | os.PathLike[str], *, relative_origin: str | None = None,
                     params_override: Any = None, **kwargs: Any) -> Environment:
    """An ``Environment`` from its YAML file (recorded, never built)."""
    return Environment(**asset_fields(source, params_override))


def load_compute(source: str | os.PathLike[str], *, relative_origin: str | None = None,
                 params_override: Any = None, **kwargs: Any) -> AmlCompute:
    """A compute from its YAML file (recorded: steps run on this machine)."""
    fields = asset_fields(source, params_override)
    fields.pop("type", None)
    return AmlCompute(**fields)


# Names azure-ai-ml still serves from ``azure.ai.ml`` (its module ``__getattr__``), with a
# warning that they belong to ``azure.ai.ml.entities`` (published notebooks import them so).
MOVED = {"AmlTokenConfiguration": AmlTokenConfiguration,
         "ManagedIdentityConfiguration": ManagedIdentityConfiguration,
         "UserIdentityConfiguration": UserIdentityConfiguration}


def __getattr__(name: str) -> Any:
    if name in MOVED:
        return MOVED[name]
    if name in NOT_LOCAL:
        return Unavailable(f"azure.ai.ml.{name}")
    raise AttributeError(f"module 'azure.ai.ml' (mlpipe's mirror) has no attribute {name!r}")


__all__ = ["Input", "MLClient", "MpiDistribution", "Output", "PyTorchDistribution",
           "RayDistribution", "TensorFlowDistribution", "command", "dsl", "load_component",
           "load_compute", "load_data", "load_datastore", "load_environment", "load_job",
           "load_model"]
