"""A parallel step's ``logs/`` folder: where each file is (:class:`StepLogs`) and the one typed
reader of its attempts (:func:`read_attempts`) and runs (:func:`read_runs`).

The reports write these files (:mod:`mlpipe.runtime.reports`); everything that reads them
back (``job show --mini-batches``, ``job rerun``, the task stream, ``report.html``, the
tuning profile) goes through here, so a path or a column is spelled once.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mlpipe.runtime.records import AttemptRecord, WorkerInfo

PROCESSED_COLUMNS = (
    "Mini-batch Id",
    "Picked Count",
    "Process",
    "Process Start Time",
    "Total",
    "Succeeded",
    "Failed",
    "Elapsed Seconds",
    "Process Seconds",
    "Run Method Seconds",
    "Status",
    "Error Category",
    "Error Message",
    "Mini-batch Detail",
)
REQUIRED_COLUMNS = PROCESSED_COLUMNS[:12]  # a row without the message or detail still reads


@dataclass(frozen=True)
class StepLogs:
    """Every path of a step's ``logs/`` folder (``root``), as the reports write them."""

    root: Path

    @classmethod
    def of(cls, logs_dir: str | os.PathLike[str]) -> StepLogs:
        return cls(Path(logs_dir))

    @property
    def job_result(self) -> Path:
        return self.root / "job_result.txt"

    @property
    def readme(self) -> Path:
        return self.root / "readme.txt"

    @property
    def sys(self) -> Path:
        return self.root / "sys"

    @property
    def master_role(self) -> Path:
        return self.sys / "master_role.txt"

    @property
    def job_report(self) -> Path:
        """``sys/job_report``: the CSVs below and ``runs.json``."""
        return self.sys / "job_report"

    @property
    def processed(self) -> Path:
        return self.job_report / "processed_mini-batches.csv"

    @property
    def process_summary(self) -> Path:
        return self.job_report / "process_summary.csv"

    @property
    def node_summary(self) -> Path:
        return self.job_report / "node_summary.csv"

    @property
    def runs(self) -> Path:
        """``sys/job_report/runs.json``: each run of the step, its settings and profile."""
        return self.job_report / "runs.json"

    @property
    def perf(self) -> Path:
        return self.sys / "perf"

    @property
    def samples(self) -> Path:
        return self.perf / "samples.csv"

    @property
    def profile(self) -> Path:
        return self.sys / "profile"

    @property
    def task_stream(self) -> Path:
        return self.sys / "task_stream.html"

    @property
    def user(self) -> Path:
        """``user/``: what the user's code wrote and the errors it raised."""
        return self.root / "user"

    @property
    def error_summary(self) -> Path:
        return self.user / "error.txt"

    @property
    def std_log(self) -> Path:
        """``user/std_log.txt``: a command step's stdout and stderr, as they came."""
        return self.user / "std_log.txt"

    @property
    def stdout(self) -> Path:
        """``user/stdout.txt``: a command step's stdout."""
        return self.user / "stdout.txt"

    @property
    def stderr(self) -> Path:
        """``user/stderr.txt``: a command step's stderr."""
        return self.user / "stderr.txt"

    def worker_log(self, kind: str, worker: WorkerInfo) -> Path:
        """``user/<kind>/<node>/<process>.<kind>.txt``: what a worker's entry script printed
        (``stdout``, ``stderr``) or logged (``entry_script_log``: ``.log.txt``), as Azure
        lays them out."""
        suffix = "log" if kind == "entry_script_log" else kind
        return self.user / kind / worker.node_name / f"{worker.process}.{suffix}.txt"

    def relative(self, path: Path) -> str:
        """``path`` relative to the ``logs/`` folder, with ``/`` (as the readme names it)."""
        return path.relative_to(self.root).as_posix()

    def profile_files(self) -> list[Path]:
        """The ``.prof`` files of ``--profiling_module`` (``[]`` when it was off)."""
        return sorted(self.profile.glob("*/*.prof")) if self.profile.is_dir() else []

    @staticmethod
    def error_file(worker: WorkerInfo) -> str:
        """``user/error/<node>/<process>.txt``, relative to ``root``: a worker's tracebacks."""
        return f"user/error/{worker.node}/{worker.process}.txt"

    def profile_file(self, worker: WorkerInfo) -> Path:
        """``sys/profile/<node>/<process>.prof``: a worker's run() profile (pstats format)."""
        return self.profile / worker.node_name / f"{worker.process}.prof"


LAYOUT = StepLogs(Path())  # the layout itself: LAYOUT.relative(LAYOUT.readme) == "readme.txt"


@dataclass(frozen=True, slots=True)
class Attempt:
    """One row of ``processed_mini-batches.csv``; ``start`` in seconds since the epoch."""

    mini_batch_id: str
    picked_count: int
    process: str  # "<node>/<process>"
    start: float
    total: int
    succeeded: int
    failed: int
    elapsed: float
    process_seconds: float
    run_seconds: float
    status: str
    category: str
    message: str
    detail: str

    @property
    def end(self) -> float:
        return self.start + self.elapsed

    @property
    def ok(self) -> bool:
        """The attempt processed every item (the counting rule of ``counters.attempt_failed``)."""
        return self.status == "Succeeded" and self.failed == 0


_INTS = ("Picked Count", "Total", "Succeeded", "Failed")
_FLOATS = ("Elapsed Seconds", "Process Seconds", "Run Method Seconds")
_TEXTS = ("Mini-batch Id", "Process", "Status", "Error Category", "Error Message",
          "Mini-batch Detail")


@dataclass(frozen=True)
class AttemptTable:
    """The attempts of ``processed_mini-batches.csv`` as columns (numpy arrays, one entry
    per attempt, in file order): what report.html and the tuning profile compute over, in
    bulk; :meth:`rows` gives :class:`Attempt` objects where one at a time is wanted.

    ``process`` holds indices into ``processes`` (the worker names, sorted); ``mini_batch_id``
    is ASCII bytes (``S<width>``; ``astype(str)`` gives texts) unless an id is not ASCII;
    ``message`` and ``detail`` stay pyarrow arrays until a row is asked for.
    """

    mini_batch_id: Any
    picked_count: Any
    process: Any  # index into processes
    start: Any  # seconds since the epoch
    total: Any
    succeeded: Any
    failed: Any
    elapsed: Any
    process_seconds: Any
    run_seconds: Any
    status: Any
    category: Any
    message: Any  # pyarrow
    detail: Any  # LazyText (or pyarrow): read from the file when a row asks for it
    ok: Any  # the attempt processed every item (counters.attempt_failed's rule)
    processes: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.start)

    @property
    def end(self) -> Any:
        return self.start + self.elapsed

    def take(self, selection: Any) -> AttemptTable:
        """The attempts at ``selection`` (a boolean mask or indices)."""
        import numpy as np  # noqa: PLC0415

        selection = np.asarray(selection)
        picked = np.nonzero(selection)[0] if selection.dtype == np.bool_ \
            else selection.astype(np.int64)
        indices = _arrow_indices(picked)
        values: dict[str, Any] = {f.name: getattr(self, f.name)[picked] for f in fields(self)
                                  if f.name not in ("message", "detail", "processes")}
        detail = self.detail.take(picked) if isinstance(self.detail, LazyText) \
            else self.detail.take(indices)
        return AttemptTable(**values, message=self.message.take(indices), detail=detail,
                            processes=self.processes)

    def row(self, index: int) -> Attempt:
        identifier = self.mini_batch_id[index]
        if isinstance(identifier, bytes):
            identifier = identifier.decode("ascii")
        return Attempt(str(identifier), int(self.picked_count[index]),
                       self.processes[int(self.process[index])], float(self.start[index]),
                       int(self.total[index]), int(self.succeeded[index]),
                       int(self.failed[index]), float(self.elapsed[index]),
                       float(self.process_seconds[index]), float(self.run_seconds[index]),
                       str(self.status[index]), str(self.category[index]),
                       str(self.message[index].as_py() or ""),
                       str(self.detail[index].as_py() or ""))

    def rows(self) -> list[Attempt]:
        return [self.row(i) for i in range(len(self))]

    def __iter__(self) -> Iterator[Attempt]:
        return (self.row(i) for i in range(len(self)))

    @classmethod
    def empty(cls) -> AttemptTable:
        import numpy as np  # noqa: PLC0415
        import pyarrow as pa  # noqa: PLC0415

        texts = ("mini_batch_id", "status", "category")
        integers = ("picked_count", "process", "total", "succeeded", "failed")
        values: dict[str, Any] = {f.name: np.array([], dtype=object if f.name in texts else
                                   np.int64 if f.name in integers else
                                   bool if f.name == "ok" else float)
                  for f in fields(cls) if f.name not in ("message", "detail", "processes")}
        blank = pa.chunked_array([], type=pa.string())
        return cls(**values, message=blank, detail=blank)


def read_attempts(logs: StepLogs) -> AttemptTable:
    """The attempts of ``processed_mini-batches.csv`` (empty when the file is absent).

    A row that does not parse (torn by a killed run, two rows run together, a number that
    is not one) is skipped; a file without the job report's columns raises
    :class:`ValueError` naming the file. Read by pyarrow a block at a time, each block
    made compact before the next is read (:class:`_Columns`), so reading a million attempts
    holds about 110 bytes each, not the file's text (and the heap is kept from growing
    past that: :mod:`mlpipe.runtime.heap`): the driver writes report.html from here while
    its step runs.
    """
    if not logs.processed.is_file():
        return AttemptTable.empty()
    import pyarrow as pa  # noqa: PLC0415 - only readers of attempts pay for the imports

    from mlpipe.runtime.heap import keep_heap_small  # noqa: PLC0415

    keep_heap_small()

    path = logs.processed
    with open(path, newline="", encoding="utf-8", errors="replace") as handle:
        header = next(csv.reader(handle), None) or []
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    if missing:
        raise ValueError(f"{path} is not a processed_mini-batches.csv: it has no column "
                         f"{', '.join(repr(name) for name in missing)}")
    typed = {**dict.fromkeys(_INTS, pa.int64()), **dict.fromkeys(_FLOATS, pa.float64()),
             **dict.fromkeys((*_TEXTS, "Process Start Time"), pa.string())}
    try:
        columns = _Columns(path, header)
        for batch in _csv_batches(path, {k: v for k, v in typed.items() if k in header}):
            columns.add(batch, typed=True)
    except (pa.ArrowInvalid, UnicodeDecodeError):  # a value that is not a number: per value
        columns = _Columns(path, header)
        for batch in _csv_batches(path, dict.fromkeys(header, pa.string())):
            columns.add(batch, typed=False)
    return columns.table()


READ_BLOCK_BYTES = 4 << 20  # the CSV text held at once while reading attempts


def _csv_batches(path: Path, column_types: dict[str, Any],
                 include: list[str] | None = None) -> Iterator[Any]:
    """The file's rows as record batches of about ``READ_BLOCK_BYTES`` of text each (only
    the columns ``include`` names, when given).

    The file is cut into pieces at row ends here and each piece parsed on its own, rather
    than by pyarrow's streaming reader, which holds more of a large file the larger it is.
    A newline ends a row where the quotes before it (in the piece) are even in number:
    quotes inside values are doubled, so a newline inside a quoted traceback is never a cut.
    """
    import numpy as np  # noqa: PLC0415
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.csv as pacsv  # noqa: PLC0415

    parse = pacsv.ParseOptions(newlines_in_values=True, invalid_row_handler=lambda _row: "skip")
    convert = pacsv.ConvertOptions(column_types=column_types, strings_can_be_null=False,
                                   include_columns=include or [])

    def batches(piece: bytes) -> Iterator[Any]:
        # one thread: Arrow's pool threads still alive when the driver's interpreter exits
        # abort it ("terminate called without an active exception", apache/arrow#34314)
        read = pacsv.ReadOptions(encoding="utf8", use_threads=False,
                                 block_size=max(len(piece), 1 << 20) + 1)
        yield from pacsv.read_csv(pa.BufferReader(piece), read_options=read,
                                  parse_options=parse, convert_options=convert).to_batches()

    def row_end(text: bytes) -> int:
        """Where the last whole row of ``text`` ends (0: no whole row)."""
        codes = np.frombuffer(text, dtype=np.uint8)
        newlines = np.flatnonzero(codes == 10)
        quotes = np.flatnonzero(codes == 34)
        even = newlines[(np.searchsorted(quotes, newlines) & 1) == 0]
        return int(even[-1]) + 1 if len(even) else 0

    with open(path, "rb") as handle:
        header = handle.readline()  # the column names: no quotes, no newline inside
        text = b""
        while header:
            more = handle.read(READ_BLOCK_BYTES)
            text += more
            cut = row_end(text) if more else len(text)
            if cut:
                yield from batches(header + text[:cut])
                text = text[cut:]
            if not more:
                return


class _Columns:
    """The compact columns of :class:`AttemptTable`, gathered a record batch at a time.

    Numbers become numpy arrays; ``Status``, ``Error Category`` and ``Process`` (a handful
    of distinct values) are stored once each and referenced per row; ``Mini-batch Id``
    becomes fixed-width ASCII bytes (object strings where an id is not ASCII); the message
    stays an Arrow array and the detail is read later, for the rows asked for
    (:class:`LazyText`). Rows that do not parse are dropped batch by batch.

    Each column is one array sized from the file's length and grown by doubling
    (:class:`_Growing`), not a list of per-batch pieces: pieces kept between each batch's
    temporaries would pin the heap, and the process would keep several times the table's
    size after reading it."""

    def __init__(self, path: Path, header: list[str]) -> None:
        self.path = path
        self.header = header
        self.size = path.stat().st_size
        self.rows = 0  # rows parsed so far (a kept row's position: LazyText)
        self.dropped = False
        self.columns: dict[str, _Growing] = {}
        self.messages: list[Any] = []
        self.shared: dict[str, str] = {}  # one str object per distinct text
        self.processes: dict[str, int] = {}  # name -> index, in order of appearance

    def add(self, batch: Any, *, typed: bool) -> None:
        import numpy as np  # noqa: PLC0415

        names = batch.schema.names
        count = batch.num_rows
        if not count:
            return
        if typed:
            numbers = {name: _floats(batch.column(name)) for name in (*_INTS, *_FLOATS)}
        else:
            numbers = {name: _coerce(batch.column(name).to_numpy(zero_copy_only=False))
                       for name in (*_INTS, *_FLOATS)}
        starts = _epoch_seconds(batch.column("Process Start Time"))
        good = np.isfinite(starts)
        for values in numbers.values():
            good &= np.isfinite(values)
        good &= numbers["Elapsed Seconds"] >= 0
        keep = None if bool(good.all()) else np.nonzero(good)[0]
        if keep is not None and not self.dropped:  # the first row dropped: every earlier
            self.dropped = True  # row was kept, at its own place
            self._add("position", np.arange(self.rows, dtype=np.int64))
        if self.dropped:
            positions = np.arange(self.rows, self.rows + count, dtype=np.int64)
            self._add("position", positions if keep is None else positions[keep])
        self.rows += count

        def pick(values: Any) -> Any:
            return values if keep is None else values[keep]

        def arrow(name: str) -> Any:
            values = batch.column(name) if name in names else _blank(count)
            return values if keep is None else values.take(_arrow_indices(keep))

        failed = pick(numbers["Failed"])
        status = pick(self._shared_texts(arrow("Status")))
        self._add("mini_batch_id", pick(_ids(batch.column("Mini-batch Id"))))
        self._add("picked_count", pick(numbers["Picked Count"]))
        self._add("process", pick(self._process_indices(arrow("Process"))))
        self._add("start", pick(starts))
        self._add("total", pick(numbers["Total"]))
        self._add("succeeded", pick(numbers["Succeeded"]))
        self._add("failed", failed)
        self._add("elapsed", pick(numbers["Elapsed Seconds"]))
        self._add("process_seconds", pick(numbers["Process Seconds"]))
        self._add("run_seconds", pick(numbers["Run Method Seconds"]))
        self._add("status", status)
        self._add("category", pick(self._shared_texts(arrow("Error Category"))))
        self._add("ok", (status == "Succeeded") & (failed == 0))
        self.messages.append(arrow("Error Message"))

    def _add(self, name: str, values: Any) -> None:
        column = self.columns.get(name)
        if column is None:
            rows_per_byte = self.rows / max(self.size, 1) if self.rows else 0
            column = self.columns[name] = _Growing(
                _COLUMN_TYPES.get(name, values.dtype), int(self.size * rows_per_byte * 1.05)
                + len(values))
        column.add(values)

    def _shared_texts(self, values: Any) -> Any:
        """An object array whose equal texts are one str object."""
        import numpy as np  # noqa: PLC0415

        encoded = values.dictionary_encode()
        texts = encoded.dictionary.to_pylist()
        lookup = np.array([self.shared.setdefault(text, text) for text in texts] or [""],
                          dtype=object)
        return lookup[_plain(encoded.indices)]

    def _process_indices(self, values: Any) -> Any:
        import numpy as np  # noqa: PLC0415

        encoded = values.dictionary_encode()
        local = np.array([self.processes.setdefault(str(name), len(self.processes))
                          for name in encoded.dictionary.to_pylist()] or [0], dtype=np.int64)
        return local[_plain(encoded.indices)]

    def table(self) -> AttemptTable:
        import numpy as np  # noqa: PLC0415
        import pyarrow as pa  # noqa: PLC0415

        if "start" not in self.columns:
            return AttemptTable.empty()
        values = {name: column.array() for name, column in self.columns.items()}
        kept = values.pop("position", None)
        names = list(self.processes)
        order = sorted(range(len(names)), key=lambda i: names[i])
        remap = np.empty(max(len(names), 1), dtype=np.int64)
        remap[order] = np.arange(len(names))
        values["process"] = remap[values["process"]]
        count = len(values["start"])
        values["message"] = pa.chunked_array(self.messages, type=pa.string())
        values["detail"] = LazyText(self.path, "Mini-batch Detail" if "Mini-batch Detail"
                                    in self.header else None, count, kept)
        return AttemptTable(**values, processes=tuple(names[i] for i in order))


_COLUMN_TYPES = {**dict.fromkeys(("picked_count", "total", "succeeded", "failed", "process",
                                  "position"), "int64"),
                 **dict.fromkeys(("start", "elapsed", "process_seconds", "run_seconds"),
                                 "float64"),
                 "status": "object", "category": "object", "ok": "bool"}


class _Growing:
    """One column of :class:`_Columns`: an array with room to spare, doubled when full."""

    def __init__(self, dtype: Any, capacity: int) -> None:
        import numpy as np  # noqa: PLC0415

        self.values = np.empty(max(capacity, 1), dtype=dtype)
        self.count = 0

    def add(self, values: Any) -> None:
        import numpy as np  # noqa: PLC0415

        end = self.count + len(values)
        kind = np.result_type(self.values.dtype, values.dtype) \
            if values.dtype.kind in "SO" or self.values.dtype.kind in "SO" else self.values.dtype
        if end > len(self.values) or kind != self.values.dtype:
            grown = np.empty(max(end, 2 * len(self.values)) if end > len(self.values)
                             else len(self.values), dtype=kind)
            grown[:self.count] = self.values[:self.count]
            self.values = grown
        self.values[self.count:end] = values
        self.count = end

    def array(self) -> Any:
        """The values, the spare room given back (a copy only when much is spare)."""
        if self.count < len(self.values) * 0.9:
            return self.values[:self.count].copy()
        return self.values[:self.count]


class LazyText:
    """A text column of ``processed_mini-batches.csv`` read only when asked for, and then
    only at the rows asked for: ``Mini-batch Detail`` (the files of each mini-batch) is the
    widest column, and report.html shows it for a handful of attempts.

    ``positions`` are the rows' places among the rows the file parses to (``None``: all of
    them, in order). Indexing reads the column once (each value a pyarrow scalar, as of
    a ``ChunkedArray``); :meth:`take` narrows the rows first, so ``table.take(few).rows()``
    reads only those few values. A row the file no longer has reads as ``""``."""

    def __init__(self, path: Path, column: str | None, count: int,
                 positions: Any = None) -> None:
        self.path = path
        self.column = column
        self.count = count
        self.positions = positions
        self._values: Any = None

    def __len__(self) -> int:
        return self.count

    def take(self, indices: Any) -> LazyText:
        import numpy as np  # noqa: PLC0415

        picked = np.asarray(_plain(indices) if hasattr(indices, "buffers") else indices,
                            dtype=np.int64)
        positions = picked if self.positions is None else self.positions[picked]
        return LazyText(self.path, self.column, len(picked), positions)

    def __getitem__(self, index: int) -> Any:
        if self._values is None:
            self._values = self._read()
        return self._values[index]

    def _read(self) -> Any:
        import numpy as np  # noqa: PLC0415
        import pyarrow as pa  # noqa: PLC0415

        blank = _blank(self.count)
        if self.column is None or not self.count:
            return blank
        wanted = self.positions
        if wanted is not None:  # positions in file order, then each back to its place
            order = np.argsort(wanted, kind="stable")
            wanted = wanted[order]
        found, seen = [], 0
        try:
            for batch in _csv_batches(self.path, {self.column: pa.string()}, [self.column]):
                values = batch.column(0)
                if wanted is None:
                    found.append(values)
                else:
                    low, high = np.searchsorted(wanted, [seen, seen + len(values)])
                    if high > low:
                        found.append(values.take(_arrow_indices(wanted[low:high] - seen)))
                seen += len(values)
                if wanted is not None and (not len(wanted) or seen > wanted[-1]):
                    break
        except (OSError, pa.ArrowInvalid, UnicodeDecodeError):
            return blank
        texts = pa.concat_arrays(found) if found else _blank(0)
        if len(texts) < self.count:  # the file lost rows since: blanks for them
            texts = pa.concat_arrays([texts, _blank(self.count - len(texts))])
        if wanted is None:
            return texts
        back = np.empty(len(order), dtype=np.int64)
        back[order] = np.arange(len(order))
        return texts.take(_arrow_indices(back))


def _ids(values: Any) -> Any:
    """Mini-batch ids as fixed-width ASCII bytes (20 bytes for a 20-character id, where a
    str object takes 77), or str objects where one is not ASCII."""
    import numpy as np  # noqa: PLC0415
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.compute as pc  # noqa: PLC0415

    if not len(values) or not bool(pc.all(pc.string_is_ascii(values)).as_py()):
        return np.array(values.to_pylist(), dtype=object)
    width = max(int(pc.max(pc.utf8_length(values)).as_py() or 0), 1)
    padded = pc.utf8_rpad(values, width, padding="\0")  # numpy drops trailing NULs
    fixed = pc.cast(pc.cast(padded, pa.binary()), pa.binary(width))
    return np.frombuffer(fixed.buffers()[1], dtype=f"S{width}", count=len(fixed),
                         offset=fixed.offset * width).copy()


def _blank(count: int) -> Any:
    """``count`` empty texts as an Arrow array (``pa.array`` of a list would import pandas)."""
    import numpy as np  # noqa: PLC0415
    import pyarrow as pa  # noqa: PLC0415

    offsets = pa.py_buffer(np.zeros(count + 1, dtype=np.int32))
    return pa.Array.from_buffers(pa.string(), count, [None, offsets, pa.py_buffer(b"")])


def _arrow_indices(values: Any) -> Any:
    """Row numbers (numpy) as an Arrow int64 array, sharing their memory and without
    ``pa.array``'s look for pandas."""
    import numpy as np  # noqa: PLC0415
    import pyarrow as pa  # noqa: PLC0415

    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def _floats(values: Any) -> Any:
    """A numeric Arrow array as numpy floats, ``nan`` where a value is missing."""
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.compute as pc  # noqa: PLC0415

    values = pc.cast(values, pa.float64())
    if values.null_count:
        values = pc.fill_null(values, float("nan"))
    return _plain(values).copy()  # a copy: the batch's memory is not kept alive


def _plain(values: Any) -> Any:
    """A null-free Arrow array of numbers as numpy, without pyarrow's pandas path (its
    ``to_numpy(zero_copy_only=False)`` imports pandas: 35 MB more in the driver)."""
    import numpy as np  # noqa: PLC0415
    import pyarrow as pa  # noqa: PLC0415

    if hasattr(values, "combine_chunks"):
        values = values.combine_chunks()
    kind = "f" if pa.types.is_floating(values.type) else \
        "i" if pa.types.is_signed_integer(values.type) else "u"
    width = values.type.bit_width // 8
    return np.frombuffer(values.buffers()[1], dtype=f"{kind}{width}", count=len(values),
                         offset=values.offset * width)


def _coerce(values: Any) -> Any:
    import numpy as np  # noqa: PLC0415

    out = np.full(len(values), np.nan)
    for i, value in enumerate(values):
        try:
            out[i] = float(value)
        except (TypeError, ValueError):
            continue
    return out


def _epoch_seconds(texts: Any) -> Any:
    """``2020-10-24T02:59:04.227237`` (UTC, as the runtime writes it; an offset is honoured)
    as seconds since the epoch; ``nan`` where a text is no time."""
    import numpy as np  # noqa: PLC0415
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.compute as pc  # noqa: PLC0415

    for kind in (pa.timestamp("us"), pa.timestamp("us", tz="UTC")):
        try:
            return _floats(pc.cast(texts, kind).cast(pa.int64())) / 1e6
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
    out = np.full(len(texts), np.nan)
    for i, value in enumerate(texts.to_pylist()):
        try:
            moment = datetime.fromisoformat(str(value))
        except ValueError:
            continue
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        out[i] = moment.timestamp()
    return out


def iter_attempts(logs: StepLogs) -> Iterator[Attempt]:
    """The attempts of :func:`read_attempts`, one at a time."""
    return iter(read_attempts(logs))


def attempt_header(record: AttemptRecord) -> str:
    """``mini-batch <id> attempt <n> on <node>/<process> at <UTC time>``: how a failed
    attempt's block is headed in its error file (an error group's first occurrence links
    to it)."""
    moment = record.start_time
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return (f"mini-batch {record.mini_batch_id} attempt {record.picked_count} on "
            f"{record.worker.node}/{record.worker.process} at "
            f"{moment.isoformat(timespec='microseconds')}")


def init_failure_header(worker: WorkerInfo, *, ran: bool = True) -> str:
    """``worker 0/process001 (pid 4242): init() failed`` (``ran``), else ``... could not
    start``: how a failed worker start is headed in its error file."""
    pid = f" (pid {worker.pid})" if worker.pid is not None else ""
    what = "init() failed" if ran else "could not start"
    return f"worker {worker.node}/{worker.process}{pid}: {what}"


def first_line(message: str) -> str:
    """The line of an error message that says what went wrong: the last line of a
    traceback, else the first line."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return lines[-1] if lines and lines[0].startswith("Traceback") else (lines[0] if lines else "")


def describe_detail(detail: str, limit: int = 160) -> str:
    """A mini-batch's ``Mini-batch Detail`` for people: ``files: a.png, b.png``,
    ``partition_key_value: {"k": 1}`` or the text itself, at most ``limit`` characters."""
    try:
        value = json.loads(detail) if detail else None
    except ValueError:
        value = None
    if isinstance(value, dict) and "partition_key_value" in value:
        text = f"partition_key_value: {json.dumps(value['partition_key_value'])}"
    elif isinstance(value, dict) and isinstance(value.get("files"), list):
        text = "files: " + ", ".join(str(name) for name in value["files"])
    else:
        text = detail
    return text if len(text) <= limit else text[:limit - 3] + "..."


# -- runs.json ----------------------------------------------------------------------------
@dataclass
class RunEntry:
    """One run of a step (a new run, a resume or a rerun), as ``runs.json`` keeps it.

    ``settings`` are those the run used (``mini_batch_size`` as written, ``items_per_mini_batch``,
    ``max_concurrency_per_instance``, ``instance_count``, ``workers``, ``max_retries``,
    ``timeout``, ``partition_keys``, ``cores``, ``memory_mb``); ``tally`` is the
    :class:`mlpipe.runtime.tuning.profile.ProfileTally` of its attempts; ``errors`` its
    error groups, as job_result.txt counts them; ``chart`` what report.html draws of it.
    """

    started: float  # seconds since the epoch
    ended: float | None = None
    status: str = "Running"
    reused: int = 0
    settings: dict[str, Any] = field(default_factory=dict)
    startup_seconds: dict[str, float] = field(default_factory=dict)  # worker -> start-up
    tally: dict[str, Any] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # the step's totals at this run's end
    # what report.html draws of the run, bounded (mlpipe.runtime.reports.run_chart.RunChart)
    chart: dict[str, Any] = field(default_factory=dict)

    def contains(self, moment: float, until: float | None) -> bool:
        """``moment`` falls in this run (``until``: the next run's start)."""
        return self.started - 1.0 <= moment and (until is None or moment < until - 1e-6)


def read_runs(logs: StepLogs) -> list[RunEntry]:
    """The runs recorded in ``runs.json``, oldest first (``[]`` when absent or unreadable)."""
    try:
        data = json.loads(logs.runs.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    runs = []
    for entry in data.get("runs", []) if isinstance(data, dict) else []:
        try:
            runs.append(RunEntry(**entry))
        except TypeError:
            continue
    return runs


def write_runs(logs: StepLogs, runs: list[RunEntry]) -> None:
    """Write ``runs.json`` atomically."""
    logs.job_report.mkdir(parents=True, exist_ok=True)
    temporary = logs.runs.with_name(logs.runs.name + ".tmp")
    # one line: json's C encoder (an indented file takes the pure-Python one, four times as
    # long for a run's chart of 500 attempts)
    temporary.write_text(json.dumps({"runs": [vars(run) for run in runs]}, default=str),
                         encoding="utf-8")
    temporary.replace(logs.runs)


def split_by_run(attempts: AttemptTable, runs: list[RunEntry]) -> list[AttemptTable]:
    """The attempts of each run, by start time (one table per run; ``[attempts]`` without
    runs)."""
    if not runs:
        return [attempts]
    import numpy as np  # noqa: PLC0415

    bounds = np.array([run.started - 1e-6 for run in runs[1:]])
    which = np.searchsorted(bounds, attempts.start, side="right")
    counts = np.bincount(which, minlength=len(runs))
    if len(attempts) and counts.max() == len(attempts):  # one run holds them all: no copy
        return [attempts if count else attempts.take(which < 0) for count in counts]
    return [attempts.take(which == index) for index in range(len(runs))]


__all__ = ["LAYOUT", "PROCESSED_COLUMNS", "Attempt", "AttemptTable", "RunEntry", "StepLogs",
           "attempt_header", "describe_detail", "first_line", "init_failure_header",
           "iter_attempts", "read_attempts", "read_runs", "split_by_run", "write_runs"]
