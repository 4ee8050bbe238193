"""What cannot run on this machine: :class:`NotAvailableLocally` (one line naming the call
and what to do) and :class:`Unavailable`, the stand-in for a name that raises it when used.

Of the lowest layer (it imports :mod:`mlpipe.errors` alone): the import mirrors
(:mod:`mlpipe.import_mirrors`) make azureml's cloud-only packages of it, and the SDK's
mirrors (``mlpipe.entities``, ``mlpipe.sweep``, ``mlpipe.automl``, the operations) their
workspace-only names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlpipe.errors import MlpipeError


class NotAvailableLocally(MlpipeError, RuntimeError):
    """A call that needs an Azure ML workspace; the message names it and what to do."""

    def __init__(self, call: str, hint: str | None = None) -> None:
        self.call = call
        message = (f"{call} needs an Azure ML workspace; mlpipe runs pipelines on this machine "
                   f"and has no local equivalent. "
                   + (hint or "Remove the call for local runs, or run the script with azure-ai-ml "
                      "against a workspace."))
        super().__init__(message)


class Unavailable:
    """Stands for a name the local client does not have: using it (calling it, or calling
    anything reached through it) raises :class:`NotAvailableLocally` naming the call."""

    def __init__(self, path: str, hint: str | None = None) -> None:
        self._path = path
        self._hint = hint  # what to do instead (NotAvailableLocally's default when None)

    def __getattr__(self, name: str) -> Unavailable:
        if name.startswith("__"):
            raise AttributeError(name)
        return Unavailable(f"{self._path}.{name}", self._hint)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotAvailableLocally(f"{self._path}()", self._hint)

    def __iter__(self) -> Any:
        raise NotAvailableLocally(self._path, self._hint)

    def __repr__(self) -> str:
        return f"<{self._path}: not available locally>"


def unavailable_module(module: str, hint: str) -> Callable[[str], Unavailable]:
    """The module ``__getattr__`` of a mirror whose every public name is :class:`Unavailable`
    (``azure.ai.ml.sweep``, ``azure.ai.ml.automl``): it imports as written and stops at the
    first use."""

    def __getattr__(name: str) -> Unavailable:
        if name.startswith("_"):
            raise AttributeError(name)
        return Unavailable(f"{module}.{name}", hint)

    return __getattr__


__all__ = ["NotAvailableLocally", "Unavailable", "unavailable_module"]
