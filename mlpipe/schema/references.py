"""What a ``component:`` (or ``code:``/``path:``) string refers to."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

RefKind = Literal["file", "registry", "workspace", "url"]


@dataclass(frozen=True)
class Reference:
    """A classified reference: ``kind`` and, for ``file``, the path as written (no ``file:``)."""

    text: str
    kind: RefKind
    path: str | None = None

    @property
    def is_remote(self) -> bool:
        return self.kind != "file"

    def resolve(self, base_dir: str | Path) -> Path | None:
        """Absolute path of a ``file`` reference relative to ``base_dir`` (None if remote)."""
        if self.path is None:
            return None
        return (Path(base_dir) / self.path).resolve()


def classify_reference(text: str) -> Reference:
    """``./c.yml``/``file:./c.yml`` -> file; ``azureml://registries/...`` -> registry;
    ``azureml:name:1``, ``azureml:name@latest``, ``azureml://...`` -> workspace;
    ``https://`` -> url."""
    stripped = text.strip()
    lower = stripped.lower()
    if lower.startswith("file:"):
        return Reference(text, "file", stripped[5:])
    if lower.startswith("azureml://registries/"):
        return Reference(text, "registry")
    if lower.startswith("azureml:"):
        return Reference(text, "workspace")
    if "://" in lower:
        return Reference(text, "url")
    return Reference(text, "file", stripped)
