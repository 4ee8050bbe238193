"""A parallel step's ``logs/`` folder: where each file is (:class:`StepLogs`) and the one typed
reader of its attempts (:func:`read_attempts`) and runs (:func:`read_runs`).

The reports write these files (:mod:`mlpipe.runtime.reports`); everything that reads them
back (``job show --mini-batches``, ``job rerun``, the task stream, ``report.html``, the
tuning profile) goes through here, so a path or a column is spelled once.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
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
    def error_summary(self) -> Path:
        return self.root / "user" / "error.txt"

    def profile_files(self) -> list[Path]:
        """The ``.prof`` files of ``--profiling_module`` (``[]`` when it was off)."""
        return sorted(self.profile.glob("*/*.prof")) if self.profile.is_dir() else []

    def error_file(self, worker: WorkerInfo) -> str:
        """``user/error/<node>/<process>.txt``, relative to ``root``: a worker's tracebacks."""
        return f"user/error/{worker.node}/{worker.process}.txt"


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


def read_attempts(logs: StepLogs) -> list[Attempt]:
    """The attempts of ``processed_mini-batches.csv``, in file order (``[]`` when absent).

    A row that does not parse (torn by a killed run, two rows run together) is skipped;
    a file without the job report's columns raises :class:`ValueError` naming the file.
    """
    return list(iter_attempts(logs)) if logs.processed.is_file() else []


def iter_attempts(logs: StepLogs) -> Iterator[Attempt]:
    """:func:`read_attempts` one row at a time (the file must exist)."""
    path = logs.processed
    with open(path, newline="", encoding="utf-8", errors="surrogateescape") as handle:
        reader = csv.reader(handle)
        header = next(reader, None) or []
        index = {name: i for i, name in enumerate(header)}
        missing = [name for name in REQUIRED_COLUMNS if name not in index]
        if missing:
            raise ValueError(f"{path} is not a processed_mini-batches.csv: it has no column "
                             f"{', '.join(repr(name) for name in missing)}")
        columns = [index.get(name, -1) for name in PROCESSED_COLUMNS]
        width = len(header)
        for row in reader:
            if len(row) != width:
                continue
            attempt = _attempt(row, columns)
            if attempt is not None:
                yield attempt


def _attempt(row: list[str], columns: list[int]) -> Attempt | None:
    (mb, picked, process, start, total, succeeded, failed, elapsed, cpu, run, status, category,
     message, detail) = columns
    try:
        moment = datetime.fromisoformat(row[start])
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        attempt = Attempt(row[mb], int(row[picked]), row[process], moment.timestamp(),
                          int(row[total]), int(row[succeeded]), int(row[failed]),
                          float(row[elapsed]), float(row[cpu]), float(row[run]), row[status],
                          row[category], row[message] if message >= 0 else "",
                          row[detail] if detail >= 0 else "")
    except (ValueError, IndexError):
        return None
    return attempt if math.isfinite(attempt.elapsed) and attempt.elapsed >= 0 else None


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


def split_by_run(attempts: list[Attempt], runs: list[RunEntry]) -> list[list[Attempt]]:
    """The attempts of each run (by start time; one list per run, ``[attempts]`` without
    runs)."""
    if not runs:
        return [attempts]
    parts: list[list[Attempt]] = [[] for _ in runs]
    bounds = [run.started for run in runs[1:]] + [math.inf]
    for attempt in attempts:
        index = 0
        while attempt.start >= bounds[index] - 1e-6 and index < len(runs) - 1:
            index += 1
        parts[index].append(attempt)
    return parts


__all__ = ["PROCESSED_COLUMNS", "Attempt", "RunEntry", "StepLogs", "describe_detail",
           "first_line", "iter_attempts", "read_attempts", "read_runs", "split_by_run",
           "write_runs"]
