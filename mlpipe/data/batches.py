"""From a parallel step's major input to a stream of :class:`MiniBatch` descriptors."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterator
from typing import Any, Literal, NamedTuple

import mlpipe.data.sizes as sizes
from mlpipe.data.cloud import streams
from mlpipe.data.errors import DataError
from mlpipe.data.listing import SORT_LIMIT, iter_files
from mlpipe.data.minibatch import MiniBatch
from mlpipe.data.mltable_spec import MLTableSpec, load_spec
from mlpipe.data.payloads import Segment, TablePayload, TableSource
from mlpipe.data.sources import iter_mltable_files
from mlpipe.data.transforms import ExtractPartitionFormat, changes_row_count, partition_values
from mlpipe.diagnostics import Diagnostic, Location, did_you_mean
from mlpipe.frozen import freeze
from mlpipe.plan import ParallelStep, PlanInput

log = logging.getLogger("mlpipe.data")
WarningSink = Callable[[Diagnostic], None]


def _log_warning(diagnostic: Diagnostic) -> None:
    log.warning("%s", diagnostic.format())


def _input_path(step: ParallelStep) -> tuple[PlanInput, str]:
    try:
        major = step.major_input
    except KeyError:
        raise DataError(f"step {step.name!r}: input_data names {step.input_data!r}, which is not "
                        "one of its inputs", key_path=f"jobs.{step.name}.input_data",
                        code="binding") from None
    if major.remote is not None:
        raise DataError(f"input {major.name!r} is a remote asset not available offline: "
                        f"{major.remote}", key_path=f"jobs.{step.name}.inputs.{major.name}",
                        code="remote-asset")
    if major.path is None:
        raise DataError(f"input {major.name!r} (input_data) has no path",
                        key_path=f"jobs.{step.name}.inputs.{major.name}", code="missing-path")
    if streams(major, major=True):  # listed in the account, not on disk
        return major, major.path
    if not os.path.exists(major.path):
        raise DataError(f"input {major.name!r}: path does not exist", file=major.path,
                        key_path=f"jobs.{step.name}.inputs.{major.name}", code="missing-path")
    return major, os.path.abspath(major.path)


def _spec(major: PlanInput, path: str) -> MLTableSpec | None:
    return load_spec(path) if major.type == "mltable" else None


def input_kind(step: ParallelStep) -> Literal["files", "table"]:
    """``"table"`` when ``run()`` gets DataFrames (MLTable with a read_* step), else ``"files"``."""
    major, path = _input_path(step)
    spec = _spec(major, path)
    return "table" if spec is not None and spec.is_tabular else "files"


def _digest(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, default=repr, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


_quote = json.encoder.encode_basestring_ascii  # what json.dumps does to each string


def _files_digest(root: str, files: list[str]) -> str:
    """``_digest("files", root, files)``, the JSON text joined by hand: strings only, so
    the same bytes at a fraction of ``json.dumps``'s cost (one call per mini-batch)."""
    text = f'["files",{_quote(root)},[{",".join(map(_quote, files))}]]'
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:20]


def iter_mini_batches(step: ParallelStep, on_warning: WarningSink | None = None, *,
                      file_sizes: bool = True) -> Iterator[MiniBatch]:
    """The mini-batches of ``step``'s major input, streamed in input order.

    File inputs give batches of ``mini_batch_size`` absolute paths (default 1);
    tabular MLTables give byte-size batches (``"10kb"``; default 1 MB) or, when the
    plan sets ``partition_keys`` (it then has no ``mini_batch_size``: the compiler
    decided), one batch per key combination. Notes (an empty input) go to
    ``on_warning`` (default: the ``mlpipe.data`` logger). A missing input, a malformed
    MLTable file or a ``mini_batch_size`` that does not fit the input (a size in
    bytes for a file input) raise :class:`DataError` at once; problems found
    while listing or dividing raise it when the iteration reaches them.
    ``file_sizes=False`` spares the ``stat`` of each file of a folder (its mini-batches'
    ``size_bytes`` are 0): file inputs are cut by count, so only a caller that reads the
    sizes needs them.
    """
    sink = on_warning or _log_warning
    major, path = _input_path(step)
    if streams(major, major=True):
        if step.partition_keys:
            raise _streamed_partitions(step, major)
        batches = _blob_batches(major, sizes.file_count(step.mini_batch_size))
        return _noting_empty(batches, step.name, major, path, sink)
    spec = _spec(major, path)
    if spec is not None and spec.is_tabular:
        if step.partition_keys:  # the compiler has dropped mini_batch_size then
            batches = _partition_batches(spec, tuple(step.partition_keys))
        else:
            batches = _table_batches(spec, sizes.byte_size(step.mini_batch_size))
    else:
        if step.partition_keys:
            batches = _file_partition_batches(spec, path, tuple(step.partition_keys))
        else:
            batches = _file_batches(_iter_input_files(path, spec, file_sizes), path,
                                    sizes.file_count(step.mini_batch_size))
    return _noting_empty(batches, step.name, major, path, sink)


def _noting_empty(batches: Iterator[MiniBatch], step_name: str, major: PlanInput, path: str,
                  sink: WarningSink) -> Iterator[MiniBatch]:
    count = 0
    for batch in batches:
        count += 1
        yield batch
    if count == 0:
        sink(Diagnostic(f"input {major.name!r} is empty: no mini-batches to run; the step "
                        "completes with nothing to do", f"jobs.{step_name}.input_data",
                        Location(path), "info", "empty-input"))


# ----------------------------------------------------------------------------- files


def _iter_input_files(path: str, spec: MLTableSpec | None, sizes: bool = True,
                      ordered: bool = True) -> Iterator[tuple[str, int]]:
    """``(path, size)`` of the input's files (``ordered=False``: a folder's in directory
    order, not sorted, for a count)."""
    if spec is not None:
        return iter_mltable_files(spec, tabular=False)
    if os.path.isdir(path):
        return iter_files(path, sizes=sizes) if ordered else iter_files(path, sizes=sizes,
                                                                         sort_limit=1)
    return iter([(path, os.path.getsize(path))])


def _file_batches(files: Iterator[tuple[str, int]], path: str,
                  per_batch: int) -> Iterator[MiniBatch]:
    chunk: list[str] = []
    chunk_bytes = 0
    index = 0
    for file_path, size in files:
        chunk.append(file_path)
        chunk_bytes += size
        if len(chunk) == per_batch:
            yield _files_batch(index, path, chunk, chunk_bytes)
            index += 1
            chunk, chunk_bytes = [], 0
    if chunk:
        yield _files_batch(index, path, chunk, chunk_bytes)


def _path_format(spec: MLTableSpec | None, path: str,
                 keys: tuple[str, ...]) -> ExtractPartitionFormat:
    """The partition format of a files MLTable that names every key, else a DataError."""
    found = next((t for t in spec.transforms if isinstance(t, ExtractPartitionFormat)),
                 None) if spec is not None else None
    if spec is None or found is None:
        raise DataError(f"partition_keys {list(keys)} need a tabular input (an MLTable with "
                        "read_delimited, read_parquet or read_json_lines) or an MLTable of files "
                        "with extract_columns_from_partition_format",
                        file=spec.file if spec else path, key_path="partition_keys",
                        code="partition-keys")
    missing = [key for key in keys if key not in found.columns]
    if missing:  # worded as for a table (mlpipe.data.division.iter_partitions)
        raise DataError(f"partition_keys {missing} not found in the input's columns; available "
                        f"columns: {', '.join(found.columns)}", file=spec.file,
                        key_path="partition_keys", code="partition-keys",
                        hint=did_you_mean(missing[0], found.columns))
    return found


def _file_groups(spec: MLTableSpec | None, path: str, keys: tuple[str, ...]
                 ) -> dict[tuple[Any, ...], list[tuple[str, int]]]:
    """``(path, size)`` of the files of each key combination, in order of first appearance."""
    found = _path_format(spec, path, keys)
    groups: dict[tuple[Any, ...], list[tuple[str, int]]] = {}
    for file_path, size in _iter_input_files(path, spec):
        extracted = partition_values(found, file_path)
        groups.setdefault(tuple(extracted[k] for k in keys), []).append((file_path, size))
    return groups


def _file_partition_batches(spec: MLTableSpec | None, path: str,
                            keys: tuple[str, ...]) -> Iterator[MiniBatch]:
    """One mini-batch of file paths per combination of the key values in the paths (v1's
    ``FileDataset`` with a ``partition_format``), in order of first appearance as for tables."""
    for index, (combination, members) in enumerate(_file_groups(spec, path, keys).items()):
        files = [file_path for file_path, _ in members]
        values = dict(zip(keys, combination, strict=True))
        detail = {"partition_key_value": {k: _json_value(v) for k, v in values.items()},
                  "files": files}
        yield MiniBatch(id=_digest("file-partition", path, detail), index=index, kind="files",
                        payload=tuple(files), items=len(files),
                        size_bytes=sum(size for _, size in members),
                        partition_key_value=freeze(values), detail=freeze(detail))


def _files_batch(index: int, root: str, files: list[str], size: int) -> MiniBatch:
    detail = {"files": list(files)}
    return MiniBatch.of(_files_digest(root, files), index, "files", tuple(files), len(files),
                        size, None, freeze(detail))


def _blob_batches(major: PlanInput, per_batch: int, *, sort: bool = True
                  ) -> Iterator[MiniBatch]:
    """Mini-batches of a streamed cloud input: blob names, read on the worker; ids and
    details are those of the same files on disk in the input's local folder."""
    from mlpipe.data.cloud.access import access_for  # noqa: PLC0415 - azure on demand
    from mlpipe.data.cloud.blobs import iter_blobs  # noqa: PLC0415
    from mlpipe.data.cloud.reader import BlobFiles, BlobSource  # noqa: PLC0415

    assert major.cloud is not None and major.path is not None
    location, access = major.cloud, access_for(major.cloud)
    if major.type == "uri_file":
        prefix, _, name = location.path.rpartition("/")
        source = BlobSource(access, location.container, prefix, os.path.dirname(major.path))
        entries: Iterator[tuple[str, int]] = iter([(name, 0)])
    else:
        source = BlobSource(access, location.container, location.path, major.path)
        entries = ((e.name, e.size) for e in iter_blobs(
            access, location.container, location.path, sort_limit=SORT_LIMIT if sort else 1))
    root = os.path.join(source.root, "")
    names: list[str] = []
    size = index = 0
    for name, blob_size in entries:
        names.append(name)
        size += blob_size
        if len(names) == per_batch:
            yield _blob_batch(index, BlobFiles(source, tuple(names)), root, size)
            index += 1
            names, size = [], 0
    if names:
        yield _blob_batch(index, BlobFiles(source, tuple(names)), root, size)


def _blob_batch(index: int, payload: Any, root: str, size: int) -> MiniBatch:
    files = [root + name for name in payload.names]
    return MiniBatch.of(_files_digest(payload.source.root, files), index, "files", payload,
                        len(files), size, None, freeze({"files": files}))


def _streamed_partitions(step: ParallelStep, major: PlanInput) -> DataError:
    return DataError(f"partition_keys {list(step.partition_keys or ())} need a table: input "
                     f"{major.name!r} is a {major.type} read from cloud storage",
                     key_path="partition_keys", code="partition-keys")


# ----------------------------------------------------------------------------- tables


def _table_source(spec: MLTableSpec) -> tuple[TableSource, str]:
    assert spec.read is not None
    source = TableSource(mltable=spec.file, read=spec.read, transforms=spec.transforms)
    return source, _digest(repr(source))


def _table_batches(spec: MLTableSpec, target: int) -> Iterator[MiniBatch]:
    # pyarrow and pandas are imported for tabular inputs only: a file listing stays light
    from mlpipe.data.division import iter_table_pieces  # noqa: PLC0415

    source, source_id = _table_source(spec)
    for index, piece in enumerate(iter_table_pieces(spec, target)):
        yield _piece_batch(index, source, source_id, piece.segment, piece.size)


def _piece_batch(index: int, source: TableSource, source_id: str, segment: Segment,
                 size: int) -> MiniBatch:
    detail = {"mltable": source.mltable, **segment.detail()}
    # the driver's count is the row count run() gets only for parquet without
    # row-dropping transformations (text files may hold blank lines)
    exact = source.read.format == "parquet" and not changes_row_count(source.transforms)
    return MiniBatch(id=_digest("table", source_id, detail), index=index, kind="table",
                     payload=TablePayload(source, (segment,)), items=segment.rows if exact
                     else None, size_bytes=size, detail=freeze(detail))


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _partition_batches(spec: MLTableSpec, keys: tuple[str, ...]) -> Iterator[MiniBatch]:
    from mlpipe.data.division import iter_partitions  # noqa: PLC0415

    source, source_id = _table_source(spec)
    for index, partition in enumerate(iter_partitions(spec, keys)):
        values = {k: partition.values[k] for k in keys}
        detail = {"mltable": source.mltable,
                  "partition_key_value": {k: _json_value(v) for k, v in values.items()},
                  "files": [s.path for s in partition.segments]}
        match = tuple(values.items()) if partition.from_data else None
        yield MiniBatch(id=_digest("partition", source_id, detail), index=index, kind="table",
                        payload=TablePayload(source, partition.segments, match), items=None,
                        size_bytes=partition.size, partition_key_value=freeze(values),
                        detail=freeze(detail))


# ----------------------------------------------------------------------------- counting


class InputCount(NamedTuple):
    """What the counting pass finds in a step's input: its mini-batches and, where they are
    known without reading the data, its items (files; rows of parquet pieces)."""

    mini_batches: int
    items: int | None


def count_mini_batches(step: ParallelStep) -> int:
    """How many mini-batches :func:`iter_mini_batches` gives for ``step``, counted cheaply
    (see :func:`count_input`)."""
    return count_input(step).mini_batches


def count_input(step: ParallelStep) -> InputCount:
    """The mini-batches (and items, where known) :func:`iter_mini_batches` gives for
    ``step``, counted cheaply.

    Files are listed (names and sizes only, no digest per batch); tables are divided
    as the stream divides them (parquet row-group metadata, byte ranges of text
    files), without building mini-batch descriptors. The items of a table are known for
    parquet pieces without row-dropping transformations only (text records are counted
    by the worker that parses them). Raises what the stream raises.
    """
    major, path = _input_path(step)
    if streams(major, major=True):
        per_batch = sizes.file_count(step.mini_batch_size)
        batches = items = 0
        for batch in _blob_batches(major, per_batch, sort=False):
            batches += 1
            items += batch.items or 0
        return InputCount(batches, items)
    spec = _spec(major, path)
    if spec is not None and spec.is_tabular:
        from mlpipe.data.division import iter_partitions, iter_table_pieces  # noqa: PLC0415

        if step.partition_keys:
            return InputCount(len(iter_partitions(spec, tuple(step.partition_keys))), None)
        assert spec.read is not None
        exact = spec.read.format == "parquet" and not changes_row_count(spec.transforms)
        batches = rows = 0
        for piece in iter_table_pieces(spec, sizes.byte_size(step.mini_batch_size)):
            batches += 1
            rows += piece.segment.rows or 0
        return InputCount(batches, rows if exact else None)
    if step.partition_keys:
        groups = _file_groups(spec, path, tuple(step.partition_keys))
        return InputCount(len(groups), sum(map(len, groups.values())))
    files = sum(1 for _ in _iter_input_files(path, spec, sizes=False, ordered=False))
    per_batch = sizes.file_count(step.mini_batch_size)
    return InputCount(-(-files // per_batch), files)
