"""Snapshots of a step's code folder: a run uses the copy, never the live folder."""

from __future__ import annotations

import shutil
from pathlib import Path

IGNORED = shutil.ignore_patterns(
    ".git", "__pycache__", "*.pyc", ".venv", "venv", ".mypy_cache", ".pytest_cache", "mlpipe-runs"
)


def snapshot_code(source: str | Path | None, dest: str | Path) -> Path:
    """Copy ``source`` (a folder, or ``None`` for no code) to ``dest`` and return ``dest``.

    An existing snapshot is replaced, so a re-run always sees the code as it is now.
    Version-control folders, caches and virtual environments are left out.
    """
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    if source is None:
        dest.mkdir(parents=True)
        return dest
    shutil.copytree(source, dest, ignore=IGNORED, symlinks=True)
    return dest
