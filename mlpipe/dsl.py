"""``mlpipe.dsl``: mirror of ``azure.ai.ml.dsl``, so ``@dsl.pipeline(...)`` code runs unchanged.

Mirror module: it only re-exports (the code lives in mlpipe.sdk.builder). Not to be confused
with the same-named modules under ``mlpipe.sdk`` / ``mlpipe.schema``; docs/architecture.md
lists every mirror.
"""

from __future__ import annotations

from mlpipe.sdk.builder import pipeline

__all__ = ["pipeline"]
