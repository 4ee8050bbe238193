"""The job store: one ``job.json`` per job under the runs folder.

Layout::

    <runs-dir>/
      <job name>/
        job.json              the job's record (written atomically)
        cancel-requested      present once ``mlpipe job cancel`` asked the job to stop
        <step>/...            the steps' folders (see ``mlpipe.plan``)

The record is plain JSON so any tool can read it; :class:`JobStore` reads and writes
it, :class:`JobRecorder` is the runner's thread-safe writer for one job.
"""

from __future__ import annotations

import builtins
import json
import os
import socket
import tempfile
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psutil

from mlpipe.errors import MlpipeError
from mlpipe.runs import (  # noqa: F401  (re-exported)
    JOB_NAME,
    check_job_name,
    generate_job_name,
    job_name_base,
    resolve_runs_dir,
    slugify,
)

TERMINAL: frozenset[str] = frozenset({"completed", "failed", "canceled"})
RECORD_FILE = "job.json"
CANCEL_FILE = "cancel-requested"
NAME_PATTERN = JOB_NAME


class JobNotFound(MlpipeError, LookupError):
    """No record for the job name in the runs folder."""


class JobConflictError(MlpipeError, RuntimeError):
    """The job name is taken by a completed or still-running job."""


def now() -> datetime:
    return datetime.now(timezone.utc)


def iso(at: datetime | None) -> str | None:
    return at.isoformat(timespec="milliseconds") if at else None


def parse_iso(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def error_summary(error: str) -> str:
    """An error on one line: ``command exited with code 3: <its last stderr line>``."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    if not lines:
        return ""
    first = lines[0]
    return f"{first} {lines[-1]}" if first.endswith(":") and len(lines) > 1 else first


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` so readers never see a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, default=str)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def process_alive(pid: int | None, create_time: float | None = None) -> bool:
    """Whether the process that wrote a record still runs (same pid and start time)."""
    if not pid:
        return False
    try:
        proc = psutil.Process(pid)
        if create_time is not None and abs(proc.create_time() - create_time) > 1.0:
            return False
        return proc.status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


class JobStore:
    """The jobs under one runs folder."""

    def __init__(self, runs_dir: str | os.PathLike[str] | None = None):
        self.runs_dir = resolve_runs_dir(runs_dir)
        self.unreadable: builtins.list[str] = []  # jobs whose record list() could not read

    def job_dir(self, name: str) -> Path:
        return self.runs_dir / name

    def record_path(self, name: str) -> Path:
        return self.job_dir(name) / RECORD_FILE

    def exists(self, name: str) -> bool:
        return self.record_path(name).is_file()

    def load(self, name: str) -> dict[str, Any]:
        """The record of job ``name``; a job whose runner died is reported as failed."""
        path = self.record_path(name)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise JobNotFound(name) from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8 JSON: {exc.reason}") from None
        problem = _record_problem(record)
        if problem:
            raise ValueError(f"not a job record: {problem}")
        record.setdefault("name", name)
        record.setdefault("steps", {})
        return _with_liveness(record)

    def names(self) -> list[str]:
        if not self.runs_dir.is_dir():
            return []
        return [p.parent.name for p in self.runs_dir.glob(f"*/{RECORD_FILE}")]

    def list(self) -> list[dict[str, Any]]:
        """Every job's record, newest first."""
        records = []
        self.unreadable = []
        for name in self.names():
            try:
                records.append(self.load(name))
            except (OSError, ValueError):
                self.unreadable.append(name)
        records.sort(key=lambda r: r.get("created_at") or "", reverse=True)
        return records

    def resumable(self, name: str) -> dict[str, Any] | None:
        """The record of an unfinished job ``name`` to resume, ``None`` when the name is free.

        Raises :class:`JobConflictError` when ``name`` completed or is still running.
        """
        if not self.exists(name):
            return None
        record = self.load(name)
        if record["status"] == "completed":
            raise JobConflictError(f"job {name!r} already exists and completed "
                                   f"({self.record_path(name)}); choose another name")
        if record["status"] in ("queued", "running") and not record.get("stale"):
            raise JobConflictError(f"job {name!r} is running (pid {record.get('pid')}); "
                                   f"cancel it first with: mlpipe job cancel {name}")
        return record

    def request_cancel(self, name: str) -> dict[str, Any]:
        """Ask job ``name`` to stop; returns its record as it is now.

        A running job sees the request within a fraction of a second. A job that is
        recorded as running but whose runner is gone is marked canceled here.
        """
        record = self.load(name)
        if record["status"] in TERMINAL:
            return record
        (self.job_dir(name) / CANCEL_FILE).write_text(iso(now()) or "", encoding="utf-8")
        if not process_alive(record.get("pid"), record.get("pid_create_time")):
            record["status"] = "canceled"
            record["ended_at"] = record.get("ended_at") or iso(now())
            for step in record.get("steps", {}).values():
                if step.get("status") in ("queued", "running"):
                    step["status"] = "canceled"
            record.pop("stale", None)
            write_json_atomic(self.record_path(name), record)
        return record

    def cancel_requested(self, name: str) -> bool:
        return (self.job_dir(name) / CANCEL_FILE).exists()

    def clear_cancel(self, name: str) -> None:
        (self.job_dir(name) / CANCEL_FILE).unlink(missing_ok=True)

    def close_matches(self, name: str) -> builtins.list[str]:
        import difflib

        return difflib.get_close_matches(name, self.names(), n=3)


TIMESTAMP_FIELDS = ("created_at", "started_at", "ended_at")


def _record_problem(record: Any) -> str | None:
    """What makes a parsed ``job.json`` unusable as a record (``None`` when it is fine)."""
    if not isinstance(record, dict) or not isinstance(record.get("status"), str):
        return "expected a JSON object with a 'status'"
    steps = record.get("steps", {})
    if not isinstance(steps, dict) or not all(isinstance(s, dict) for s in steps.values()):
        return "'steps' must be a JSON object of step objects"
    for key in TIMESTAMP_FIELDS:
        value = record.get(key)
        if value is None:
            continue
        try:
            parse_iso(value)
        except (TypeError, ValueError):
            return f"{key!r} must be an ISO 8601 time or null, got {value!r}"
    return None


def _with_liveness(record: dict[str, Any]) -> dict[str, Any]:
    """Mark a record whose runner process is gone while it says queued/running."""
    if record.get("status") in ("queued", "running") and not process_alive(
        record.get("pid"), record.get("pid_create_time")
    ):
        record["stale"] = True
    return record


class JobRecorder:
    """Thread-safe writer of one job's record; every change is written atomically."""

    def __init__(self, store: JobStore, name: str, record: dict[str, Any]):
        self.store = store
        self.name = name
        self.path = store.record_path(name)
        self.record = record
        self._lock = threading.RLock()

    def save(self) -> None:
        with self._lock:
            write_json_atomic(self.path, self.record)

    def update(self, **fields: Any) -> None:
        with self._lock:
            self.record.update(fields)
            self.save()

    def update_step(self, step: str, **fields: Any) -> None:
        with self._lock:
            self.record["steps"][step].update(fields)
            self.save()

    def step(self, step: str) -> dict[str, Any]:
        with self._lock:
            return json.loads(json.dumps(self.record["steps"][step], default=str))


def runner_identity() -> dict[str, Any]:
    """pid, start time and host of this process, so readers can tell a dead runner."""
    proc = psutil.Process()
    return {"pid": proc.pid, "pid_create_time": proc.create_time(), "host": socket.gethostname()}
