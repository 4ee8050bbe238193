"""``logs/sys/job_report/``: processed_mini-batches.csv, process_summary.csv, node_summary.csv."""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from functools import reduce
from itertools import groupby
from operator import add, attrgetter
from pathlib import Path
from typing import IO, Any

from mlpipe.runtime.counters import AttemptTally
from mlpipe.runtime.faults import naming
from mlpipe.runtime.records import AttemptRecord, WorkerInfo
from mlpipe.runtime.step_logs import PROCESSED_COLUMNS, StepLogs
from mlpipe.runtime.textio import open_text

_TOTALS_COLUMNS = (
    "Mini-batches",
    "Failed Mini-batches",
    "Items",
    "Succeeded Items",
    "Failed Items",
    "Busy Seconds",
    "Run Method Seconds",
    "Process Seconds",
    "Utilization Percent",
)
PROCESS_SUMMARY_COLUMNS = ("Node", "Process", "Pid", *_TOTALS_COLUMNS)
NODE_SUMMARY_COLUMNS = ("Node", "Processes", *_TOTALS_COLUMNS)
FLUSH_EVERY_SECONDS = 1.0
_WORKER, _ELAPSED, _RUN, _CPU = map(attrgetter, (
    "worker", "elapsed_seconds", "run_method_seconds", "process_seconds"))
_plain_detail = json.JSONEncoder(default=str, sort_keys=True, ensure_ascii=False).encode


def _fast_detail_encoder() -> Callable[[Any], str]:
    """``_plain_detail`` through the C encoder built once, not at every call (a third of
    the time; details are plain JSON data without cycles); the plain one where CPython's
    encoder is missing or its signature differs."""
    make = getattr(json.encoder, "c_make_encoder", None)
    sample = {"files": ["/a/\u00e9.txt", 1.5, None], "partition_key_value": {"k": 2}}
    try:
        encode = make(None, str, json.encoder.encode_basestring, None, ": ", ", ", True,
                      False, True)  # type: ignore[misc]
        if "".join(encode(sample, 0)) == _plain_detail(sample):
            return lambda value: "".join(encode(value, 0))
    except Exception:  # noqa: BLE001 - any surprise: the plain encoder
        pass
    return _plain_detail


_encode_detail = _fast_detail_encoder()


_SECONDS: dict[float, str] = {}  # whole second -> its text: attempts share seconds


def utc_text(moment: datetime, epoch: float | None = None) -> str:
    """``2020-10-24T02:59:04.227237``: UTC, no offset, as Azure writes ``Process Start Time``
    (``epoch``: ``moment.timestamp()``, when the caller has it)."""
    if moment.tzinfo is timezone.utc:  # the driver's records: the second's text is reused
        second = (moment.timestamp() if epoch is None else epoch) // 1
        text = _SECONDS.get(second)
        if text is None:
            if len(_SECONDS) > 4096:
                _SECONDS.clear()
            text = _SECONDS[second] = moment.replace(microsecond=0, tzinfo=None).isoformat()
        return f"{text}.{moment.microsecond:06d}"
    if moment.tzinfo is None:
        return moment.isoformat(timespec="microseconds")
    text = moment.isoformat(timespec="microseconds")
    if text.endswith("+00:00"):
        return text[:-6]
    return moment.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds")


_quote_text = json.encoder.encode_basestring  # a string as the detail encoder writes it


def detail_text(detail: Mapping[str, Any]) -> str:
    """The ``Mini-batch Detail`` column: the mini-batch's detail as JSON (that of a files
    mini-batch, one per attempt of most steps, joined by hand: the same text in a third of
    the time)."""
    if not detail:
        return "{}"
    if len(detail) == 1:
        files = detail.get("files")
        if type(files) is tuple or type(files) is list:
            try:
                return '{"files": [' + ", ".join(map(_quote_text, files)) + "]}"
            except TypeError:  # not all strings: the encoder's own text
                pass
    return _encode_detail(detail)


def process_label(worker: WorkerInfo) -> str:
    """``0/process003``: the node and process, as in the log file paths."""
    return f"{worker.node}/{worker.process}"


def csv_field(text: str) -> str:
    """``text`` as :func:`csv.writer` writes a field in its default (excel) dialect: in
    quotes, with its quotes doubled, when it holds a comma, a quote or a line break."""
    if '"' in text:
        return '"' + text.replace('"', '""') + '"'
    if "," in text or "\n" in text or "\r" in text:
        return f'"{text}"'
    return text


def processed_row(record: AttemptRecord, process: str, epoch: float | None = None) -> str:
    """The line of ``processed_mini-batches.csv`` for ``record`` (``process``: its
    :func:`process_label`; ``epoch``: its start time's ``timestamp()``, when known), as
    :func:`csv.writer` writes it: built as one string, not a tuple for the csv module to
    join, since there is one per attempt."""
    (mini_batch_id, _, picked_count, _, start_time, total, succeeded, failed, elapsed,
     process_seconds, run_seconds, status, category, message, _, detail, *_) = record
    return (f"{csv_field(mini_batch_id)},{picked_count},{csv_field(process)},"
            f"{utc_text(start_time, epoch)},{total},{succeeded},{failed},{elapsed:.6f},"
            f"{process_seconds:.6f},{run_seconds:.6f},{csv_field(status)},"
            f"{csv_field(category) if category else ''},"
            f"{csv_field(message) if message else ''},"
            f"{_quoted(detail_text(detail)) if detail else '{}'}\r\n")


def _quoted(text: str) -> str:
    """A JSON object as a CSV field: it always holds a quote (every key is quoted), so it
    is quoted, with its quotes doubled (:func:`csv_field` of a detail)."""
    return '"' + text.replace('"', '""') + '"'


class ProcessedMiniBatchesCsv:
    """Streams one row per attempt to ``processed_mini-batches.csv``.

    Rows go through a 64 KiB buffer and reach the disk at least once a second
    (and at :meth:`close`): no per-row flush, fsync or reopen. With ``append``
    (a resumed step) rows are added after those of the earlier run, under the
    same header; a file with another header is kept as ``<name>.previous.csv``.
    """

    def __init__(self, path: Path, *, append: bool = False) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        keep = append and _has_header(path, PROCESSED_COLUMNS)
        self.appended = keep  # to an earlier run's rows
        if append and not keep and path.is_file() and path.stat().st_size:
            path.replace(path.with_name(path.stem + ".previous.csv"))
        self._closing = ExitStack()  # owns _file
        # The file lives as long as the report; close() (through _closing) ends it.
        self._file: IO[str] | None = self._closing.enter_context(
            open_text(path, "a" if keep else "w", newline="", buffering=1 << 16))
        with naming(path):
            if not keep:
                csv.writer(self._file).writerow(PROCESSED_COLUMNS)
            self._file.flush()
        self._next_flush = time.monotonic() + FLUSH_EVERY_SECONDS

    def write(self, record: AttemptRecord, process: str | None = None) -> None:
        """One row for ``record`` (``process``: its :func:`process_label`, if known)."""
        self.write_all((record,), (process or process_label(record.worker),))

    def write_all(self, records: Sequence[AttemptRecord], processes: Sequence[str],
                  epochs: Sequence[float] | None = None) -> None:
        """One row per record, in one write (``processes``: their :func:`process_label`;
        ``epochs``: their start times' ``timestamp()``, when known)."""
        if self._file is None:
            return
        try:
            self._write("".join(map(processed_row, records, processes, epochs))
                        if epochs is not None else "".join(map(processed_row, records,
                                                               processes)))
        except OSError as error:
            if error.filename is None:
                error.filename = str(self.path)
            raise

    def _write(self, text: str) -> None:
        assert self._file is not None
        self._file.write(text)
        now = time.monotonic()
        if now >= self._next_flush:
            self._file.flush()
            self._next_flush = now + FLUSH_EVERY_SECONDS

    def close(self) -> None:
        self._file = None
        with naming(self.path):
            self._closing.close()


def _has_header(path: Path, columns: tuple[str, ...]) -> bool:
    try:
        with open_text(path, newline="") as handle:
            first = next(csv.reader(handle), None)
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    return first is not None and tuple(first) == columns


@dataclass
class WorkerTotals(AttemptTally):
    """What one worker process did, over all its attempts (retries included)."""

    node: int
    process: str
    pid: int | None = None
    busy_seconds: float = 0.0
    run_method_seconds: float = 0.0
    process_seconds: float = 0.0

    def add(self, record: AttemptRecord) -> None:
        self.add_all((record,))

    def add_all(self, records: Sequence[AttemptRecord]) -> None:
        """Add this worker's ``records``, in order (sums as one by one gives them)."""
        pid = next((r.worker.pid for r in reversed(records) if r.worker.pid is not None), None)
        if pid is not None:
            self.pid = pid
        self.count_all(records)
        self.busy_seconds = reduce(add, map(_ELAPSED, records), self.busy_seconds)
        self.run_method_seconds = reduce(add, map(_RUN, records), self.run_method_seconds)
        self.process_seconds = reduce(add, map(_CPU, records), self.process_seconds)

    def merge(self, other: WorkerTotals) -> None:
        """Add ``other``'s counts and seconds to these (not its node, process or pid)."""
        for total in fields(self):
            if total.name not in ("node", "process", "pid"):
                setattr(self, total.name, getattr(self, total.name) + getattr(other, total.name))


class WorkerStats:
    """Per-process totals, keyed by (node, process), in the order workers were first seen."""

    def __init__(self) -> None:
        self.by_process: dict[tuple[int, str], WorkerTotals] = {}

    def register(self, worker: WorkerInfo) -> None:
        totals = self.by_process.get((worker.node, worker.process))
        if totals is None:
            self.by_process[(worker.node, worker.process)] = WorkerTotals(
                worker.node, worker.process, worker.pid)
        elif worker.pid is not None:
            totals.pid = worker.pid

    def add(self, record: AttemptRecord) -> None:
        self.add_all((record,))

    def add_all(self, records: Sequence[AttemptRecord]) -> None:
        """Add ``records`` to their processes' totals, a run of one worker's at a time."""
        for worker, run in groupby(records, _WORKER):
            key = (worker.node, worker.process)
            totals = self.by_process.get(key)
            if totals is None:
                totals = self.by_process[key] = WorkerTotals(*key, worker.pid)
            totals.add_all(list(run))

    def write_summaries(self, logs: StepLogs, wall_seconds: float) -> None:
        """Write process_summary.csv and node_summary.csv; utilisation is busy / wall time."""
        logs.job_report.mkdir(parents=True, exist_ok=True)
        processes = sorted(self.by_process.values(), key=lambda t: (t.node, t.process))
        _write_csv(logs.process_summary, PROCESS_SUMMARY_COLUMNS, [
            (t.node, t.process, "" if t.pid is None else t.pid, *_totals_row(t),
             _percent(t.busy_seconds, wall_seconds))
            for t in processes
        ])
        nodes: dict[int, tuple[WorkerTotals, int]] = {}
        for t in processes:
            node_totals, count = nodes.get(t.node, (WorkerTotals(t.node, ""), 0))
            node_totals.merge(t)
            nodes[t.node] = (node_totals, count + 1)
        _write_csv(logs.node_summary, NODE_SUMMARY_COLUMNS, [
            (node, count, *_totals_row(t), _percent(t.busy_seconds, wall_seconds * count))
            for node, (t, count) in sorted(nodes.items())
        ])


def _totals_row(t: WorkerTotals) -> tuple[Any, ...]:
    return (t.processed, t.failed, t.items_total, t.items_succeeded, t.items_failed,
            f"{t.busy_seconds:.3f}", f"{t.run_method_seconds:.3f}", f"{t.process_seconds:.3f}")


def _percent(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.1f}" if whole > 0 else ""


def _write_csv(path: Path, header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
    with open_text(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
