"""Snapshots of a step's code folder: a run uses the copy, never the live folder."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

IGNORED = shutil.ignore_patterns(
    ".git", "__pycache__", "*.pyc", ".venv", "venv", ".mypy_cache", ".pytest_cache", "mlpipe-runs"
)


def snapshot_code(source: str | Path | None, dest: str | Path) -> Path:
    """Copy ``source`` (a folder, a single file, or ``None`` for no code) to ``dest`` and return
    ``dest``: a file becomes a folder holding only that file, as Azure ML uploads it.

    An existing snapshot is replaced, so a re-run always sees the code as it is now.
    Version-control folders, caches and virtual environments are left out, and so is the
    folder that holds ``dest`` when it lies inside ``source`` (a runs folder inside the code
    folder, as with v1's ``source_directory="."``).
    """
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    if source is None:
        dest.mkdir(parents=True)
        return dest
    if Path(source).is_file():
        dest.mkdir(parents=True)
        shutil.copy2(source, dest / Path(source).name)
        return dest
    shutil.copytree(source, dest, ignore=_ignoring(dest), symlinks=True)
    return dest


def _ignoring(dest: Path) -> Callable[[str, list[str]], set[str]]:
    target = dest.resolve()

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = set(IGNORED(folder, names))
        for name in names:
            path = (Path(folder) / name).resolve()
            if path == target or path in target.parents:
                skipped.add(name)
        return skipped

    return ignore
