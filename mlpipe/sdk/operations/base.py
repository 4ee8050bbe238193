"""What every local operation group shares: the client's runs folder and the clear refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mlpipe.unavailable import NotAvailableLocally, Unavailable


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
