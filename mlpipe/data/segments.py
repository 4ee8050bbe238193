"""How a worker reads a tabular mini-batch: :func:`load_table` turns a
:class:`~mlpipe.data.payloads.TablePayload` into a pandas DataFrame."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from mlpipe.data.errors import DataError
from mlpipe.data.mltable_spec import ReadSpec
from mlpipe.data.payloads import PATH_COLUMN, Segment, TablePayload, TableSource
from mlpipe.data.text_ranges import count_records, first_record, split_fields
from mlpipe.data.transform_apply import RowPositions, apply_transforms


def _csv_frame(read: ReadSpec, segment: Segment) -> pa.Table:
    columns = segment.columns
    start = segment.start
    if columns is None and read.byte_splittable:  # all_files_different_headers
        header, after = first_record(segment.path, read.encoding, quoted=read.support_multi_line)
        columns = tuple(split_fields(header, read.delimiter))
        start = max(start, after)
    with open(segment.path, "rb") as handle:
        handle.seek(start)
        data = handle.read() if segment.end is None else handle.read(segment.end - start)
    if not data.strip():
        return pa.table({name: pa.array([], pa.string()) for name in columns or ()})
    bad_rows: list[Any] = []

    def on_invalid(row: Any) -> str:
        bad_rows.append(row)
        return "error"

    convert = pacsv.ConvertOptions(
        strings_can_be_null=not read.empty_as_string,
        quoted_strings_can_be_null=not read.empty_as_string,
        column_types=None if read.infer_column_types or columns is None
        else {c: pa.string() for c in columns},
    )
    try:
        return pacsv.read_csv(
            pa.py_buffer(data),
            read_options=pacsv.ReadOptions(column_names=list(columns) if columns else None,
                                           skip_rows=segment.skip_rows, encoding=read.encoding,
                                           block_size=max(1 << 20, min(len(data) + 1, 64 << 20))),
            parse_options=pacsv.ParseOptions(delimiter=read.delimiter,
                                             newlines_in_values=read.support_multi_line,
                                             invalid_row_handler=on_invalid),
            convert_options=convert,
        )
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        line = None
        message = str(exc).replace("CSV parse error: ", "")
        if bad_rows:
            row = bad_rows[0]
            message = (f"expected {row.expected_columns} fields, got {row.actual_columns}: "
                       f"{row.text[:120]!r}")
            line = _line_of(segment.path, start, data, row.text)
        raise DataError(f"malformed delimited row: {message}", file=segment.path, line=line,
                        code="bad-row") from None


def _line_of(path: str, start: int, data: bytes, text: str) -> int | None:
    index = data.find(text.encode("utf-8", errors="replace"))
    if index < 0:
        return None
    with open(path, "rb") as handle:
        before = handle.read(start).count(b"\n")
    return before + data.count(b"\n", 0, index) + 1


def _json_frame(read: ReadSpec, segment: Segment) -> pa.Table:
    with open(segment.path, "rb") as handle:
        handle.seek(segment.start)
        data = handle.read() if segment.end is None else handle.read(segment.end - segment.start)
    if read.encoding != "utf-8":
        data = data.decode(read.encoding).encode("utf-8")
    if not data.strip():
        return pa.table({})
    try:
        return pajson.read_json(pa.py_buffer(data))
    except pa.ArrowInvalid:
        records = []
        for number, line in enumerate(data.splitlines(), 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
                if not isinstance(value, dict):
                    raise ValueError("not a JSON object")
                records.append(value)
            except ValueError as exc:
                if read.invalid_lines == "drop":
                    continue
                with open(segment.path, "rb") as handle:
                    before = handle.read(segment.start).count(b"\n")
                raise DataError(f"invalid JSON line: {exc}", file=segment.path,
                                line=before + number, code="bad-row") from None
        return pa.Table.from_pylist(records)


def _parquet_frame(segment: Segment) -> pa.Table:
    try:
        parquet = pq.ParquetFile(segment.path)
        if segment.row_groups is None:
            return parquet.read()
        table = parquet.read_row_groups(list(segment.row_groups))
    except (pa.ArrowInvalid, OSError) as exc:
        raise DataError(f"cannot read parquet file: {exc}", file=segment.path,
                        code="bad-file") from None
    if segment.row_slice is not None:
        table = table.slice(*segment.row_slice)
    return table


def read_segment(read: ReadSpec, segment: Segment) -> pd.DataFrame:
    """The rows of ``segment`` as read (before the transformations), Path column included."""
    if read.format == "parquet":
        table = _parquet_frame(segment)
    elif read.format == "json_lines":
        table = _json_frame(read, segment)
    else:
        table = _csv_frame(read, segment)
    frame = table.to_pandas(date_as_object=False)
    if read.include_path_column:
        frame.insert(0, PATH_COLUMN, segment.path)
    return frame


def load_segment(source: TableSource, segment: Segment) -> pd.DataFrame:
    """Read one segment and apply the MLTable transformations to it."""
    frame = read_segment(source.read, segment)
    if source.transforms:
        raw = None
        if segment.first_row is not None:
            raw = np.arange(segment.first_row, segment.first_row + len(frame), dtype=np.int64)
        rows = RowPositions(raw=raw, current=None if raw is None else raw.copy())
        frame = apply_transforms(frame, source.transforms, source_path=segment.path, rows=rows)
    return frame


def planned_rows(payload: TablePayload) -> int:
    """The rows a tabular mini-batch was cut to hold, counted without parsing them (records
    of its byte ranges, row counts of its parquet pieces); at least 1. Best effort: for a
    mini-batch whose data cannot be read, so its failure counts what it stood for."""
    if payload.match is not None:  # a partition's share of its files is only known parsed
        return 1
    total = 0
    for segment in payload.segments:
        try:
            total += _segment_rows(payload.source.read, segment)
        except (OSError, ValueError, pa.ArrowException):
            total += 1
    return max(1, total)


def _segment_rows(read: ReadSpec, segment: Segment) -> int:
    if segment.rows is not None:
        return segment.rows
    if read.format == "parquet":
        if segment.row_slice is not None:
            return segment.row_slice[1]
        metadata = pq.ParquetFile(segment.path).metadata
        groups = segment.row_groups if segment.row_groups is not None \
            else range(metadata.num_row_groups)
        return sum(metadata.row_group(group).num_rows for group in groups)
    end = segment.end if segment.end is not None else os.path.getsize(segment.path)
    delimited = read.format == "delimited"
    records = count_records(segment.path, segment.start, end,
                            quoted=delimited and read.support_multi_line)
    # a file whose header is read with each segment (all_files_different_headers)
    header = delimited and segment.columns is None and read.byte_splittable \
        and segment.start == 0 and read.header != "no_header"
    return max(1, records - segment.skip_rows - int(header))


def select_match(frame: pd.DataFrame, match: tuple[tuple[str, Any], ...]) -> pd.DataFrame:
    """Rows whose key columns equal the partition's values (nulls match nulls)."""
    mask = np.ones(len(frame), dtype=bool)
    for column, value in match:
        series = frame[column]
        if value is None or (isinstance(value, float) and np.isnan(value)):
            mask &= series.isna().to_numpy()
        else:
            mask &= (series == value).fillna(False).to_numpy(dtype=bool)
    return frame.loc[mask].reset_index(drop=True)


def load_table(payload: TablePayload) -> pd.DataFrame:
    """The DataFrame a tabular mini-batch stands for."""
    frames = [load_segment(payload.source, segment) for segment in payload.segments]
    if payload.match is not None:
        frames = [select_match(frame, payload.match) for frame in frames]
    if len(frames) == 1:
        return frames[0]
    frames = [f for f in frames if len(f.columns)] or frames[:1]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
