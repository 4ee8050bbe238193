"""``mlpipe.entities``: the ``azure.ai.ml.entities`` names the SDK supports.

Mirror module: it exists so ``azure.ai.ml.entities`` imports keep working with ``mlpipe`` in
their place; it only re-exports (the code lives in mlpipe.sdk.entities and mlpipe.sdk.job).
Not to be confused with the same-named modules under ``mlpipe.sdk`` / ``mlpipe.schema``; see
docs/architecture.md.
"""

from __future__ import annotations

from mlpipe.sdk.entities import (
    BatchRetrySettings,
    Environment,
    JobResourceConfiguration,
    RetrySettings,
)
from mlpipe.sdk.job import PipelineJob, PipelineJobSettings

__all__ = ["BatchRetrySettings", "Environment", "JobResourceConfiguration", "PipelineJob",
           "PipelineJobSettings", "RetrySettings"]
