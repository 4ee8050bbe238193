"""What mlpipe itself writes into an output place: never over a file the job did not write.

An output folder may hold the user's files (a declared path, ``--allow-external-outputs``).
mlpipe writes into it only beside them: a sweep's best trial is copied into its output
(:func:`copy_beside`), each file it writes noted first in the step's ledger
(``<step>/.mlpipe/written/<output>.json``), so a later attempt may replace what an earlier
one wrote and nothing else. A name that clashes with a file the job did not write is
refused with its name before anything is copied (:class:`OutputClashError`); links are
copied as links, never followed.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from mlpipe.errors import MlpipeError
from mlpipe.jobs.atomic_json import write_json_atomic
from mlpipe.plan import Step

LEDGER_FOLDER = "written"
_SHOWN = 5


class OutputClashError(MlpipeError, FileExistsError):
    """mlpipe would write over a file in an output place that the job did not write."""


def ledger_path(step: Step, output: str) -> Path:
    """The ledger of the files the job wrote into ``step``'s output ``output``."""
    return Path(step.state_dir) / LEDGER_FOLDER / f"{output}.json"


def read_ledger(path: Path) -> set[str]:
    """The paths (relative to the output) a ledger lists; an unreadable ledger lists none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    return {str(item) for item in data} if isinstance(data, list) else set()


def copy_beside(source: Path, target: Path, ledger: Path, what: str) -> list[str]:
    """Copy ``source`` (a folder's files, or a file) to ``target`` beside what is there; the
    names written, relative to ``target`` (``"."``: ``target`` is the file itself).

    Raises :class:`OutputClashError` naming the files of ``target`` the job did not write
    (not in ``ledger``) that the copy would replace, before anything is written; ``what``
    names the output in that message.
    """
    ours = read_ledger(ledger)
    names = list(_names(source)) if source.is_dir() else ["."] if source.exists() else []
    clashes = [name for name in names if name not in ours and _blocked(target, name)]
    if source.is_dir() and _occupied(target) and not target.is_dir():
        clashes = ["."]
    if clashes:
        shown = ", ".join(str(target / name) for name in clashes[:_SHOWN])
        more = f" and {len(clashes) - _SHOWN} more" if len(clashes) > _SHOWN else ""
        raise OutputClashError(
            f"{what}: {shown}{more} exists and was not written by this job; mlpipe never "
            "writes over a file it did not write: move it away, or give the output a path of "
            "its own")
    ledger.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(ledger, sorted(ours | set(names)))  # noted before written
    if not source.exists():
        target.mkdir(parents=True, exist_ok=True)
        return []
    if not source.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        _copy_file(source, target)
        return names
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        _copy_file(source / name, target / name)
    return names


def _names(root: Path) -> Iterator[str]:
    """Every file and link below ``root`` (links not followed), relative to it."""
    for folder, dirs, files in os.walk(root):
        base = Path(folder).relative_to(root)
        for name in files + [d for d in dirs if (Path(folder) / d).is_symlink()]:
            yield str(base / name) if str(base) != "." else name


def _occupied(path: Path) -> bool:
    return path.is_symlink() or path.exists()


def _blocked(target: Path, name: str) -> bool:
    """Whether writing ``target/name`` would replace something, or pass through a link or a
    file on the way (which would write elsewhere, or fail half-way)."""
    if _occupied(target / name):
        return True
    parts = Path(name).parts[:-1]
    return any((target / Path(*parts[:count])).is_symlink()
               or ((target / Path(*parts[:count])).exists()
                   and not (target / Path(*parts[:count])).is_dir())
               for count in range(1, len(parts) + 1))


def _copy_file(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        target.unlink()  # the job's own (the ledger says so)
    if source.is_symlink():
        os.symlink(os.readlink(source), target)
    else:
        shutil.copy2(source, target)


__all__ = ["OutputClashError", "copy_beside", "ledger_path", "read_ledger"]
