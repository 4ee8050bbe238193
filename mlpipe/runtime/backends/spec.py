"""What a backend is to the rest of mlpipe: one :class:`BackendSpec`, a row of the table in
:mod:`mlpipe.runtime.backends`.

The spec owns the backend's whole rule: its name (``--backend``, ``backend=``), how a
step gets its :class:`~mlpipe.runtime.backends.base.Backend` (``factory``), the packages
it needs beyond mlpipe's own (``requires``, checked by the pre-run checks before anything
starts) and, optionally, a *job scope*: a context the runner enters once per job (the
Dask backend's cluster) whose value it hands to ``factory`` for every step.

``factory`` and ``job_scope`` may be callables or ``"module:attribute"`` references
(dotted attributes allowed), imported on first use so that the table costs nothing to
import and an optional backend's packages are imported only when it runs.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mlpipe.runtime.backends.errors import BackendError
from mlpipe.wording import plural

if TYPE_CHECKING:
    from mlpipe.plan import ExecutionPlan
    from mlpipe.runtime.backends.base import Backend

Say = Callable[[str], None]
JobScope = Callable[["ExecutionPlan", Say, int], AbstractContextManager[Any]]


@dataclass(frozen=True)
class BackendSpec:
    """One backend: its name, how to make it, what it needs, and its job-wide scope.

    ``factory`` makes the backend of one step: it is called with the value of the job
    scope when the spec has a ``job_scope`` (``None`` outside a job, e.g.
    ``run_parallel_step(step, backend="dask")``), else with no argument.
    ``requires`` are the import names of the packages it needs (``"distributed"``);
    ``install_hint`` says how to get them. ``job_scope(plan, say, cores)`` returns a
    context manager the runner holds while the job runs (``say`` prints a console line,
    ``cores`` is the job's worker budget). ``summary`` is its line in ``--help``.
    """

    name: str
    factory: str | Callable[..., Backend]
    requires: tuple[str, ...] = ()
    job_scope: str | JobScope | None = None
    install_hint: str = ""
    summary: str = ""

    def missing(self) -> list[str]:
        """The packages of ``requires`` that this interpreter cannot import."""
        return [name for name in self.requires if not _importable(name)]

    def unavailable(self) -> str | None:
        """Why the backend cannot run in this installation (missing packages), or None."""
        missing = self.missing()
        if not missing:
            return None
        what = ", ".join(missing)
        verb = "is" if len(missing) == 1 else "are"
        hint = f"; install {'it' if len(missing) == 1 else 'them'} with: {self.install_hint}" \
            if self.install_hint else ""
        return (f"the {self.name!r} backend needs {plural(len(missing), 'package')} "
                f"({what}) that {verb} not installed{hint}")

    def require(self) -> None:
        """Raise :class:`BackendError` when :meth:`unavailable` says why it cannot run."""
        problem = self.unavailable()
        if problem:
            raise BackendError(problem)

    def create(self, scope: Any = None) -> Backend:
        """A new backend for one step, given the job scope's value (see the class docstring)."""
        self.require()
        factory = _resolve(self.factory)
        return factory(scope) if self.job_scope is not None else factory()

    def scope(self, plan: ExecutionPlan, say: Say, cores: int) -> AbstractContextManager[Any]:
        """The job-wide context of this backend (a no-op without ``job_scope``)."""
        if self.job_scope is None:
            return contextlib.nullcontext()
        job_scope: JobScope = _resolve(self.job_scope)
        return job_scope(plan, say, cores)


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # ValueError: sys.modules[name] is None (blocked)
        return False


def _resolve(reference: Any) -> Any:
    """A callable as is; ``"module:attr.attr"`` imported and looked up."""
    if not isinstance(reference, str):
        return reference
    module_name, _, attributes = reference.partition(":")
    value: Any = importlib.import_module(module_name)
    for attribute in attributes.split("."):
        value = getattr(value, attribute)
    return value


__all__ = ["BackendSpec", "JobScope", "Say"]
