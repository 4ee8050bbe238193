"""The job store: one ``job.json`` per job under the runs folder.

Layout::

    <runs-dir>/
      <job name>/
        job.json              the job's record (written atomically)
        job.lock              held by the process that owns the job (mlpipe.jobs.ownership)
        cancel-requested      present once ``mlpipe job cancel`` asked the job to stop
        <step>/...            the steps' folders (see ``mlpipe.plan``)

The record is plain JSON so any tool can read it; :class:`JobStore` reads it as a typed
:class:`~mlpipe.jobs.record.JobRecord` (every reader uses that); the runner writes one
job's record through :class:`~mlpipe.jobs.recorder.JobRecorder`. The file names are
:mod:`mlpipe.runs`' (``JOB_RECORD_FILE``, ``JOB_LOCK_FILE``, ``CANCEL_FILE``).
"""

from __future__ import annotations

import builtins
import difflib
import errno
import json
import os
import stat
from pathlib import Path

from mlpipe.errors import MlpipeError, UsageError
from mlpipe.jobs.liveness import process_alive
from mlpipe.jobs.record import TERMINAL, UNFINISHED, JobRecord
from mlpipe.jobs.timestamps import iso, now
from mlpipe.runs import CANCEL_FILE, JOB_RECORD_FILE, check_job_name, job_dir, resolve_runs_dir


class JobNotFound(MlpipeError, LookupError):
    """No record for the job name in the runs folder; the message names the runs folder
    and the closest names there (the one wording of every command and of the SDK)."""

    def __init__(self, name: str, runs_dir: Path, close: builtins.list[str],
                 any_jobs: bool = True):
        if close:
            hint = f"; did you mean {', '.join(repr(match) for match in close)}?"
        elif not any_jobs:
            hint = " (no jobs there at all: is --runs-dir or $MLPIPE_RUNS_DIR right?)"
        else:
            hint = ""
        super().__init__(f"no job named {name!r} in {runs_dir}{hint}")
        self.name = name
        self.close = close


class RecordError(MlpipeError, ValueError):
    """A job's record cannot be read (damaged, not a file, not mlpipe's) or written."""

    def __init__(self, message: str, problem: str = ""):
        super().__init__(message)
        self.problem = problem or message


class JobConflictError(MlpipeError, RuntimeError):
    """The job name is taken by a completed or still-running job."""


class JobNameError(UsageError):
    """A job name that breaks the job-name rule (:func:`mlpipe.runs.check_job_name`): it
    could name a path outside the runs folder, so no file is touched for it."""


class JobStore:
    """The jobs under one runs folder."""

    def __init__(self, runs_dir: str | os.PathLike[str] | None = None):
        self.runs_dir = resolve_runs_dir(runs_dir)
        self.unreadable: builtins.list[str] = []  # jobs whose record list() could not read

    def job_dir(self, name: str) -> Path:
        """``<runs-dir>/<name>``; :class:`JobNameError` for a name that is not a job name."""
        problem = check_job_name(name) if isinstance(name, str) else "a job name is text"
        if problem:
            raise JobNameError(problem)
        return job_dir(self.runs_dir, name)

    def record_path(self, name: str) -> Path:
        return self.job_dir(name) / JOB_RECORD_FILE

    def exists(self, name: str) -> bool:
        """Whether job ``name`` has a record, readable or not (a damaged one counts)."""
        return os.path.lexists(self.record_path(name))

    def load(self, name: str) -> JobRecord:
        """The record of job ``name``; a job whose runner died is reported as failed.

        Raises :class:`JobNotFound`, or :class:`RecordError` naming the file and what is
        wrong with it (not a regular file, not UTF-8 JSON, not a job record)."""
        path = self.record_path(name)
        try:
            record = JobRecord.parse(json.loads(_read_record(path)))
        except FileNotFoundError:
            raise JobNotFound(name, self.runs_dir, self.close_matches(name),
                              any_jobs=bool(self.names())) from None
        except OSError as exc:
            raise _unreadable(name, path, _os_problem(exc)) from None
        except UnicodeDecodeError as exc:
            raise _unreadable(name, path, f"not UTF-8 JSON: {exc.reason}") from None
        except RecursionError:
            raise _unreadable(name, path, "not a job record: JSON nested too deeply") from None
        except ValueError as exc:  # not JSON, or not a job record (JobRecord.parse says)
            raise _unreadable(name, path, str(exc)) from None
        if record.name is None:
            record.name = name
        return _with_liveness(record)

    def names(self) -> list[str]:
        if not self.runs_dir.is_dir():
            return []
        return [p.parent.name for p in self.runs_dir.glob(f"*/{JOB_RECORD_FILE}")
                if check_job_name(p.parent.name) is None]

    def list(self) -> list[JobRecord]:
        """Every job's record, newest first (those that cannot be read are named in
        :attr:`unreadable`)."""
        records = []
        self.unreadable = []
        for name in self.names():
            try:
                records.append(self.load(name))
            except (JobNotFound, RecordError):
                self.unreadable.append(name)
        records.sort(key=lambda record: record.created_at or "", reverse=True)
        return records

    def resumable(self, name: str) -> JobRecord | None:
        """The record of an unfinished job ``name`` to resume, ``None`` when the name is free.

        Raises :class:`JobConflictError` when ``name`` completed or is still running.
        """
        if not self.exists(name):
            return None
        record = self.load(name)
        if record.status == "completed":
            raise JobConflictError(f"job {name!r} already exists and completed "
                                   f"({self.record_path(name)}); choose another name")
        if record.running:
            raise JobConflictError(f"job {name!r} is running (pid {record.pid}); "
                                   f"cancel it first with: mlpipe job cancel {name}")
        return record

    def write_cancel_request(self, name: str) -> None:
        """Leave the request to stop for job ``name``'s runner (``mlpipe.jobs.ownership.
        request_cancel`` decides when); :class:`RecordError` when it cannot be written."""
        path = self.job_dir(name) / CANCEL_FILE
        try:
            path.write_text(iso(now()) or "", encoding="utf-8")
        except OSError as exc:
            raise RecordError(f"cannot cancel job {name!r}: cannot write {path}: "
                              f"{_os_problem(exc)}") from None

    def cancel_requested(self, name: str) -> bool:
        return (self.job_dir(name) / CANCEL_FILE).exists()

    def clear_cancel(self, name: str) -> None:
        (self.job_dir(name) / CANCEL_FILE).unlink(missing_ok=True)

    def close_matches(self, name: str) -> builtins.list[str]:
        return difflib.get_close_matches(name, self.names(), n=3)


def _read_record(path: Path) -> str:
    """The text of ``path``, a regular file (never a link, a folder or a pipe: a record
    mlpipe wrote is none of those, and a pipe would block the reader)."""
    flags = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0))
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise OSError(errno.EINVAL, f"{what}, not a job record")
        return handle.read().decode("utf-8")


def _os_problem(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "a symbolic link, not a job record mlpipe wrote"
    if error.errno == errno.EISDIR:
        return "a folder, not a job record"
    return error.strerror or str(error)


def _unreadable(name: str, path: Path, problem: str) -> RecordError:
    return RecordError(f"cannot read the record of job {name!r} ({path}): {problem}", problem)


def _with_liveness(record: JobRecord) -> JobRecord:
    """Mark a record whose runner process is gone while it says queued/running."""
    if record.status in UNFINISHED and not process_alive(record.pid, record.pid_create_time):
        record.stale = True
    return record


__all__ = ["TERMINAL", "JobConflictError", "JobNameError", "JobNotFound", "JobStore",
           "RecordError"]
