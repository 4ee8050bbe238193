"""Streamed, recursive, stable file listing (the file-input side of the data layer).

Folders are walked depth-first with ``os.scandir``. A folder of up to
:data:`SORT_LIMIT` entries is read whole and its names sorted (code-point
order), a sub-folder's files coming where its name sorts. A larger folder is
listed in the file system's directory order instead, while it is being read:
that order is stable for an unchanged folder (so mini-batch ids stay stable for
resume) and the first files come out at once, where sorting would first have
to read every name (seconds for a million files). Names beginning with ``.``
(hidden files and folders) are skipped, as Azure's mounted inputs do; so is an
``MLTable`` file at the top of the listed folder, and any runs folder below it
(:func:`mlpipe.runs.is_runs_dir`: an input ``path: .`` holding ``./mlpipe-runs`` never reads
the jobs' records and logs as data).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

from mlpipe.data.errors import DataError
from mlpipe.runs import is_runs_dir

MLTABLE_FILE = "MLTable"
SORT_LIMIT = 100_000  # entries per folder; larger folders stream in directory order


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


# name, is a folder, the entry when kept, is a regular file (not a link: known without stat;
# only looked at when sizes are not wanted)
Entry = tuple[str, bool, "os.DirEntry[str] | None", bool]


def _is_regular(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _entries(folder: str, sort_limit: int, regular: bool) -> Iterator[Entry]:
    """A folder's visible entries: sorted by name, or streamed when the folder is large.

    Buffered entries keep only their name (a DirEntry costs ~10x the memory);
    streamed ones keep their DirEntry (its path and stat come cheaper).
    """
    try:
        scan = os.scandir(folder)
    except PermissionError as exc:
        raise DataError(f"cannot read folder: {exc.strerror}", file=folder,
                        code="unreadable") from exc
    try:
        buffered: list[Entry] = []
        for entry in scan:
            if entry.name[0] != ".":
                buffered.append((entry.name, _is_dir(entry), None,
                                 regular and _is_regular(entry)))
                if len(buffered) >= sort_limit:
                    break
        else:
            scan.close()
            buffered.sort(key=_name)
            yield from buffered
            return
        yield from buffered
        del buffered
        for entry in scan:
            if entry.name[0] != ".":
                yield entry.name, _is_dir(entry), entry, regular and _is_regular(entry)
    finally:
        scan.close()


def _name(entry: Entry) -> str:
    return entry[0]


def iter_files(root: str, *, skip_mltable: bool = True, sort_limit: int = SORT_LIMIT,
               sizes: bool = True) -> Iterator[tuple[str, int]]:
    """Yield ``(absolute path, size in bytes)`` of every regular file below ``root``.

    The order is stable: depth-first, names sorted in each folder of up to
    ``sort_limit`` entries, directory order in larger ones. ``sizes=False`` gives 0 as
    the size and spares the ``stat`` of each file the folder listing already says is a
    regular file (counting).
    """
    root = os.path.abspath(root)
    if not os.path.isdir(root):
        raise DataError("folder does not exist", file=root, code="missing-path")
    root_stat = os.stat(root)
    seen = {(root_stat.st_dev, root_stat.st_ino)}
    stack: list[tuple[str, Iterator[Entry]]] = [(root, _entries(root, sort_limit, not sizes))]
    while stack:
        folder, entries = stack[-1]
        prefix = os.path.join(folder, "")  # folder + "/", once per folder
        for name, is_dir, entry, regular in entries:
            path = entry.path if entry is not None else prefix + name
            if regular:  # only asked for when sizes are not
                if not (skip_mltable and folder == root and name == MLTABLE_FILE):
                    yield path, 0
                continue
            try:
                st = entry.stat() if entry is not None else os.stat(path)
            except OSError:  # vanished or dangling link
                continue
            if is_dir:
                if (st.st_dev, st.st_ino) in seen or is_runs_dir(path):  # a loop, or runs
                    continue
                seen.add((st.st_dev, st.st_ino))
                stack.append((path, _entries(path, sort_limit, not sizes)))
                break
            if skip_mltable and folder == root and name == MLTABLE_FILE:
                continue
            if stat.S_ISREG(st.st_mode):
                yield path, st.st_size
        else:
            stack.pop()
