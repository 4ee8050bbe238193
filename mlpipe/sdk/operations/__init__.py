"""The operation groups of the local ``MLClient`` (``ml_client.jobs``, ``.compute``, ...).

Each answers on this machine: jobs run here, assets are registered in the runs
folder, compute describes this machine. A call that needs a workspace raises
:class:`NotAvailableLocally` naming the call and what to do instead.
"""

from __future__ import annotations

from mlpipe.sdk.operations.assets import (
    ComponentOperations,
    DataOperations,
    EnvironmentOperations,
    ModelOperations,
)
from mlpipe.sdk.operations.base import NotAvailableLocally, Operations, Unavailable
from mlpipe.sdk.operations.jobs import JobOperations
from mlpipe.sdk.operations.workspace import ComputeOperations, WorkspaceOperations

__all__ = ["ComponentOperations", "ComputeOperations", "DataOperations",
           "EnvironmentOperations", "JobOperations", "ModelOperations", "NotAvailableLocally",
           "Operations", "Unavailable", "WorkspaceOperations"]
