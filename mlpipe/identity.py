"""``mlpipe.identity``: stand-ins for ``azure.identity`` credentials (a local run needs none).

Mirror module: it exists so ``azure.identity`` imports keep working with ``mlpipe`` in their
place; it only re-exports (the code lives in mlpipe.sdk.client). Not to be confused with the
same-named modules under ``mlpipe.sdk`` / ``mlpipe.schema``; see docs/architecture.md.
"""

from __future__ import annotations

from mlpipe.sdk.client import DefaultAzureCredential, InteractiveBrowserCredential

__all__ = ["DefaultAzureCredential", "InteractiveBrowserCredential"]
