"""The files an input stands for: a ``uri_folder``, a ``uri_file`` or an MLTable's ``paths``."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator

from mlpipe.data.errors import DataError
from mlpipe.data.listing import iter_files
from mlpipe.data.mltable_spec import REMOTE_PREFIXES, MLTableSpec, PathEntry
from mlpipe.runs import is_runs_dir


def _local_path(entry: PathEntry, spec: MLTableSpec) -> str:
    value = entry.value
    if value.startswith("file://"):
        value = value[len("file://"):]
    if value.lower().startswith(REMOTE_PREFIXES):
        raise DataError(f"remote path {value!r} is not available offline", file=spec.file,
                        line=entry.line, key_path=f"paths.{entry.kind}", code="remote-asset",
                        hint="download the data and point the MLTable at a local path")
    return os.path.normpath(os.path.join(spec.base_dir, value))


def iter_mltable_files(spec: MLTableSpec, *, tabular: bool) -> Iterator[tuple[str, int]]:
    """``(absolute path, size)`` for each item of the MLTable's ``paths``, in order.

    ``file:`` is one item even when it names a folder (the folder itself, as
    mltable does) for file inputs; a tabular read of a folder is an error.
    ``folder:`` is every file below the folder; ``pattern:`` is a glob relative to
    the MLTable folder (``**`` matches any depth), sorted.
    """
    for entry in spec.paths:
        path = _local_path(entry, spec)
        if entry.kind == "file":
            if not os.path.exists(path):
                raise DataError(f"paths: file {entry.value!r} does not exist ({path})",
                                file=spec.file, line=entry.line, code="missing-path")
            if os.path.isdir(path):
                if tabular:
                    raise DataError(f"paths: file {entry.value!r} is a folder; a table cannot "
                                    "be read from it", file=spec.file, line=entry.line,
                                    code="missing-path", hint="use 'folder:' or 'pattern:'")
                yield path, 0
            else:
                yield path, os.path.getsize(path)
        elif entry.kind == "folder":
            if not os.path.isdir(path):
                raise DataError(f"paths: folder {entry.value!r} does not exist ({path})",
                                file=spec.file, line=entry.line, code="missing-path")
            yield from iter_files(path, skip_mltable=os.path.samefile(path, spec.base_dir))
        else:
            matches = sorted(m for m in glob.iglob(path, recursive=True)
                             if os.path.isfile(m) and os.path.abspath(m) != spec.file
                             and not _in_runs_dir(m, spec.base_dir))
            for match in matches:
                yield os.path.abspath(match), os.path.getsize(match)


def _in_runs_dir(path: str, base: str) -> bool:
    """Whether ``path`` lies in a runs folder below ``base`` (never read as data)."""
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.abspath(base)
    while folder.startswith(base + os.sep):
        if is_runs_dir(folder):
            return True
        folder = os.path.dirname(folder)
    return False
