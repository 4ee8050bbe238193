"""``ml_client.compute`` and ``ml_client.workspaces``: this machine stands for both."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mlpipe.sdk.operations.base import Operations
from mlpipe.sdk.operations.jobs import Poller
from mlpipe.sdk.resources import AmlCompute, Compute, Workspace, this_machine


class ComputeOperations(Operations):
    """``ml_client.compute``: every compute name is this machine; creating one is noted."""

    _group = "compute"

    def __init__(self, runs_dir: str | Path | None = None, base_dir: Path | None = None) -> None:
        super().__init__(runs_dir, base_dir)
        self._created: dict[str, Compute] = {}

    def get(self, name: str) -> Compute:
        """``name`` as this machine (or the compute this script created under that name)."""
        return self._created.get(name) or this_machine(name)

    def list(self, **kwargs: Any) -> list[Compute]:
        """The computes this script created, else this machine as ``local``."""
        return list(self._created.values()) or [this_machine("local")]

    def begin_create_or_update(self, compute: Compute, **kwargs: Any) -> Poller:
        """Accept the compute (nothing is provisioned: steps run on this machine) and note it."""
        print(f"mlpipe: compute {compute.name!r} is recorded only; steps run on this machine",
              file=sys.stderr)
        self._created[compute.name] = compute
        return Poller(compute)

    def begin_delete(self, name: str, **kwargs: Any) -> Poller:
        """Forget a compute created by this script (nothing to delete locally)."""
        self._created.pop(name, None)
        return Poller()


class WorkspaceOperations(Operations):
    """``ml_client.workspaces``: the local stand-in workspace."""

    _group = "workspaces"

    def __init__(self, workspace: Workspace, runs_dir: str | Path | None = None) -> None:
        super().__init__(runs_dir)
        self._workspace = workspace

    def get(self, name: str | None = None, **kwargs: Any) -> Workspace:
        """The client's workspace (any name: there is one local workspace)."""
        return self._workspace

    def list(self, **kwargs: Any) -> list[Workspace]:
        return [self._workspace]


__all__ = ["AmlCompute", "ComputeOperations", "WorkspaceOperations"]
