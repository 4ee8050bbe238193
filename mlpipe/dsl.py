"""``mlpipe.dsl``: the ``azure.ai.ml.dsl`` name, so ``@dsl.pipeline(...)`` code runs unchanged."""

from __future__ import annotations

from mlpipe.sdk.builder import pipeline

__all__ = ["pipeline"]
