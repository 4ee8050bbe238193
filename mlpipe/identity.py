"""``mlpipe.identity``: mirror of ``azure.identity``, its credentials as stand-ins (a local
run needs none).

Mirror module: it only re-exports (the code lives in mlpipe.sdk.client). Not to be confused
with the same-named modules under ``mlpipe.sdk`` / ``mlpipe.schema``; docs/architecture.md
lists every mirror.
"""

from __future__ import annotations

from mlpipe.sdk.client import DefaultAzureCredential, InteractiveBrowserCredential

__all__ = ["DefaultAzureCredential", "InteractiveBrowserCredential"]
