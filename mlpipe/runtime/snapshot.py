"""Snapshots of a step's code folder: a run uses the copy, never the live folder."""

from __future__ import annotations

import os
import shutil
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

from mlpipe.plan import CodeInclude

IGNORED = shutil.ignore_patterns(
    ".git", "__pycache__", "*.pyc", ".venv", "venv", ".mypy_cache", ".pytest_cache", "mlpipe-runs"
)


def snapshot_code(source: str | Path | None, dest: str | Path,
                  includes: Sequence[CodeInclude] = ()) -> Path:
    """Copy ``source`` (a folder, a single file, or ``None`` for no code) to ``dest`` and return
    ``dest``: a file becomes a folder holding only that file, as Azure ML uploads it.

    ``includes`` are a component's ``additional_includes``, added as azure-ai-ml adds them to
    the code it uploads: a file or folder under its own name at the top of the snapshot
    (folders of the same name merge), or a folder zipped as ``<name>.zip``.

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
    elif Path(source).is_file():
        dest.mkdir(parents=True)
        shutil.copy2(source, dest / Path(source).name)
    else:
        shutil.copytree(source, dest, ignore=_ignoring(dest), symlinks=True)
    for include in includes:
        _add_include(include, dest)
    return dest


def _add_include(entry: CodeInclude, dest: Path) -> None:
    include = Path(entry.path)
    if entry.zipped:
        _zip_folder(include, dest / entry.name, _ignoring(dest))
    elif include.is_dir():
        shutil.copytree(include, dest / include.name, ignore=_ignoring(dest), symlinks=True,
                        dirs_exist_ok=True)
    elif include.is_file():
        shutil.copy2(include, dest / include.name)
    else:  # the compiler refuses a missing include; it went away since
        raise FileNotFoundError(f"additional include {include} not found")


def _zip_folder(folder: Path, target: Path, ignore: Callable[[str, list[str]], set[str]]) -> None:
    """``folder`` zipped as azure-ai-ml zips it: entries under ``<folder name>/``, the folder's
    own entry first, then its files in sorted order (the same bytes for the same tree)."""
    files: list[Path] = []
    for here, dirs, names in os.walk(folder):
        skipped = ignore(here, dirs + names)
        dirs[:] = sorted(d for d in dirs if d not in skipped)
        files += [Path(here, n) for n in names if n not in skipped]
    with zipfile.ZipFile(target, "w") as archive:
        archive.write(folder, folder.name)
        for path in sorted(files, key=str):
            archive.write(path, os.path.relpath(path, folder.parent))


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
