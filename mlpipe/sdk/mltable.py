"""``mlpipe.sdk.mltable``: mirror of Azure's ``mltable`` package, for entry scripts.

Published command and parallel entry scripts read their MLTable inputs with
``mltable.load(path).to_pandas_dataframe()`` (or only ``import mltable``). Where the real
package is not installed, the import hook (:mod:`mlpipe.import_mirrors`) resolves ``mltable``
here: :func:`load` reads a local MLTable file or folder with mlpipe's own reader (the
transformations the runner applies, so a step reads the same rows as its parallel
mini-batches); :func:`from_delimited_files`, :func:`from_parquet_files`,
:func:`from_json_lines_files` and :func:`from_paths` build one from local files, and
:meth:`MLTable.save` writes it. A remote path is :class:`NotAvailableLocally`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mlpipe.data.mltable_spec import MLTABLE_FILE, REMOTE_PREFIXES
from mlpipe.schema.yamlio import load_yaml_file
from mlpipe.sdk.yamlio import dump_text
from mlpipe.unavailable import NotAvailableLocally

_REMOTE_HINT = ("Map the data to a local folder (an input of the step, or an `mlpipe.toml` "
                "[assets] stand-in) and load that path.")


class MLTable:
    """An MLTable: ``paths`` and ``transformations`` (the YAML document), with the folder
    its relative paths are read from."""

    def __init__(self, document: Mapping[str, Any], base: str | os.PathLike[str],
                 file: Path | None = None) -> None:
        self._document = dict(document)
        self._base = Path(base).resolve()
        self._file = file  # the MLTable file it was loaded from, while unchanged

    @property
    def paths(self) -> list[dict[str, str]]:
        """The ``paths`` entries, as written."""
        return [dict(p) for p in self._document.get("paths") or []]

    def _with(self, transformation: dict[str, Any]) -> MLTable:
        document = dict(self._document)
        document["transformations"] = [*(document.get("transformations") or []), transformation]
        return MLTable(document, self._base)

    def take(self, count: int = 20) -> MLTable:
        """The first ``count`` rows."""
        return self._with({"take": count})

    def skip(self, count: int) -> MLTable:
        """All but the first ``count`` rows."""
        return self._with({"skip": count})

    def keep_columns(self, columns: str | Iterable[str]) -> MLTable:
        """Only ``columns``."""
        return self._with({"keep_columns": [columns] if isinstance(columns, str) else
                           list(columns)})

    def drop_columns(self, columns: str | Iterable[str]) -> MLTable:
        """All columns but ``columns``."""
        return self._with({"drop_columns": [columns] if isinstance(columns, str) else
                           list(columns)})

    def save(self, path: str | os.PathLike[str] | None = None, overwrite: bool = True,
             colocated: bool = False, show_progress: bool = False,
             if_err_remove_files: bool = True) -> MLTable:
        """Write the ``MLTable`` file into folder ``path`` (its paths made relative to it where
        they can be) and return the table read from there."""
        folder = Path(path if path is not None else self._base).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / MLTABLE_FILE
        if target.exists() and not overwrite:
            raise FileExistsError(f"{target} exists (pass overwrite=True)")
        document = dict(self._document)
        document["paths"] = [self._rebased(entry, folder) for entry in self.paths]
        target.write_text(dump_text(document), encoding="utf-8")
        return MLTable(document, folder)

    def _rebased(self, entry: dict[str, str], folder: Path) -> dict[str, str]:
        (kind, value), = entry.items()
        if value.startswith(REMOTE_PREFIXES) or kind == "pattern":
            return entry
        where = (self._base / value.removeprefix("file://")).resolve()
        try:
            return {kind: "./" + where.relative_to(folder).as_posix()}
        except ValueError:
            return {kind: str(where)}

    def to_pandas_dataframe(self) -> Any:
        """The whole table, its transformations applied (a ``Path`` column, one row per file,
        when it reads no files' contents)."""
        from mlpipe.data import read_mltable

        if self._file is not None:
            return read_mltable(str(self._file))
        with tempfile.TemporaryDirectory(prefix="mltable-") as folder:
            document = dict(self._document)
            document["paths"] = [self._rebased(entry, Path(folder)) for entry in self.paths]
            (Path(folder) / MLTABLE_FILE).write_text(dump_text(document), encoding="utf-8")
            return read_mltable(folder)

    def __repr__(self) -> str:
        return dump_text(self._document)


def load(uri: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None,
         ml_client: Any = None) -> MLTable:
    """The MLTable in local folder (or file) ``uri``."""
    text = os.fspath(uri)
    if text.startswith(REMOTE_PREFIXES):
        raise NotAvailableLocally(f"mltable.load({text!r})", _REMOTE_HINT)
    path = Path(text.removeprefix("file://")).resolve()
    file = path if path.is_file() else path / MLTABLE_FILE
    if not file.is_file():
        raise FileNotFoundError(f"mltable.load: no MLTable file at {file}")
    loaded = load_yaml_file(file)
    if loaded.data is None:
        problems = "; ".join(d.format() for d in loaded.diagnostics) or "not a mapping"
        raise ValueError(f"mltable.load: {file} is not an MLTable: {problems}")
    return MLTable(loaded.data, file.parent, file)


def _paths(paths: Iterable[Mapping[str, str]] | Mapping[str, str]) -> list[dict[str, str]]:
    entries = [paths] if isinstance(paths, Mapping) else list(paths)
    out = []
    for entry in entries:
        (kind, value), = dict(entry).items()
        if str(value).startswith(REMOTE_PREFIXES):
            raise NotAvailableLocally(f"mltable from {value!r}", _REMOTE_HINT)
        out.append({str(kind): os.fspath(value)})
    return out


def _read(transformation: str, arguments: dict[str, Any],
          paths: Iterable[Mapping[str, str]] | Mapping[str, str]) -> MLTable:
    document = {"paths": _paths(paths),
                "transformations": [{transformation: arguments}] if transformation else []}
    return MLTable(document, Path.cwd())


def from_delimited_files(paths: Iterable[Mapping[str, str]], header: str = "all_files_same_headers",
                         delimiter: str = ",", support_multi_line: bool = False,
                         empty_as_string: bool = False, encoding: str = "utf8",
                         include_path_column: bool = False, infer_column_types: bool = True
                         ) -> MLTable:
    """An MLTable reading delimited text files (``paths``: ``[{"file": ...}, {"folder": ...},
    {"pattern": ...}]``)."""
    return _read("read_delimited", {
        "header": header, "delimiter": delimiter, "support_multi_line": support_multi_line,
        "empty_as_string": empty_as_string, "encoding": encoding,
        "include_path_column": include_path_column}, paths)


def from_parquet_files(paths: Iterable[Mapping[str, str]], include_path_column: bool = False
                       ) -> MLTable:
    """An MLTable reading parquet files."""
    return _read("read_parquet", {"include_path_column": include_path_column}, paths)


def from_json_lines_files(paths: Iterable[Mapping[str, str]], invalid_lines: str = "error",
                          encoding: str = "utf8", include_path_column: bool = False) -> MLTable:
    """An MLTable reading JSON lines files."""
    return _read("read_json_lines", {"invalid_lines": invalid_lines, "encoding": encoding,
                                     "include_path_column": include_path_column}, paths)


def from_paths(paths: Iterable[Mapping[str, str]]) -> MLTable:
    """An MLTable of files, read as paths (one ``Path`` row per file)."""
    return _read("", {}, paths)


__all__ = ["MLTable", "from_delimited_files", "from_json_lines_files", "from_parquet_files",
           "from_paths", "load"]
