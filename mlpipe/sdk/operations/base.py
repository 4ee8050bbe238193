"""What every local operation group shares: the client's runs folder and the clear refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class NotAvailableLocally(RuntimeError):
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

    def __init__(self, path: str) -> None:
        self._path = path

    def __getattr__(self, name: str) -> Unavailable:
        if name.startswith("__"):
            raise AttributeError(name)
        return Unavailable(f"{self._path}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotAvailableLocally(f"{self._path}()")

    def __iter__(self) -> Any:
        raise NotAvailableLocally(self._path)

    def __repr__(self) -> str:
        return f"<{self._path}: not available locally>"


class Operations:
    """Base of the operation groups: ``ml_client.<group>``; unknown methods are
    :class:`Unavailable` (never ``AttributeError``)."""

    _group = "operations"

    def __init__(self, runs_dir: str | Path | None = None, base_dir: Path | None = None) -> None:
        self._runs_dir = runs_dir
        self._base_dir = base_dir

    @property
    def base_dir(self) -> Path:
        """The folder relative asset paths are taken from (the working directory by default)."""
        return self._base_dir or Path.cwd()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return Unavailable(f"ml_client.{self._group}.{name}")


__all__ = ["NotAvailableLocally", "Operations", "Unavailable"]
