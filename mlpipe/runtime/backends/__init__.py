"""Where worker processes run: the table of backends, one :class:`BackendSpec` row each.

``local`` runs workers as processes of this machine, ``dask`` in the worker processes of
a Dask cluster. A new backend is one module (its :class:`Backend`) plus one row here, or
one :func:`register_backend` call: ``--backend``'s choices, the pre-run check of its
packages, its job-wide scope and ``run_parallel_step(backend=name)`` all read this table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mlpipe.diagnostics import did_you_mean
from mlpipe.runtime.backends.errors import BackendError
from mlpipe.runtime.backends.spec import BackendChoice, BackendOption, BackendSpec, JobScope

if TYPE_CHECKING:
    from mlpipe.runtime.backends.base import Backend

DASK_INSTALL_HINT = "pip install 'mlpipe-azure[dask]'"

# the dask backend's options, named as Dask names them (``dask worker --scheduler-file``,
# distributed.security.Security): read by DaskOptions.given (runtime/backends/dask_options.py)
DASK_OPTIONS = (
    BackendOption("scheduler", "the Dask scheduler's address (tcp://host:8786, tls://...)",
                  "ADDRESS"),
    BackendOption("scheduler_file", "the JSON file `dask scheduler --scheduler-file` wrote",
                  "PATH"),
    BackendOption("tls_ca_file", "TLS: the certificate authority's file", "PATH"),
    BackendOption("tls_client_cert", "TLS: this client's certificate file", "PATH"),
    BackendOption("tls_client_key", "TLS: this client's private key file", "PATH"),
    BackendOption("require_encryption", "TLS: refuse an unencrypted connection", switch=True),
)

BACKENDS: dict[str, BackendSpec] = {
    spec.name: spec for spec in (
        BackendSpec("local", "mlpipe.runtime.backends.local:LocalBackend",
                    summary="worker processes on this machine"),
        BackendSpec("dask", "mlpipe.runtime.backends.dask:DaskBackend.for_job",
                    requires=("distributed",),
                    job_scope="mlpipe.runtime.backends.dask_cluster:job_cluster",
                    install_hint=DASK_INSTALL_HINT,
                    summary="the worker processes of a Dask cluster (--scheduler, [dask] in "
                            "mlpipe.toml, $MLPIPE_DASK_SCHEDULER; else a LocalCluster for the "
                            "job)",
                    options=DASK_OPTIONS,
                    read_options="mlpipe.runtime.backends.dask_options:DaskOptions.given"),
    )
}


def register_backend(spec: BackendSpec, *, replace: bool = False) -> None:
    """Add ``spec`` to the table (``replace``: over a backend of the same name)."""
    if spec.name in BACKENDS and not replace:
        raise ValueError(f"a backend named {spec.name!r} is already registered")
    BACKENDS[spec.name] = spec


def unregister_backend(name: str) -> None:
    """Remove the backend ``name`` from the table (nothing when it is not there)."""
    BACKENDS.pop(name, None)


def backend_names() -> tuple[str, ...]:
    """The names ``--backend`` and ``backend=`` accept, in table order."""
    return tuple(BACKENDS)


def backend_spec(name: str) -> BackendSpec:
    """The table's row for ``name``; :class:`ValueError` (with "did you mean") when unknown."""
    spec = BACKENDS.get(name)
    if spec is None:
        hint = did_you_mean(name, BACKENDS)
        raise ValueError(f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}"
                         + (f" ({hint})" if hint else ""))
    return spec


def get_backend(backend: str | BackendSpec | Backend, scope: Any = None) -> Backend:
    """A backend instance for ``backend``: a name in the table, a spec (made with the job
    ``scope``'s value) or an instance (returned as is)."""
    from mlpipe.runtime.backends.base import Backend  # noqa: PLC0415 - the table stays light

    if isinstance(backend, Backend):
        return backend
    spec = backend if isinstance(backend, BackendSpec) else backend_spec(backend)
    return spec.create(scope)


def __getattr__(name: str) -> Any:
    if name == "Backend":  # the protocol and its imports load when a backend is used
        from mlpipe.runtime.backends.base import Backend  # noqa: PLC0415

        return Backend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BACKENDS", "Backend", "BackendChoice", "BackendError", "BackendOption", "BackendSpec",
           "JobScope", "backend_names", "backend_spec", "get_backend", "register_backend",
           "unregister_backend"]
