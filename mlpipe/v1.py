"""``mlpipe.v1``: mirror of the azureml v1 SDK (``azureml.core``, ``azureml.data``,
``azureml.pipeline.core`` / ``.steps``, ``azureml.widgets``), run locally:
``ParallelRunConfig`` / ``ParallelRunStep`` / ``Pipeline`` and the names around them
(``Workspace``, ``Datastore``, ``Dataset``, ``Model``, ``Environment``, ``PipelineParameter``,
``Run``, ...). ``mlpipe run-script`` gives a script this namespace for those modules.

    from mlpipe.v1 import ParallelRunConfig, ParallelRunStep, Pipeline

Mirror module: it only re-exports (the code lives in the package mlpipe.sdk.v1). Not to be
confused with the same-named modules under ``mlpipe.sdk`` / ``mlpipe.schema``;
docs/architecture.md lists every mirror.
"""

from __future__ import annotations

from mlpipe.sdk import v1 as _v1
from mlpipe.sdk.v1 import *  # noqa: F403 - every public name of mlpipe.sdk.v1

__all__ = list(_v1.__all__)
