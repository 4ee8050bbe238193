"""``mlpipe.dsl``: the ``azure.ai.ml.dsl`` name, so ``@dsl.pipeline(...)`` code runs unchanged.

Mirror module: it exists so ``azure.ai.ml.dsl`` imports keep working with ``mlpipe`` in
their place; it only re-exports (the code lives in mlpipe.sdk.builder). Not to be confused
with the same-named modules under ``mlpipe.sdk`` / ``mlpipe.schema``; see
docs/architecture.md.
"""

from __future__ import annotations

from mlpipe.sdk.builder import pipeline

__all__ = ["pipeline"]
