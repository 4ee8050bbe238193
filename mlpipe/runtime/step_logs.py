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

from mlpipe.runtime.records import WorkerInfo

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

    ``process`` holds indices into ``processes`` (the worker names, sorted); ``message`` and
    ``detail`` stay pyarrow arrays until a row is asked for.
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
    detail: Any  # pyarrow
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
        import pyarrow as pa  # noqa: PLC0415

        selection = np.asarray(selection)
        picked = np.nonzero(selection)[0] if selection.dtype == np.bool_ \
            else selection.astype(np.int64)
        indices = pa.array(picked, type=pa.int64())
        values: dict[str, Any] = {f.name: getattr(self, f.name)[picked] for f in fields(self)
                                  if f.name not in ("message", "detail", "processes")}
        return AttemptTable(**values, message=self.message.take(indices),
                            detail=self.detail.take(indices), processes=self.processes)

    def row(self, index: int) -> Attempt:
        return Attempt(str(self.mini_batch_id[index]), int(self.picked_count[index]),
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
    :class:`ValueError` naming the file. Read by pyarrow: 100,000 rows in a few tenths of
    a second.
    """
    if not logs.processed.is_file():
        return AttemptTable.empty()
    import numpy as np  # noqa: PLC0415 - only readers of attempts pay for the imports
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.csv as pacsv  # noqa: PLC0415

    path = logs.processed
    with open(path, newline="", encoding="utf-8", errors="replace") as handle:
        header = next(csv.reader(handle), None) or []
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    if missing:
        raise ValueError(f"{path} is not a processed_mini-batches.csv: it has no column "
                         f"{', '.join(repr(name) for name in missing)}")
    parse = pacsv.ParseOptions(newlines_in_values=True, invalid_row_handler=lambda _row: "skip")
    # one thread: Arrow's pool threads still alive when the driver's interpreter exits
    # abort it ("terminate called without an active exception", apache/arrow#34314)
    read = pacsv.ReadOptions(encoding="utf8", use_threads=False)
    typed = {**dict.fromkeys(_INTS, pa.int64()), **dict.fromkeys(_FLOATS, pa.float64()),
             **dict.fromkeys((*_TEXTS, "Process Start Time"), pa.string())}
    try:
        table = pacsv.read_csv(path, read_options=read, parse_options=parse,
                               convert_options=pacsv.ConvertOptions(
                                   column_types={k: v for k, v in typed.items() if k in header},
                                   strings_can_be_null=False))
        numbers = {name: table[name].to_numpy().astype(float) for name in (*_INTS, *_FLOATS)}
    except (pa.ArrowInvalid, UnicodeDecodeError):  # a value that is not a number: per value
        table = pacsv.read_csv(path, read_options=read, parse_options=parse,
                               convert_options=pacsv.ConvertOptions(
                                   column_types=dict.fromkeys(header, pa.string())))
        numbers = {name: _coerce(table[name].to_numpy(zero_copy_only=False))
                   for name in (*_INTS, *_FLOATS)}
    starts = _epoch_seconds(table["Process Start Time"])
    good = np.isfinite(starts)
    for values in numbers.values():
        good &= np.isfinite(values)
    good &= numbers["Elapsed Seconds"] >= 0

    def text(name: str) -> Any:
        if name not in header:
            return pa.chunked_array([pa.array([""] * len(starts), type=pa.string())])
        return table[name]

    processes = text("Process").dictionary_encode().combine_chunks()
    names = tuple(str(name) for name in processes.dictionary.to_pylist())
    order = sorted(range(len(names)), key=lambda i: names[i])
    remap = np.empty(len(names), dtype=np.int64)
    remap[order] = np.arange(len(names))
    status = text("Status").to_numpy().astype(object)
    failed = numbers["Failed"].astype(np.int64)
    columns = AttemptTable(
        text("Mini-batch Id").to_numpy().astype(object),
        numbers["Picked Count"].astype(np.int64),
        remap[processes.indices.to_numpy(zero_copy_only=False)] if len(names) else
        np.zeros(len(starts), dtype=np.int64),
        starts, numbers["Total"].astype(np.int64), numbers["Succeeded"].astype(np.int64),
        failed, numbers["Elapsed Seconds"], numbers["Process Seconds"],
        numbers["Run Method Seconds"], status, text("Error Category").to_numpy().astype(object),
        text("Error Message"), text("Mini-batch Detail"), (status == "Succeeded") & (failed == 0),
        tuple(names[i] for i in order))
    return columns if bool(good.all()) else columns.take(good)


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
            micros = pc.cast(texts, kind).cast(pa.int64()).to_numpy(zero_copy_only=False)
            return micros.astype(float) / 1e6
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
    error groups, as job_result.txt counts them.
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
    temporary.write_text(json.dumps({"runs": [vars(run) for run in runs]}, indent=1,
                                    default=str), encoding="utf-8")
    temporary.replace(logs.runs)


def split_by_run(attempts: AttemptTable, runs: list[RunEntry]) -> list[AttemptTable]:
    """The attempts of each run, by start time (one table per run; ``[attempts]`` without
    runs)."""
    if not runs:
        return [attempts]
    import numpy as np  # noqa: PLC0415

    bounds = np.array([run.started - 1e-6 for run in runs[1:]])
    which = np.searchsorted(bounds, attempts.start, side="right")
    return [attempts.take(which == index) for index in range(len(runs))]


__all__ = ["LAYOUT", "PROCESSED_COLUMNS", "Attempt", "AttemptTable", "RunEntry", "StepLogs",
           "describe_detail", "first_line", "iter_attempts", "read_attempts", "read_runs",
           "split_by_run", "write_runs"]
