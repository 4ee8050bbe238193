"""``mlpipe.entities``: the ``azure.ai.ml.entities`` names the SDK supports."""

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
