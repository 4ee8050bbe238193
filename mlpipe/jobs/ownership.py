"""One job, one owner: the lock a process holds on a job folder while it changes the job.

``mlpipe job create`` (a new job or a resume), ``job rerun`` and ``job debug`` take job
NAME's lock, ``<runs-dir>/NAME/job.lock``, before they decide anything (is the name
free, can the job resume, what does a rerun run again) and keep it until the job's
record is final. The lock is an OS lock on an open file (:mod:`mlpipe.runtime.file_lock`):
it never waits, and the kernel releases it when its holder dies, so a ``kill -9`` leaves
no stale lock. A second process gets :class:`JobBusyError` (``job j1 is being run by
process 4242 (started 20:31:05); wait for it, or mlpipe job cancel j1``) and changes
nothing. ``job show``, ``list``, ``stream`` and ``report`` only read and never take it;
``job cancel`` takes it only to mark a job whose runner is gone, and never waits for it.

The job folder is created here: :func:`own_job` with ``fresh=True`` (a generated name)
creates it exclusively, so two processes never pick the same new folder. A folder left
without a record when its owner lets go (the pipeline did not compile, a rerun of a job
that does not exist) is removed again.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import tempfile
from pathlib import Path

from mlpipe.errors import MlpipeError
from mlpipe.jobs.atomic_json import write_json_atomic
from mlpipe.jobs.liveness import process_alive
from mlpipe.jobs.record import JobRecord
from mlpipe.jobs.store import JobConflictError, JobStore
from mlpipe.jobs.timestamps import iso, now
from mlpipe.runs import JOB_LOCK_FILE, JOB_RECORD_FILE
from mlpipe.runtime.file_lock import FileLock, Holder, LockBusy
from mlpipe.runtime.process_tree import end_tagged_under, tagged_under
from mlpipe.wording import plural

_DOING = {"run": "being run", "debug": "being debugged", "cancel": "being canceled"}
_ADVICE = {"run": "wait for it, or mlpipe job cancel {name}",
           "debug": "wait for the debug session to end",
           "cancel": "try again in a moment"}


class JobBusyError(JobConflictError):
    """Another process owns the job (runs, reruns, debugs or cancels it) right now."""

    def __init__(self, name: str, holder: Holder):
        doing = holder.doing if holder.doing in _DOING else "run"
        super().__init__(f"job {name} is {_DOING[doing]} by {holder.describe()}; "
                         + _ADVICE[doing].format(name=name))
        self.name = name
        self.holder = holder


class JobLock:
    """This process's ownership of job ``name`` (:func:`own_job`); :meth:`release` ends it."""

    def __init__(self, name: str, job_dir: Path, lock: FileLock):
        self.name = name
        self.job_dir = job_dir
        self._lock = lock

    @property
    def held(self) -> bool:
        return self._lock.held

    def release(self) -> None:
        """Let the job go (idempotent); a folder that got no record is removed again."""
        if not self._lock.held:
            return
        unused = not (self.job_dir / JOB_RECORD_FILE).exists()
        self._lock.release(remove=unused)
        if unused:
            with contextlib.suppress(OSError):
                self.job_dir.rmdir()  # only when nothing else is in it

    def __enter__(self) -> JobLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def own_job(store: JobStore, name: str, *, doing: str = "run", fresh: bool = False) -> JobLock:
    """Take job ``name`` for this process, creating its folder; ``doing`` is ``run``,
    ``debug`` or ``cancel`` (what a second process is told).

    ``fresh=True`` (a generated name): the folder must not exist yet, else
    :class:`FileExistsError`. Raises :class:`JobBusyError` when another process owns
    the job, :class:`JobConflictError` when the job's path is not a folder.
    """
    job_dir = store.job_dir(name)
    for _ in range(100):  # a releasing owner may remove an unused folder meanwhile
        _make_folder(job_dir, fresh=fresh)
        lock = FileLock(job_dir / JOB_LOCK_FILE, doing)
        try:
            lock.acquire()
        except FileNotFoundError:
            continue
        except LockBusy as busy:
            raise JobBusyError(name, busy.holder) from None
        except OSError as error:
            raise JobConflictError(f"job {name}: cannot lock {job_dir / JOB_LOCK_FILE}: "
                                   f"{_lock_problem(error)}") from error
        return JobLock(name, job_dir, lock)
    raise JobConflictError(f"job {name}: its folder {job_dir} keeps disappearing")


def request_cancel(store: JobStore, name: str) -> JobRecord:
    """Ask job ``name`` to stop; returns its record as it is now (never waits).

    A running job sees the request within a fraction of a second. A job recorded as
    running whose runner is gone is marked canceled here, under its lock, once the processes
    its steps started are ended (:class:`CancelIncompleteError` while one still runs).
    """
    record = store.load(name)
    if record.ended:
        return record
    try:
        owner = own_job(store, name, doing="cancel")
    except JobBusyError:  # its owner runs: it reads the request
        store.write_cancel_request(name)
        return record
    with owner:
        record = store.load(name)
        store.write_cancel_request(name)
        if record.ended or process_alive(record.pid, record.pid_create_time):
            return record
        _end_processes(name, store, record)
        record.status = "canceled"
        record.ended_at = record.ended_at or iso(now())
        for step in record.steps.values():
            if step.status in ("queued", "running"):
                step.status = "canceled"
        record.stale = False
        write_json_atomic(store.record_path(name), record.to_json())
    return record


class OutputBusyError(JobConflictError):
    """Another job writes an output place of this job (or one inside or around it) now."""


class OutputLocks:
    """This process's hold on the places a job writes outside its own folder
    (:func:`own_outputs`); :meth:`release` lets them go."""

    def __init__(self, locks: list[FileLock]):
        self._locks = locks

    def release(self) -> None:
        for lock in self._locks:
            lock.release()
        self._locks = []

    def __enter__(self) -> OutputLocks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def output_lock_dir() -> Path:
    """Where the locks of output places are: one folder per user on this machine, so jobs of
    any runs folder see each other."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"mlpipe-{uid}" / "output-locks"


def own_outputs(name: str, places: list[tuple[str, str]]) -> OutputLocks:
    """Take, for job ``name``, each output place ``(output, path)`` it writes outside its
    own folder: an exclusive OS lock on the place (after ``realpath``) and a shared one on
    each folder above it, so two jobs never write one place, nor one inside the other's, at
    the same time. The kernel lets them go when this process dies.
    :class:`OutputBusyError` names the job that holds one, and nothing is kept."""
    folder = output_lock_dir()
    folder.mkdir(parents=True, exist_ok=True)
    taken: list[FileLock] = []
    wanted: dict[str, tuple[bool, str, str]] = {}  # real path -> (exclusive, output, place)
    for output, path in places:
        real = os.path.realpath(path)
        wanted[real] = (True, output, path)
        for parent in Path(real).parents:
            wanted.setdefault(str(parent), (False, output, path))
    try:
        for real, (exclusive, output, path) in sorted(wanted.items()):
            key = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:40]
            lock = FileLock(folder / f"{key}.lock", name, shared=not exclusive)
            try:
                lock.acquire()
            except LockBusy as busy:
                holder = busy.holder
                who = f"job {holder.doing} ({holder.describe()})" if holder.doing \
                    else holder.describe()
                where = "" if exclusive and real == os.path.realpath(path) else \
                    f" (it writes {real}, around or inside it)"
                raise OutputBusyError(
                    f"job {name}: output '{output}' ({path}) is being written by {who}{where}; "
                    "two jobs never write one place at once: wait for it to end, or give the "
                    "output another path; the job was not started") from None
            taken.append(lock)
    except BaseException:
        for lock in taken:
            lock.release()
        raise
    return OutputLocks(taken)


class CancelIncompleteError(MlpipeError, ValueError):
    """A job whose runner is gone still has processes that could not be ended."""


def _end_processes(name: str, store: JobStore, record: JobRecord) -> None:
    """End the processes the dead runner's steps started (tagged below the job's folder),
    noting them in the record; :class:`CancelIncompleteError` while any still runs."""
    folder = str(record.run_dir or store.job_dir(name))
    ended = end_tagged_under(folder)
    if ended:
        record.processes_ended = [process.describe() for process in ended]
    left = tagged_under(folder)
    if left:
        raise CancelIncompleteError(
            f"job {name}: its runner is gone, but "
            f"{plural(len(left), 'process', 'processes')} it started "
            f"still run and could not be ended (pids {', '.join(map(str, left))}); end them, "
            f"then mlpipe job cancel {name} again")


def _lock_problem(error: OSError) -> str:
    """Why the lock file cannot be opened, with what to do when it is not mlpipe's file."""
    if error.errno == errno.ELOOP:
        return "a symbolic link is in its place (remove it; mlpipe makes the lock itself)"
    if error.errno == errno.EISDIR or os.path.isdir(error.filename or ""):
        return "a folder is in its place (remove it; mlpipe makes the lock itself)"
    return error.strerror or str(error)


def _make_folder(job_dir: Path, *, fresh: bool) -> None:
    job_dir.parent.mkdir(parents=True, exist_ok=True)  # the runs folder
    try:
        os.mkdir(job_dir)
        return
    except FileExistsError:
        if fresh:
            raise
    if job_dir.is_symlink() or not job_dir.is_dir():
        raise JobConflictError(f"{job_dir} is not a job folder (a file or a link is in its "
                               "place); remove it or choose another name")


__all__ = ["CancelIncompleteError", "JobBusyError", "OutputBusyError", "OutputLocks",
           "output_lock_dir", "own_outputs", "JobLock", "own_job", "request_cancel"]
