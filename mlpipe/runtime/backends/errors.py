"""The error a backend raises when it cannot be used (its own module: the backend table and
the backends' protocol both raise it, and neither imports the other to do so)."""

from __future__ import annotations

from mlpipe.errors import MlpipeError


class BackendError(MlpipeError, RuntimeError):
    """A backend cannot be used here (a missing optional dependency, a bad setting)."""


__all__ = ["BackendError"]
