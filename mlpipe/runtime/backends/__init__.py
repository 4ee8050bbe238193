"""Where worker processes run: ``local`` (this machine) or ``dask`` (a Dask cluster)."""

from __future__ import annotations

import importlib

from mlpipe.diagnostics import did_you_mean
from mlpipe.runtime.backends.base import Backend

BACKENDS = {
    "local": "mlpipe.runtime.backends.local:LocalBackend",
    "dask": "mlpipe.runtime.backends.dask:DaskBackend",
}


def get_backend(backend: str | Backend) -> Backend:
    """A backend instance for ``backend`` (a name in :data:`BACKENDS` or an instance)."""
    if isinstance(backend, Backend):
        return backend
    reference = BACKENDS.get(backend)
    if reference is None:
        hint = did_you_mean(backend, BACKENDS)
        raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}"
                         + (f" ({hint})" if hint else ""))
    module_name, _, name = reference.partition(":")
    return getattr(importlib.import_module(module_name), name)()


__all__ = ["BACKENDS", "Backend", "get_backend"]
