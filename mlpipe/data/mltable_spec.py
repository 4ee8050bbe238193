"""The ``MLTable`` YAML file: paths and transformations, checked, with line numbers.

``load_spec(path)`` reads an MLTable file (or a folder holding one) into an
immutable, picklable :class:`MLTableSpec`. Every problem is a :class:`DataError`
naming the MLTable file and the line of the offending key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from mlpipe.data.errors import DataError
from mlpipe.data.transforms import Transform, parse_transform
from mlpipe.diagnostics import did_you_mean
from mlpipe.limits import InputLimitError, check_file_size, check_yaml_text

MLTABLE_FILE = "MLTable"
REMOTE_PREFIXES = ("http://", "https://", "azureml:", "wasb://", "wasbs://", "abfs://",
                   "abfss://", "adl://", "gs://", "s3://")
TOP_KEYS = ("$schema", "type", "paths", "transformations", "traits", "metadata")
READ_TRANSFORMS = ("read_delimited", "read_parquet", "read_json_lines", "read_delta_lake")
ENCODINGS = {
    "utf8": "utf-8", "utf-8": "utf-8", "ascii": "utf-8", "utf8bom": "utf-8",
    "iso88591": "latin-1", "latin1": "latin-1", "windows1252": "cp1252",
    "utf16": "utf-16", "utf32": "utf-32",
}
HEADERS = ("no_header", "from_first_file", "all_files_different_headers", "all_files_same_headers")


@dataclass(frozen=True)
class PathEntry:
    """One ``paths`` entry: ``file``, ``folder`` or ``pattern`` (as written) and its line."""

    kind: str
    value: str
    line: int | None = None


@dataclass(frozen=True)
class ReadSpec:
    """The read_* transformation: how each file becomes rows."""

    format: str  # "delimited" | "parquet" | "json_lines"
    delimiter: str = ","
    encoding: str = "utf-8"  # a Python codec name
    header: str = "all_files_same_headers"
    empty_as_string: bool = False
    include_path_column: bool = False
    support_multi_line: bool = False
    infer_column_types: bool = True
    invalid_lines: str = "error"
    line: int | None = None

    @property
    def byte_splittable(self) -> bool:
        """Whether a file can be cut at newline bytes (ASCII-compatible encodings)."""
        return self.format != "parquet" and self.encoding not in ("utf-16", "utf-32")


@dataclass(frozen=True)
class MLTableSpec:
    """A loaded MLTable file."""

    file: str  # absolute path of the MLTable file
    paths: tuple[PathEntry, ...]
    read: ReadSpec | None = None
    transforms: tuple[Transform, ...] = ()

    @property
    def base_dir(self) -> str:
        return os.path.dirname(self.file)

    @property
    def is_tabular(self) -> bool:
        return self.read is not None


def find_mltable_file(path: str) -> str | None:
    """The MLTable file for an ``mltable`` input path (a folder or the file itself)."""
    if os.path.isdir(path):
        candidate = os.path.join(path, MLTABLE_FILE)
        return candidate if os.path.isfile(candidate) else None
    return path if os.path.isfile(path) else None


def _line(node: Any, key: Any) -> int | None:
    try:
        return int(node.lc.key(key)[0]) + 1
    except (AttributeError, KeyError, TypeError):
        return None


def _item_line(node: Any, index: int) -> int | None:
    try:
        return int(node.lc.item(index)[0]) + 1
    except (AttributeError, KeyError, TypeError, IndexError):
        return None


def load_spec(path: str) -> MLTableSpec:
    """Read and check the MLTable file at ``path`` (a folder holding ``MLTable`` or the file)."""
    path = os.path.abspath(path)
    file = find_mltable_file(path)
    if file is None:
        what = "folder has no MLTable file" if os.path.isdir(path) else "path does not exist"
        raise DataError(what, file=path, code="missing-path",
                        hint="an mltable input is a folder with an MLTable file; "
                             "use type uri_folder for a plain folder")
    try:
        check_file_size(file)
        with open(file, encoding="utf-8") as handle:
            text = handle.read()
        check_yaml_text(text)
        doc = YAML(typ="rt").load(text)
    except InputLimitError as exc:
        raise DataError(exc.message, file=file, line=exc.line, column=exc.column,
                        code="input-limit", hint=exc.hint) from exc
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DataError(f"malformed MLTable YAML: {getattr(exc, 'problem', None) or exc}",
                        file=file, line=mark.line + 1 if mark else None,
                        code="mltable-syntax") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read MLTable file: {exc}", file=file, code="unreadable") from exc
    except (ValueError, TypeError, OverflowError) as exc:  # a value its ``!!tag`` cannot read
        raise DataError(f"malformed MLTable YAML: {exc}", file=file,
                        code="mltable-syntax") from exc
    if not isinstance(doc, dict):
        raise DataError("an MLTable file must be a mapping with 'paths'", file=file,
                        code="mltable-syntax")
    for key in doc:
        if key not in TOP_KEYS:
            raise DataError(f"unknown MLTable key {key!r}", file=file, line=_line(doc, key),
                            key_path=str(key), code="unknown-key",
                            hint=did_you_mean(str(key), TOP_KEYS))
    paths = _parse_paths(doc, file)
    read, transforms = _parse_transformations(doc.get("transformations"), file,
                                              _line(doc, "transformations"))
    return MLTableSpec(file=file, paths=paths, read=read, transforms=transforms)


def _parse_paths(doc: Any, file: str) -> tuple[PathEntry, ...]:
    node = doc.get("paths")
    if not isinstance(node, list) or not node:
        raise DataError("'paths' must be a non-empty list of file:, folder: or pattern: entries",
                        file=file, line=_line(doc, "paths") if "paths" in doc else None,
                        key_path="paths", code="mltable-paths")
    entries = []
    for index, item in enumerate(node):
        line = _item_line(node, index)
        if not isinstance(item, dict) or len(item) != 1:
            raise DataError("each paths entry must have exactly one of file, folder, pattern",
                            file=file, line=line, key_path=f"paths[{index}]", code="mltable-paths")
        kind, value = next(iter(item.items()))
        if kind not in ("file", "folder", "pattern"):
            raise DataError(f"unknown paths entry {kind!r}", file=file, line=line,
                            key_path=f"paths[{index}]", code="mltable-paths",
                            hint=did_you_mean(str(kind), ("file", "folder", "pattern")))
        if not isinstance(value, str) or not value:
            raise DataError(f"paths[{index}].{kind} must be a path string", file=file, line=line,
                            key_path=f"paths[{index}].{kind}", code="mltable-paths")
        entries.append(PathEntry(kind, value, line))
    return tuple(entries)


def _parse_transformations(node: Any, file: str, line: int | None
                           ) -> tuple[ReadSpec | None, tuple[Transform, ...]]:
    if node is None:
        return None, ()
    if not isinstance(node, list):
        raise DataError("'transformations' must be a list", file=file, line=line,
                        key_path="transformations", code="mltable-transform")
    read: ReadSpec | None = None
    transforms: list[Transform] = []
    for index, item in enumerate(node):
        item_line = _item_line(node, index)
        key_path = f"transformations[{index}]"
        if isinstance(item, str):
            name, args = item, None
        elif isinstance(item, dict) and len(item) == 1:
            name, args = next(iter(item.items()))
        else:
            raise DataError("each transformation must be a single-key mapping", file=file,
                            line=item_line, key_path=key_path, code="mltable-transform")
        name = str(name)
        if name in READ_TRANSFORMS:
            if read is not None or transforms:
                raise DataError(f"{name} must be the first transformation and appear once",
                                file=file, line=item_line, key_path=key_path,
                                code="mltable-transform")
            read = _parse_read(name, args, file, item_line, f"{key_path}.{name}")
        else:
            transforms.append(parse_transform(name, args, file=file, line=item_line,
                                              key_path=f"{key_path}.{name}"))
    # a table of files (no read_*) takes only extract_columns_from_partition_format: its
    # columns come from each file's path (partition_keys over files)
    rows = [t for t in transforms if t.name != "extract_columns_from_partition_format"]
    if read is None and rows:
        raise DataError(
            f"transformation {rows[0].name!r} needs a read_delimited, read_parquet or "
            "read_json_lines transformation before it", file=file, line=line,
            key_path="transformations", code="mltable-transform")
    return read, tuple(transforms)


_READ_OPTIONS = {
    "read_delimited": ("delimiter", "encoding", "header", "empty_as_string", "include_path_column",
                       "support_multi_line", "infer_column_types", "path_column"),
    "read_parquet": ("include_path_column", "path_column"),
    "read_json_lines": ("encoding", "include_path_column", "invalid_lines", "path_column"),
}


def _parse_read(name: str, args: Any, file: str, line: int | None, key_path: str) -> ReadSpec:
    if name == "read_delta_lake":
        raise DataError("read_delta_lake is not supported by mlpipe (Delta Lake tables are out "
                        "of scope for local runs)", file=file, line=line, key_path=key_path,
                        code="unsupported-transform",
                        hint="export the table to parquet and use read_parquet")
    args = args or {}
    if not isinstance(args, dict):
        raise DataError(f"{name} takes a mapping of options", file=file, line=line,
                        key_path=key_path, code="mltable-transform")
    allowed = _READ_OPTIONS[name]
    for key in args:
        if key not in allowed:
            raise DataError(f"unknown {name} option {key!r}", file=file,
                            line=_line(args, key) or line, key_path=f"{key_path}.{key}",
                            code="unknown-key", hint=did_you_mean(str(key), allowed))

    def flag(key: str, default: bool) -> bool:
        value = args.get(key, default)
        if not isinstance(value, bool):
            raise DataError(f"{key} must be true or false, got {value!r}", file=file,
                            line=_line(args, key) or line, key_path=f"{key_path}.{key}",
                            code="type")
        return value

    encoding_name = str(args.get("encoding", "utf8")).lower()
    if encoding_name not in ENCODINGS:
        raise DataError(f"unknown encoding {encoding_name!r}", file=file,
                        line=_line(args, "encoding") or line, key_path=f"{key_path}.encoding",
                        code="mltable-transform", hint=did_you_mean(encoding_name, ENCODINGS))
    header = str(args.get("header", "all_files_same_headers"))
    if header not in HEADERS:
        raise DataError(f"unknown header mode {header!r}; expected one of {', '.join(HEADERS)}",
                        file=file, line=_line(args, "header") or line,
                        key_path=f"{key_path}.header", code="mltable-transform",
                        hint=did_you_mean(header, HEADERS))
    delimiter = str(args.get("delimiter", ","))
    if name == "read_delimited" and len(delimiter) != 1:
        raise DataError(f"delimiter must be one character, got {delimiter!r}", file=file,
                        line=_line(args, "delimiter") or line, key_path=f"{key_path}.delimiter",
                        code="mltable-transform")
    invalid_lines = str(args.get("invalid_lines", "error"))
    if invalid_lines not in ("error", "drop"):
        raise DataError(f"invalid_lines must be 'error' or 'drop', got {invalid_lines!r}",
                        file=file, line=_line(args, "invalid_lines") or line,
                        key_path=f"{key_path}.invalid_lines", code="mltable-transform")
    return ReadSpec(
        format={"read_delimited": "delimited", "read_parquet": "parquet",
                "read_json_lines": "json_lines"}[name],
        delimiter=delimiter,
        encoding=ENCODINGS[encoding_name],
        header=header,
        empty_as_string=flag("empty_as_string", False),
        include_path_column=flag("include_path_column", False),
        support_multi_line=flag("support_multi_line", False),
        infer_column_types=flag("infer_column_types", True),
        invalid_lines=invalid_lines,
        line=line,
    )
