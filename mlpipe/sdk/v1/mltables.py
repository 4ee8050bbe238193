"""MLTable folders the v1 datasets read: CSV files as a table, a table written by partition.

Both are written under the runs folder (``<runs-dir>/datasets``) or the target folder
given, so the v2 step reads them as any ``type: mltable`` input.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from mlpipe.compiler.assets import stand_in
from mlpipe.runs import resolve_runs_dir
from mlpipe.sdk.v1.datastores import local_text

_HEADERS = {"true": "all_files_same_headers", "all_files_have_same_headers":
            "all_files_same_headers", "false": "no_header", "no_headers": "no_header",
            "from_first_file": "from_first_file", "only_first_file_has_headers":
            "from_first_file", "combine_all_files_headers": "all_files_different_headers"}


def is_glob(path: str) -> bool:
    """Whether ``path`` is a glob (``*``, ``?`` or ``[``), an MLTable ``pattern:``."""
    return any(c in path for c in "*?[")


def _paths_entry(path: str, folder: bool = False) -> str:
    """One item of an MLTable's ``paths:`` for an absolute ``path``: ``pattern:`` for a glob,
    ``folder:`` for a folder (or ``folder``), else ``file:``."""
    kind = ("pattern" if is_glob(path) else
            "folder" if folder or Path(path).is_dir() else "file")
    return f"  - {kind}: {path!r}\n"


def write_mltable(text: str, prefix: str) -> Path:
    """An MLTable folder ``<runs-dir>/datasets/<prefix>_<digest>`` holding ``text``."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    folder = resolve_runs_dir() / "datasets" / f"{prefix}_{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MLTable").write_text(text, encoding="utf-8")
    return folder


def _paths(path: Any, base: Path) -> str:
    """An MLTable's ``paths:`` for ``path`` (a file, a folder, a glob, a ``DataPath`` or a list
    of them), relative to ``base``."""
    items = path if isinstance(path, list) else [path]
    entries = []
    for item in items:
        text = local_text(item)
        url = stand_in(text, base) if "://" in text else None  # mlpipe.toml's stand-in
        local = url or (Path(text) if Path(text).is_absolute() else base / text)
        entries.append(_paths_entry(str(local.resolve()), folder=text.endswith("/")))
    return "paths:\n" + "".join(entries)


def delimited_mltable(path: Any, base: Path, separator: str = ",", header: Any = True) -> Path:
    """An MLTable folder under ``<runs-dir>/datasets`` reading the CSV files at ``path`` (a
    file, a folder, a glob, a ``DataPath`` or a list of them), relative to ``base``."""
    name = getattr(header, "name", header)
    header_value = _HEADERS.get(str(name).lower(), "all_files_same_headers")
    text = (_paths(path, base) + "transformations:\n  - read_delimited:\n"
            f"      delimiter: {separator!r}\n      header: {header_value}\n")
    return write_mltable(text, "delimited")


def parquet_mltable(path: Any, base: Path) -> Path:
    """An MLTable folder under ``<runs-dir>/datasets`` reading the Parquet files at ``path`` (as
    :func:`delimited_mltable` takes it)."""
    return write_mltable(_paths(path, base) + "transformations:\n  - read_parquet: {}\n",
                         "parquet")


def folder_table_mltable(folder: str, reader: str, separator: str = ",",
                         header: str = "all_files_same_headers") -> Path:
    """An MLTable folder under ``<runs-dir>/datasets`` reading every file below ``folder`` as
    one table: ``parquet`` files, or ``delimited`` ones (a step output read as a table)."""
    root = Path(folder).resolve()
    if reader == "parquet":
        text = (f"paths:\n  - pattern: {str(root / '**' / '*.parquet')!r}\n"
                "transformations:\n  - read_parquet: {}\n")
    else:
        text = (f"paths:\n  - pattern: {str(root / '**' / '*')!r}\n"
                "transformations:\n  - read_delimited:\n"
                f"      delimiter: {separator!r}\n      header: {header}\n")
    return write_mltable(text, f"{reader}_table")


def files_mltable(path: str, partition_format: str | None) -> Path:
    """An MLTable folder under ``<runs-dir>/datasets`` listing the files at ``path`` (a glob,
    a folder or a file; absolute), with ``partition_format``'s keys as columns when given."""
    text = "paths:\n" + _paths_entry(path)
    if partition_format:
        text += ("transformations:\n  - extract_columns_from_partition_format:\n"
                 f"      partition_format: {partition_format!r}\n")
    return write_mltable(text, "files")


def frame_mltable(frame: Any, prefix: str) -> Path:
    """An MLTable folder under ``<runs-dir>/datasets`` holding ``frame`` as ``data.csv`` (a
    table derived in code: ``random_split``, ``take``, ``keep_columns``, ...)."""
    text = frame.to_csv(index=False)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    folder = resolve_runs_dir() / "datasets" / f"{prefix}_{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.csv").write_text(text, encoding="utf-8")
    (folder / "MLTable").write_text("paths:\n  - file: ./data.csv\ntransformations:\n"
                                    "  - read_delimited:\n      delimiter: ','\n"
                                    "      header: all_files_same_headers\n", encoding="utf-8")
    return folder


def partitioned_mltable(frame: Any, keys: list[str], target: Path) -> Path:
    """v1 ``partition_by``: ``frame`` written as ``target/<key1>/<key2>/part.csv`` files (the key
    columns in the path) and an MLTable reading them back with the keys as columns."""
    for values, group in frame.groupby(keys, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        folder = target.joinpath(*[str(v) for v in values])
        folder.mkdir(parents=True, exist_ok=True)
        group.drop(columns=keys).to_csv(folder / "part.csv", index=False)
    fmt = "".join("{%s}/" % k for k in keys) + "part.csv"
    text = (f"paths:\n  - pattern: {str(target.resolve() / '**' / 'part.csv')!r}\n"
            "transformations:\n  - read_delimited:\n      delimiter: ','\n"
            "      header: all_files_same_headers\n"
            f"  - extract_columns_from_partition_format:\n      partition_format: {fmt!r}\n")
    (target / "MLTable").write_text(text, encoding="utf-8")
    return target


__all__ = ["delimited_mltable", "files_mltable", "folder_table_mltable", "frame_mltable", "is_glob",
           "parquet_mltable", "partitioned_mltable", "write_mltable"]
