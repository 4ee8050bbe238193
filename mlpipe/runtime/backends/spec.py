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

A backend takes options of its own, named as the backend names them (Dask's scheduler
address, say): the spec declares each (:class:`BackendOption`: ``--NAME`` on the command
line of ``job create`` and ``job rerun``, ``backend_options={"NAME": ...}`` in Python) and
how their values become what the backend takes (``read_options``: values -> an object,
such as a frozen dataclass of the backend's). A job asks for a backend as a
:class:`BackendChoice` (the name and the values given); :meth:`BackendSpec.configured`
binds the values, and the bound spec hands the object to ``job_scope`` (its fourth
argument) or, for a backend without a job scope, to ``factory``.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from mlpipe.diagnostics import did_you_mean
from mlpipe.frozen import FrozenDict, freeze
from mlpipe.runtime.backends.errors import BackendError
from mlpipe.wording import plural

if TYPE_CHECKING:
    from mlpipe.plan import ExecutionPlan
    from mlpipe.runtime.backends.base import Backend

Say = Callable[[str], None]
JobScope = Callable[..., AbstractContextManager[Any]]  # (plan, say, cores[, options])
ReadOptions = Callable[..., Any]  # (**values) -> the backend's options


@dataclass(frozen=True)
class BackendOption:
    """One option of a backend, named as the backend names it (``scheduler_file``): given as
    ``--scheduler-file VALUE`` on the command line (``--NAME`` alone for a ``switch``) and as
    ``backend_options={"scheduler_file": VALUE}`` in Python."""

    name: str
    help: str
    metavar: str = "VALUE"
    switch: bool = False  # takes no value: the flag alone means True

    @property
    def flag(self) -> str:
        """The command-line spelling: ``--scheduler-file``."""
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class BackendChoice:
    """A backend as a job asks for it: the table's ``name`` and the ``options`` given (the
    backend's own names; nothing given: its defaults)."""

    name: str = "local"
    options: FrozenDict[str, Any] = field(default_factory=freeze)

    @classmethod
    def of(cls, backend: str | BackendSpec | BackendChoice,
           options: Mapping[str, Any] | None = None) -> BackendChoice:
        """The choice of ``backend`` (a name, a spec or a choice) with ``options`` added."""
        if isinstance(backend, BackendChoice):
            return cls(backend.name, freeze({**backend.options, **(options or {})}))
        name = backend.name if isinstance(backend, BackendSpec) else backend
        return cls(name, freeze(dict(options or {})))


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
    ``options`` are the options the backend takes and ``read_options(**values)`` makes what
    it takes of them (see the module docstring); :meth:`configured` binds them.
    """

    name: str
    factory: str | Callable[..., Backend]
    requires: tuple[str, ...] = ()
    job_scope: str | JobScope | None = None
    install_hint: str = ""
    summary: str = ""
    options: tuple[BackendOption, ...] = ()
    read_options: str | ReadOptions | None = None
    given: FrozenDict[str, Any] = field(default_factory=freeze)  # bound by configured()

    def configured(self, values: Mapping[str, Any]) -> BackendSpec:
        """This spec with the option ``values`` bound (the backend's own names);
        :class:`BackendError` names an option it does not take, with a "did you mean"."""
        known = [option.name for option in self.options]
        for name in values:
            if name not in known:
                hint = did_you_mean(name, known)
                takes = f"its options: {', '.join(known)}" if known else "it takes none"
                raise BackendError(f"the {self.name!r} backend has no option {name!r} ({takes})"
                                   + (f"; {hint}" if hint else ""))
        return replace(self, given=freeze(dict(values)))

    def bound_options(self) -> Any:
        """What the backend takes of the bound values (``None`` when it takes no options)."""
        if self.read_options is None:
            return None
        return _resolve(self.read_options)(**self.given)

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
        """A new backend for one step, given the job scope's value (see the class docstring;
        a backend with options and no job scope is handed its bound options)."""
        self.require()
        factory = _resolve(self.factory)
        backend: Backend
        if self.job_scope is not None:
            backend = factory(scope)
        else:
            backend = (factory(self.bound_options()) if self.read_options is not None
                       else factory())
        return backend

    def scope(self, plan: ExecutionPlan, say: Say, cores: int) -> AbstractContextManager[Any]:
        """The job-wide context of this backend (a no-op without ``job_scope``), handed the
        bound options when the backend takes some."""
        if self.job_scope is None:
            return contextlib.nullcontext()
        job_scope: JobScope = _resolve(self.job_scope)
        if self.read_options is not None:
            return job_scope(plan, say, cores, self.bound_options())
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


__all__ = ["BackendChoice", "BackendOption", "BackendSpec", "JobScope", "ReadOptions", "Say"]
