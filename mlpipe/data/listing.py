"""Streamed, recursive, stable file listing (the file-input side of the data layer).

Each folder is read with one ``os.scandir`` pass and its names are sorted, then
walked depth-first: files and sub-folders in name order, a sub-folder's files
where the sub-folder's name falls. Only one folder's names are held at a time per
level, so the first files come out long before a large tree is fully listed.
Names beginning with ``.`` (hidden files and folders) are skipped, as Azure's
mounted inputs do; so is an ``MLTable`` file at the top of the listed folder.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

from mlpipe.data.errors import DataError

MLTABLE_FILE = "MLTable"


def _sorted_names(folder: str) -> tuple[list[str], set[str]]:
    names: list[str] = []
    dirs: set[str] = set()
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if name[0] == ".":
                    continue
                names.append(name)
                try:
                    if entry.is_dir():
                        dirs.add(name)
                except OSError:
                    pass
    except PermissionError as exc:
        raise DataError(f"cannot read folder: {exc.strerror}", file=folder, code="unreadable") from exc
    names.sort()
    return names, dirs


def iter_files(root: str, *, skip_mltable: bool = True) -> Iterator[tuple[str, int]]:
    """Yield ``(absolute path, size in bytes)`` of every regular file below ``root``.

    The order is stable: depth-first, names sorted (code-point order) in each folder.
    """
    root = os.path.abspath(root)
    if not os.path.isdir(root):
        raise DataError("folder does not exist", file=root, code="missing-path")
    seen: set[tuple[int, int]] = set()
    root_stat = os.stat(root)
    seen.add((root_stat.st_dev, root_stat.st_ino))
    names, dirs = _sorted_names(root)
    if skip_mltable and MLTABLE_FILE in names and MLTABLE_FILE not in dirs:
        names.remove(MLTABLE_FILE)
    stack: list[tuple[str, Iterator[str], set[str]]] = [(root, iter(names), dirs)]
    del names
    while stack:
        folder, names_iter, dirs = stack[-1]
        for name in names_iter:
            path = os.path.join(folder, name)
            if name in dirs:
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                key = (st.st_dev, st.st_ino)
                if key in seen:  # a symlink loop
                    continue
                seen.add(key)
                sub_names, sub_dirs = _sorted_names(path)
                stack.append((path, iter(sub_names), sub_dirs))
                break
            try:
                st = os.stat(path)
            except OSError:  # vanished or dangling link
                continue
            if stat.S_ISREG(st.st_mode):
                yield path, st.st_size
        else:
            stack.pop()
