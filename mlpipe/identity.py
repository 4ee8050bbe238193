"""``mlpipe.identity``: stand-ins for ``azure.identity`` credentials (a local run needs none)."""

from __future__ import annotations

from mlpipe.sdk.client import DefaultAzureCredential, InteractiveBrowserCredential

__all__ = ["DefaultAzureCredential", "InteractiveBrowserCredential"]
