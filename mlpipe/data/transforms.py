"""MLTable transformations after the read_*: checked once when the MLTable file is loaded.

Applying them to DataFrames (in the workers) is :mod:`mlpipe.data.transform_apply`.

Row-local transformations (drop_columns, keep_columns, filter, convert_column_types,
extract_columns_from_partition_format) work on any piece of the table. The
row-position ones (take, skip, take_random_sample) are defined on the whole table:
each piece carries the table-wide row number of its first row (computed by the
driver by counting records, never by parsing), so every piece keeps exactly the
rows the whole table would. take_random_sample keeps a row when a hash of
(seed, table row number) falls below the probability, so the sample does not
depend on how the table is divided.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from mlpipe.data.errors import DataError
from mlpipe.data.filter_expr import FilterSyntaxError, check_expression
from mlpipe.diagnostics import did_you_mean

TRANSFORMS = ("take", "skip", "take_random_sample", "drop_columns", "keep_columns", "filter",
              "convert_column_types", "extract_columns_from_partition_format")
COLUMN_TYPES = ("int", "float", "string", "boolean", "datetime")
DEFAULT_SAMPLE_SEED = 0
SOURCE_COLUMN = "\x00source"  # hidden per-row file path in whole-table reads


@dataclass(frozen=True)
class Transform:
    """One transformation; ``file``/``line`` point at it in the MLTable file."""

    name: str
    file: str | None = None
    line: int | None = None

    def error(self, message: str, hint: str | None = None) -> DataError:
        return DataError(message, file=self.file, line=self.line,
                         key_path=f"transformations.{self.name}", code="mltable-transform",
                         hint=hint)


@dataclass(frozen=True)
class Take(Transform):
    count: int = 0


@dataclass(frozen=True)
class Skip(Transform):
    count: int = 0


@dataclass(frozen=True)
class TakeRandomSample(Transform):
    probability: float = 1.0
    seed: int = DEFAULT_SAMPLE_SEED


@dataclass(frozen=True)
class DropColumns(Transform):
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class KeepColumns(Transform):
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Filter(Transform):
    expression: str = ""

    @property
    def tree(self) -> ast.Expression:
        return check_expression(self.expression)


@dataclass(frozen=True)
class Conversion:
    columns: tuple[str, ...]
    type: str
    formats: tuple[str, ...] = ()
    true_values: tuple[str, ...] = ("true", "True", "TRUE", "1")
    false_values: tuple[str, ...] = ("false", "False", "FALSE", "0")
    mismatch_as: str = "error"


@dataclass(frozen=True)
class ConvertColumnTypes(Transform):
    conversions: tuple[Conversion, ...] = ()


@dataclass(frozen=True)
class ExtractPartitionFormat(Transform):
    partition_format: str = ""
    pattern: str = ""  # regex matched against the end of the file path
    columns: tuple[str, ...] = ()
    datetime_column: str | None = None


ROW_POSITION = (Take, Skip, TakeRandomSample)


# ----------------------------------------------------------------------------- parsing

def parse_transform(name: str, args: Any, *, file: str, line: int | None,
                    key_path: str) -> Transform:
    """Check one transformation entry of an MLTable file."""
    def fail(message: str, hint: str | None = None) -> DataError:
        return DataError(message, file=file, line=line, key_path=key_path,
                         code="mltable-transform", hint=hint)

    base: dict[str, Any] = {"name": name, "file": file, "line": line}
    if name in ("take", "skip"):
        count = args.get("count") if isinstance(args, dict) else args
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise fail(f"expects a non-negative row count, got {count!r}")
        return (Take if name == "take" else Skip)(count=count, **base)
    if name == "take_random_sample":
        if not isinstance(args, dict) or "probability" not in args:
            raise fail("expects 'probability' (0..1) and optionally 'seed'")
        probability, seed = args.get("probability"), args.get("seed", DEFAULT_SAMPLE_SEED)
        if isinstance(probability, bool) or not isinstance(probability, (int, float)) \
                or not 0 <= probability <= 1:
            raise fail(f"probability must be a number in [0, 1], got {probability!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise fail(f"seed must be an integer, got {seed!r}")
        return TakeRandomSample(probability=float(probability), seed=seed, **base)
    if name in ("drop_columns", "keep_columns"):
        columns = _strings(args.get("columns") if isinstance(args, dict) else args)
        if columns is None:
            raise fail("expects a column name or a list of column names")
        return (DropColumns if name == "drop_columns" else KeepColumns)(columns=columns, **base)
    if name == "filter":
        expression = args.get("expression") if isinstance(args, dict) else args
        if not isinstance(expression, str):
            raise fail("expects an expression string, e.g. 'col(\"Price\") > 2'")
        try:
            check_expression(expression)
        except FilterSyntaxError as exc:
            raise fail(str(exc), "see docs/data.md for the supported expression subset") from exc
        return Filter(expression=expression, **base)
    if name == "convert_column_types":
        return ConvertColumnTypes(conversions=_parse_conversions(args, fail), **base)
    if name == "extract_columns_from_partition_format":
        fmt = args.get("partition_format") if isinstance(args, dict) else args
        if not isinstance(fmt, str) or "{" not in fmt:
            raise fail("expects partition_format, e.g. '{Store}/{Brand}/{file_name}.csv'")
        pattern, columns, dt_column = _partition_regex(fmt, fail)
        return ExtractPartitionFormat(partition_format=fmt, pattern=pattern, columns=columns,
                                      datetime_column=dt_column, **base)
    if name in ("read_delimited", "read_parquet", "read_json_lines", "read_delta_lake"):
        raise fail("a read_* transformation must come first")
    raise fail("unknown transformation", did_you_mean(name, TRANSFORMS) or
               f"supported: {', '.join(TRANSFORMS)}")


def _parse_conversions(args: Any, fail: Any) -> tuple[Conversion, ...]:
    items = args if isinstance(args, list) else [args]
    conversions = []
    for item in items:
        if not isinstance(item, dict) or "columns" not in item or "column_type" not in item:
            raise fail("each entry needs 'columns' and 'column_type'")
        columns = _strings(item["columns"])
        if columns is None:
            raise fail("'columns' must be a column name or a list of names")
        spec = item["column_type"]
        options: Any = {}
        if isinstance(spec, dict) and len(spec) == 1:
            type_name, options = next(iter(spec.items()))
            options = {} if options is None else options
        else:
            type_name = spec
        type_name = str(type_name)
        if type_name not in COLUMN_TYPES:
            raise fail(f"unknown column_type {type_name!r}; supported: {', '.join(COLUMN_TYPES)}",
                       did_you_mean(type_name, COLUMN_TYPES))
        if not isinstance(options, dict):
            raise fail(f"the options of column_type {type_name!r} must be a mapping, "
                       f"got {options!r}")
        kwargs: dict[str, Any] = {}
        if type_name == "datetime":
            formats = _strings(options.get("formats", []))
            if formats is None:
                raise fail("datetime 'formats' must be a format string or a list of them, "
                           "e.g. ['%Y-%m-%d']")
            kwargs["formats"] = formats
        if type_name == "boolean":
            for key in ("true_values", "false_values"):
                if key in options:
                    values = options[key]
                    values = values if isinstance(values, list) else [values]
                    if not all(isinstance(v, (str, int, float)) for v in values):
                        raise fail(f"boolean '{key}' must be a value or a list of values")
                    kwargs[key] = tuple(str(v) for v in values)
            mismatch = str(options.get("mismatch_as", "error"))
            if mismatch not in ("error", "true", "false"):
                raise fail(f"mismatch_as must be error, true or false, got {mismatch!r}")
            kwargs["mismatch_as"] = mismatch
        conversions.append(Conversion(columns=tuple(columns), type=type_name, **kwargs))
    return tuple(conversions)


def _strings(value: Any) -> tuple[str, ...] | None:
    """A string or a list of strings as a tuple; ``None`` for anything else."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        return None
    return tuple(items)


_DT_TOKENS = {"yyyy": r"\d{4}", "MM": r"\d{2}", "dd": r"\d{2}", "HH": r"\d{2}",
              "mm": r"\d{2}", "ss": r"\d{2}"}


def _partition_regex(fmt: str, fail: Any) -> tuple[str, tuple[str, ...], str | None]:
    parts = re.split(r"(\{[^{}]*\})", fmt.strip().lstrip("/"))
    regex, columns, dt_column = [], [], None
    for part in parts:
        if part.startswith("{") and part.endswith("}"):
            name, _, dt = part[1:-1].partition(":")
            if not name or name in columns:
                raise fail(f"bad or repeated column name in {part!r}")
            columns.append(name)
            if dt:
                if dt_column:
                    raise fail("only one datetime part is supported")
                dt_column = name
                body = re.escape(dt)
                for token, digits in _DT_TOKENS.items():
                    body = body.replace(token, digits)
                regex.append(f"(?P<c{len(columns) - 1}>{body})")
            else:
                regex.append(f"(?P<c{len(columns) - 1}>[^/]+?)")
        else:
            regex.append(re.escape(part))
    return "(?:^|/)" + "".join(regex) + "$", tuple(columns), dt_column


# ----------------------------------------------------------------------------- row numbers

def needs_row_numbers(transforms: tuple[Transform, ...]) -> bool:
    return any(isinstance(t, ROW_POSITION) for t in transforms)


def changes_row_count(transforms: tuple[Transform, ...]) -> bool:
    return any(isinstance(t, (*ROW_POSITION, Filter)) for t in transforms)


def check_divisible(transforms: tuple[Transform, ...]) -> None:
    """take/skip after a filter or a sample need the whole table: refuse to divide it."""
    unknown: Transform | None = None
    for transform in transforms:
        if isinstance(transform, (Take, Skip)) and unknown is not None:
            raise transform.error(
                f"cannot follow {unknown.name} when the table is divided into mini-batches "
                "(the row numbers after it depend on the whole table)",
                f"move {transform.name} before {unknown.name}")
        if isinstance(transform, (Filter, TakeRandomSample)):
            unknown = transform


# ----------------------------------------------------------------------------- paths

def partition_values(transform: ExtractPartitionFormat, path: str) -> dict[str, Any]:
    """The column values ``transform`` extracts from a file path (strings; one datetime)."""
    match = re.search(transform.pattern, path.replace("\\", "/"))
    if not match:
        raise transform.error(f"path {path!r} does not match partition format "
                              f"{transform.partition_format!r}")
    out: dict[str, Any] = {}
    for index, column in enumerate(transform.columns):
        value = match.group(f"c{index}")
        if column == transform.datetime_column:
            import pandas as pd  # noqa: PLC0415 - keeps the driver light

            digits = re.findall(r"\d+", value)
            value = pd.Timestamp(*[int(d) for d in digits]) if digits else pd.NaT
        out[column] = value
    return out
