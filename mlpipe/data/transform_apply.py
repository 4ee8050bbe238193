"""Applying MLTable transformations to a piece of a table (worker side)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from mlpipe.data.errors import DataError
from mlpipe.data.filter_eval import evaluate
from mlpipe.data.transforms import (
    SOURCE_COLUMN,
    Conversion,
    ConvertColumnTypes,
    DropColumns,
    ExtractPartitionFormat,
    Filter,
    KeepColumns,
    Skip,
    Take,
    TakeRandomSample,
    Transform,
    partition_values,
)
from mlpipe.diagnostics import did_you_mean


@dataclass
class RowPositions:
    """Table-wide row numbers of a piece's rows: ``raw`` (as read) and ``current``
    (after the row-position transformations so far; ``None`` once unknown)."""

    raw: np.ndarray | None
    current: np.ndarray | None
    whole_table: bool = False
    kept: list[Any] = field(default_factory=list)


def _hash_uniform(seed: int, rows: np.ndarray) -> np.ndarray:
    """Uniform [0, 1) values from (seed, row number), splitmix64-style."""
    with np.errstate(over="ignore"):
        x = rows.astype(np.uint64) + np.uint64((seed * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF)
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    fractions: np.ndarray = (x >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    return fractions


def apply_transforms(frame: pd.DataFrame, transforms: tuple[Transform, ...], *,
                     source_path: str | None, rows: RowPositions) -> pd.DataFrame:
    """Apply ``transforms`` in order to a piece of the table read from ``source_path``."""
    for transform in transforms:
        if isinstance(transform, (Take, Skip)):
            if rows.current is None:
                raise transform.error("row numbers are unknown at this point")
            if isinstance(transform, Take):
                keep = rows.current < transform.count
                rows.current = rows.current[keep]
            else:
                keep = rows.current >= transform.count
                rows.current = rows.current[keep] - transform.count
            rows.raw = rows.raw[keep] if rows.raw is not None else None
            frame = frame.loc[keep].reset_index(drop=True)
        elif isinstance(transform, TakeRandomSample):
            if rows.raw is None:
                raise transform.error("row numbers are unknown at this point")
            keep = _hash_uniform(transform.seed, rows.raw) < transform.probability
            frame = frame.loc[keep].reset_index(drop=True)
            rows.raw = rows.raw[keep]
            rows.current = np.arange(len(frame)) if rows.whole_table else None
        elif isinstance(transform, Filter):
            try:
                mask = evaluate(transform.tree, frame).to_numpy()
            except KeyError as exc:
                raise _missing_column(transform, str(exc.args[0]), frame) from None
            except TypeError as exc:  # e.g. a text column compared with a number
                raise transform.error(
                    f"cannot evaluate filter {transform.expression!r}: {exc}",
                    "convert the column first with convert_column_types") from None
            frame = frame.loc[mask].reset_index(drop=True)
            rows.raw = rows.raw[mask] if rows.raw is not None else None
            rows.current = np.arange(len(frame)) if rows.whole_table else None
        elif isinstance(transform, (DropColumns, KeepColumns)):
            for column in transform.columns:
                if column not in frame.columns:
                    raise _missing_column(transform, column, frame)
            if isinstance(transform, DropColumns):
                frame = frame.drop(columns=list(transform.columns))
            else:
                keep_names = set(transform.columns) | {SOURCE_COLUMN}
                frame = frame[[c for c in frame.columns if c in keep_names]]
        elif isinstance(transform, ConvertColumnTypes):
            frame = _convert(frame, transform)
        elif isinstance(transform, ExtractPartitionFormat):
            frame = _extract(frame, transform, source_path)
    return frame


def _missing_column(transform: Transform, column: str, frame: pd.DataFrame) -> DataError:
    available = [str(c) for c in frame.columns if c != SOURCE_COLUMN]
    return transform.error(f"column {column!r} not found; available columns: "
                           f"{', '.join(available)}", did_you_mean(column, available))


def _convert(frame: pd.DataFrame, transform: ConvertColumnTypes) -> pd.DataFrame:
    frame = frame.copy()
    for conversion in transform.conversions:
        for column in conversion.columns:
            if column not in frame.columns:
                raise _missing_column(transform, column, frame)
            frame[column] = convert_series(frame[column], conversion)
    return frame


def convert_series(series: pd.Series, conversion: Conversion) -> pd.Series:
    kind = conversion.type
    if kind == "int":
        numbers = pd.to_numeric(series, errors="coerce")
        whole = numbers.where(numbers.isna() | (numbers == numbers.round()))
        return whole.astype("Int64")
    if kind == "float":
        return pd.to_numeric(series, errors="coerce").astype("float64")
    if kind == "string":
        return series.astype("string").astype(object).where(series.notna(), None)
    if kind == "boolean":
        if pd.api.types.is_bool_dtype(series.dtype):
            return series
        text = series.astype("string")
        truth = text.isin(conversion.true_values)
        false = text.isin(conversion.false_values)
        out = pd.Series(pd.NA, index=series.index, dtype="boolean")
        out[truth.fillna(False).astype(bool)] = True
        out[false.fillna(False).astype(bool)] = False
        matched = truth.fillna(False).astype(bool) | false.fillna(False).astype(bool)
        mismatch = series.notna() & ~matched
        if conversion.mismatch_as in ("true", "false"):
            out[mismatch] = conversion.mismatch_as == "true"
        return out
    # datetime
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return series
    text = series.astype("string")
    result = pd.Series(pd.NaT, index=series.index, dtype="datetime64[ns]")
    for fmt in conversion.formats or (None,):
        parsed = pd.to_datetime(text, format=fmt, errors="coerce")
        result = result.fillna(parsed)
    return result


def _extract(frame: pd.DataFrame, transform: ExtractPartitionFormat,
             source_path: str | None) -> pd.DataFrame:
    frame = frame.copy()
    if SOURCE_COLUMN in frame.columns:  # a whole table: one path per row
        paths = frame[SOURCE_COLUMN].astype(object)
        per_path = {p: partition_values(transform, p) for p in paths.unique()}
        for column in transform.columns:
            frame[column] = paths.map(lambda p, c=column: per_path[p][c])
        return frame
    values = partition_values(transform, source_path or "")
    for column, value in values.items():
        frame[column] = value
    return frame
