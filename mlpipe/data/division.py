"""Driver side of tabular inputs: cut a table into segments, or group it by partition keys.

Size-based division never parses values: text files are cut at record starts
(``text_ranges``), parquet files by row groups from the footer metadata. Partition
division reads no file when every key comes from the path
(``extract_columns_from_partition_format``), else only the key columns.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from mlpipe.data.errors import DataError
from mlpipe.data.mltable_spec import MLTableSpec, ReadSpec
from mlpipe.data.payloads import PATH_COLUMN, Segment
from mlpipe.data.segments import read_segment
from mlpipe.data.sources import iter_mltable_files
from mlpipe.data.text_ranges import (
    count_records,
    first_record,
    line_ranges,
    record_ranges,
    split_fields,
)
from mlpipe.data.transform_apply import convert_series
from mlpipe.data.transforms import (
    ConvertColumnTypes,
    DropColumns,
    ExtractPartitionFormat,
    KeepColumns,
    Transform,
    check_divisible,
    needs_row_numbers,
    partition_values,
)
from mlpipe.diagnostics import did_you_mean


@dataclass(frozen=True)
class Piece:
    """A segment and its byte size, as the driver hands it to the batcher."""

    segment: Segment
    size: int


# ----------------------------------------------------------------------------- file layout

def _header_names(read: ReadSpec, path: str) -> tuple[tuple[str, ...], int]:
    """Column names for a delimited file and where its data starts (0 for encodings
    that cannot be cut at newline bytes: the worker skips the header row itself)."""
    if read.byte_splittable:
        text, after = first_record(path, read.encoding, quoted=read.support_multi_line)
    else:
        with open(path, "rb") as handle:
            head = handle.read(256 * 1024).decode(read.encoding, errors="ignore")
        text, after = (head.splitlines() or [""])[0].lstrip("\ufeff"), 0
    fields = split_fields(text, read.delimiter)
    if read.header == "no_header":
        return tuple(f"Column{i + 1}" for i in range(len(fields))), 0
    return tuple(fields), after


@dataclass(frozen=True)
class FileLayout:
    """Where a file's data starts and which column names it is read with."""

    path: str
    size: int
    start: int = 0
    names: tuple[str, ...] | None = None  # None: the worker reads the file's own header
    skip_rows: int = 0  # header rows the worker skips (encodings not cut at newline bytes)


def iter_file_layouts(spec: MLTableSpec) -> Iterator[FileLayout]:
    """The layout of each file of a table, per the header mode."""
    read = spec.read
    assert read is not None
    names: tuple[str, ...] | None = None
    for path, size in iter_mltable_files(spec, tabular=True):
        if read.format != "delimited":
            yield FileLayout(path, size)
            continue
        if size == 0:
            continue
        skip = 0 if read.byte_splittable else 1
        if read.header == "all_files_different_headers":
            if read.byte_splittable:
                yield FileLayout(path, size, _header_names(read, path)[1], None)
            else:
                yield FileLayout(path, size)
        elif read.header == "all_files_same_headers":
            if names is None:
                names, start = _header_names(read, path)
            elif read.byte_splittable:
                start = first_record(path, read.encoding, quoted=read.support_multi_line)[1]
            else:
                start = 0
            yield FileLayout(path, size, start, names, skip)
        elif read.header == "from_first_file":
            if names is None:
                names, start = _header_names(read, path)
                yield FileLayout(path, size, start, names, skip)
            else:
                yield FileLayout(path, size, 0, names)
        else:  # no_header
            if names is None:
                names, _ = _header_names(read, path)
            yield FileLayout(path, size, 0, names)


# ----------------------------------------------------------------------------- size-based

def _parquet_pieces(path: str, target: int) -> Iterator[Piece]:
    try:
        metadata = pq.ParquetFile(path).metadata
    except (pa.ArrowInvalid, OSError) as exc:
        raise DataError(f"not a readable parquet file: {exc}", file=path, code="bad-file") from None
    group: list[int] = []
    group_bytes = group_rows = 0

    def flush() -> Iterator[Piece]:
        if group:
            yield Piece(Segment(path, row_groups=tuple(group), rows=group_rows), group_bytes)

    for index in range(metadata.num_row_groups):
        row_group = metadata.row_group(index)
        rows = row_group.num_rows
        size = sum(row_group.column(c).total_compressed_size for c in range(row_group.num_columns))
        if rows == 0:
            continue
        if size > target:
            yield from flush()
            group, group_bytes, group_rows = [], 0, 0
            per = max(1, math.ceil(rows / math.ceil(size / target)))
            for offset in range(0, rows, per):
                length = min(per, rows - offset)
                yield Piece(Segment(path, row_groups=(index,), row_slice=(offset, length),
                                    rows=length), size * length // rows)
            continue
        if group and group_bytes + size > target:
            yield from flush()
            group, group_bytes, group_rows = [], 0, 0
        group.append(index)
        group_bytes += size
        group_rows += rows
    yield from flush()


def iter_table_pieces(spec: MLTableSpec, target: int) -> Iterator[Piece]:
    """The segments of a table packed up to ``target`` bytes, file by file, in order."""
    read = spec.read
    assert read is not None
    check_divisible(spec.transforms)
    numbered = needs_row_numbers(spec.transforms)
    next_row = 0
    for layout in iter_file_layouts(spec):
        path, size, start, names = layout.path, layout.size, layout.start, layout.names
        if read.format == "parquet":
            for piece in _parquet_pieces(path, target):
                if numbered:
                    piece = Piece(_with_first_row(piece.segment, next_row), piece.size)
                    next_row += piece.segment.rows or 0
                yield piece
            continue
        if not read.byte_splittable:
            rows = (count_records(path, start, size, quoted=False) - layout.skip_rows
                    if numbered else None)
            yield Piece(Segment(path, start, size, columns=names, skip_rows=layout.skip_rows,
                                first_row=next_row if numbered else None, rows=rows), size - start)
            next_row += rows or 0
            continue
        if read.support_multi_line or numbered:
            quoted = read.support_multi_line and read.format == "delimited"
            for lo, hi, count in record_ranges(path, start, size, target, quoted=quoted):
                yield Piece(Segment(path, lo, hi, columns=names,
                                    first_row=next_row if numbered else None,
                                    rows=count), hi - lo)
                next_row += count
        else:
            for lo, hi in line_ranges(path, start, size, target):
                yield Piece(Segment(path, lo, hi, columns=names), hi - lo)


def _with_first_row(segment: Segment, first_row: int) -> Segment:
    return replace(segment, first_row=first_row)


# ----------------------------------------------------------------------------- partitions

@dataclass(frozen=True)
class Partition:
    """One distinct combination of the partition keys and where its rows are."""

    values: dict[str, Any]
    segments: tuple[Segment, ...]
    size: int
    from_data: bool


def _base_columns(spec: MLTableSpec, layouts: list[FileLayout]) -> list[str]:
    read = spec.read
    assert read is not None
    if not layouts:
        return []
    path = layouts[0].path
    if read.format == "parquet":
        columns = list(pq.read_schema(path).names)
    elif read.format == "json_lines":
        columns = list(read_segment(read, Segment(path, 0, _first_line_end(path))).columns)
    elif read.header == "all_files_different_headers":
        columns = []
        for layout in layouts:
            for name in _header_names(read, layout.path)[0]:
                if name not in columns:
                    columns.append(name)
    else:
        columns = list(layouts[0].names or ())
    if read.include_path_column:
        columns.insert(0, PATH_COLUMN)
    return columns


def _first_line_end(path: str) -> int:
    with open(path, "rb") as handle:
        return len(handle.readline())


def final_columns(spec: MLTableSpec, base: list[str]) -> list[str]:
    """Column names after the transformations (no data read)."""
    columns = list(base)
    for transform in spec.transforms:
        if isinstance(transform, ExtractPartitionFormat):
            columns += [c for c in transform.columns if c not in columns]
        elif isinstance(transform, DropColumns):
            columns = [c for c in columns if c not in transform.columns]
        elif isinstance(transform, KeepColumns):
            columns = [c for c in columns if c in transform.columns]
    return columns


def _path_keys(transforms: tuple[Transform, ...], keys: tuple[str, ...]
               ) -> dict[str, ExtractPartitionFormat]:
    """Keys whose final value is the string taken from the file path."""
    source: dict[str, ExtractPartitionFormat | None] = {}
    for transform in transforms:
        if isinstance(transform, ExtractPartitionFormat):
            for column in transform.columns:
                source[column] = transform if column != transform.datetime_column else None
        elif isinstance(transform, ConvertColumnTypes):
            for conversion in transform.conversions:
                for column in conversion.columns:
                    source[column] = None
    return {k: v for k, v in source.items() if k in keys and v is not None}


def iter_partitions(spec: MLTableSpec, keys: tuple[str, ...]) -> list[Partition]:
    """One :class:`Partition` per distinct key combination, in order of first appearance."""
    read = spec.read
    assert read is not None
    check_divisible(spec.transforms)
    layouts = list(iter_file_layouts(spec))
    if not layouts:
        return []
    available = final_columns(spec, _base_columns(spec, layouts))
    missing = [k for k in keys if k not in available]
    if missing:
        raise DataError(
            f"partition_keys {missing} not found in the input's columns; available columns: "
            f"{', '.join(available)}",
            file=spec.file,
            key_path="partition_keys",
            code="partition-keys",
            hint=did_you_mean(missing[0], available),
        )
    numbered = needs_row_numbers(spec.transforms)
    path_keys = _path_keys(spec.transforms, keys)
    groups: dict[tuple[Any, ...], list[Piece]] = {}
    next_row = 0
    for layout in layouts:
        path, size, start = layout.path, layout.size, layout.start
        rows = None
        if numbered:
            rows = _count_file_rows(read, path, start, size) - layout.skip_rows
        segment = Segment(path, start, None, columns=layout.names, skip_rows=layout.skip_rows,
                          first_row=next_row if numbered else None, rows=rows)
        next_row += rows or 0
        piece = Piece(segment, size - start)
        parsed = {t: partition_values(t, path) for t in set(path_keys.values())}
        path_values = {k: parsed[t][k] for k, t in path_keys.items()}
        if len(path_keys) == len(keys):
            groups.setdefault(tuple(path_values[k] for k in keys), []).append(piece)
            continue
        for combo in _data_key_combinations(spec, segment, keys, path_values):
            groups.setdefault(combo, []).append(piece)
    from_data = len(path_keys) != len(keys)
    return [Partition(dict(zip(keys, combo, strict=True)), tuple(p.segment for p in pieces),
                      sum(p.size for p in pieces), from_data) for combo, pieces in groups.items()]


def _count_file_rows(read: ReadSpec, path: str, start: int, size: int) -> int:
    if read.format == "parquet":
        return int(pq.ParquetFile(path).metadata.num_rows)
    return count_records(path, start, size, quoted=read.support_multi_line)


def _data_key_combinations(spec: MLTableSpec, segment: Segment, keys: tuple[str, ...],
                           path_values: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Distinct key combinations in one file, reading only the key columns."""
    read = spec.read
    assert read is not None
    data_keys = [k for k in keys if k not in path_values and k != PATH_COLUMN]
    frame = _read_columns(read, segment, data_keys)
    for key, value in path_values.items():
        frame[key] = value
    if PATH_COLUMN in keys:
        frame[PATH_COLUMN] = segment.path
    for transform in spec.transforms:
        if isinstance(transform, ConvertColumnTypes):
            for conversion in transform.conversions:
                for column in conversion.columns:
                    if column in frame.columns:
                        frame[column] = convert_series(frame[column], conversion)
    unique = frame[list(keys)].drop_duplicates()
    return [tuple(_scalar(v) for v in row) for row in unique.itertuples(index=False, name=None)]


def _read_columns(read: ReadSpec, segment: Segment, columns: list[str]) -> pd.DataFrame:
    if not columns:
        return pd.DataFrame(index=range(1))
    try:
        if read.format == "parquet":
            # the driver reads partition columns: one thread, so no Arrow pool thread is
            # left to abort its interpreter's exit (apache/arrow#34314)
            table = pq.read_table(segment.path, columns=columns, use_threads=False)
            return table.to_pandas(date_as_object=False, use_threads=False)
        if read.format == "delimited" and segment.columns is not None and read.byte_splittable:
            with open(segment.path, "rb") as handle:
                handle.seek(segment.start)
                data = handle.read()
            table = pacsv.read_csv(
                pa.py_buffer(data),
                read_options=pacsv.ReadOptions(column_names=list(segment.columns),
                                               encoding=read.encoding, use_threads=False),
                parse_options=pacsv.ParseOptions(delimiter=read.delimiter,
                                                 newlines_in_values=read.support_multi_line),
                convert_options=pacsv.ConvertOptions(
                    include_columns=columns,
                    strings_can_be_null=not read.empty_as_string,
                    column_types=None
                    if read.infer_column_types
                    else {c: pa.string() for c in columns},
                ),
            )
            return table.to_pandas(date_as_object=False, use_threads=False)
    except pa.ArrowInvalid as exc:
        raise DataError(f"cannot read the partition key columns: {exc}", file=segment.path,
                        code="bad-row") from None
    return read_segment(read, segment)[columns]


def _scalar(value: Any) -> Any:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes, pd.Timestamp)):
        with contextlib.suppress(ValueError, AttributeError):
            value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def whole_file_segments(spec: MLTableSpec) -> Iterator[Segment]:
    """One segment per file (for whole-table reads)."""
    for layout in iter_file_layouts(spec):
        yield Segment(layout.path, layout.start, None, columns=layout.names,
                      skip_rows=layout.skip_rows)


__all__ = ["Partition", "Piece", "iter_partitions", "iter_table_pieces", "whole_file_segments"]
