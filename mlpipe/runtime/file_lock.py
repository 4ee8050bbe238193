"""An exclusive lock on a file, released by the kernel when its holder dies, with a note of
who holds it.

:class:`FileLock` takes ``flock(LOCK_EX | LOCK_NB)`` on a lock file (``fcntl.flock``; on
Windows ``msvcrt.locking``): it never waits, and a process killed with ``kill -9`` never
leaves a stale lock behind, because the lock belongs to the open file and the kernel
closes it. The holder writes a short JSON note into the file (pid, when it took the lock,
what it is doing) so a process that finds the lock taken can say by whom
(:class:`LockBusy`); reading the note never takes the lock (:func:`read_holder`).

The descriptor is close-on-exec and never inherited by worker processes. After taking
the lock, the holder checks that the path still names the file it locked (a holder that
removes the file on release cannot hand the lock to two later processes at once).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
NOTE_READ_ATTEMPTS = 50  # a holder writes its note right after locking: a reader may be early
NOTE_READ_PAUSE = 0.01


@dataclass(frozen=True)
class Holder:
    """Who holds a lock: ``pid`` and ``host`` of the process, when it took the lock, and
    ``doing`` (what it does with what the lock guards: ``run``, ``debug``, ``write``...)."""

    pid: int | None = None
    since: float | None = None  # time.time() when the lock was taken
    doing: str = ""
    host: str = ""

    def describe(self) -> str:
        """``process 4242 (started 20:31:05)`` (the date too when it is not today)."""
        if self.pid is None:
            return "another process"
        if self.since is None:
            return f"process {self.pid}"
        moment = datetime.fromtimestamp(self.since)
        same_day = moment.date() == datetime.now().date()
        when = moment.strftime("%H:%M:%S" if same_day else "%Y-%m-%d %H:%M:%S")
        host = f" on {self.host}" if self.host and self.host != socket.gethostname() else ""
        return f"process {self.pid}{host} (started {when})"


class LockBusy(OSError):
    """The lock is held by another process (or another open of the file in this one)."""

    def __init__(self, path: Path, holder: Holder):
        super().__init__(f"{path}: held by {holder.describe()}")
        self.path = path
        self.holder = holder

    def __str__(self) -> str:
        return str(self.args[0])


class FileLock:
    """An exclusive (``shared=False``) or shared, non-blocking lock on ``path`` (created if
    missing) for ``doing``."""

    def __init__(self, path: str | os.PathLike[str], doing: str, *, shared: bool = False):
        self.path = Path(path)
        self.doing = doing
        self.shared = shared
        self._fd = -1

    @property
    def held(self) -> bool:
        return self._fd >= 0

    def acquire(self) -> None:
        """Take the lock or raise :class:`LockBusy` at once (:class:`OSError` when the lock
        file cannot be opened)."""
        if self.held:
            return
        for _ in range(100):  # the file is replaced between open and lock only by a releaser
            fd = os.open(self.path, _FLAGS, 0o644)
            try:
                if not _try_lock(fd, shared=self.shared):
                    raise LockBusy(self.path, read_holder(self.path) or Holder())
                if _same_file(fd, self.path):
                    self._fd = fd
                    if not self.shared or read_holder(self.path, attempts=1) is None:
                        self._write_note()  # a shared lock keeps the note of a holder alive
                    return
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)  # the path was unlinked by the last holder: lock the new file
        raise LockBusy(self.path, Holder())

    def release(self, *, remove: bool = False) -> None:
        """Let the lock go (idempotent); ``remove`` unlinks the file first."""
        if not self.held:
            return
        fd, self._fd = self._fd, -1
        try:
            with contextlib.suppress(OSError):
                if remove:
                    os.unlink(self.path)
                elif not self.shared:  # a shared lock's note may be another holder's
                    os.ftruncate(fd, 0)  # no note of a holder that has let go
        finally:
            _unlock(fd)  # explicitly: a forked child may share the open file
            os.close(fd)

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _write_note(self) -> None:
        note = json.dumps({"pid": os.getpid(), "since": time.time(), "doing": self.doing,
                           "host": socket.gethostname()}).encode("utf-8")
        with contextlib.suppress(OSError):  # the note is a courtesy: the lock is what counts
            os.ftruncate(self._fd, 0)
            os.lseek(self._fd, 0, os.SEEK_SET)
            os.write(self._fd, note)


def read_holder(path: str | os.PathLike[str], *,
                attempts: int = NOTE_READ_ATTEMPTS) -> Holder | None:
    """The note of the lock file at ``path`` (``None``: no readable note of a live holder,
    after ``attempts`` reads); never locks."""
    for attempt in range(attempts):
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        try:
            data = os.read(fd, 4096)
        except OSError:
            return None
        finally:
            os.close(fd)
        holder = _parse_note(data)
        if holder is not None and _current(holder):
            return holder
        if attempt + 1 < attempts:
            time.sleep(NOTE_READ_PAUSE)  # the holder is between locking and writing its note
    return None


def _current(holder: Holder) -> bool:
    """Whether a note names a process that still holds the lock: a note left by a holder
    that was killed names a dead process (or one started after the note: a reused pid)
    until the next holder writes its own."""
    if holder.host and holder.host != socket.gethostname():
        return True  # a process elsewhere cannot be checked from here
    if holder.pid is None:
        return False
    import psutil

    try:
        started = psutil.Process(holder.pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
    return holder.since is None or started <= holder.since + 1.0


def _parse_note(data: bytes) -> Holder | None:
    try:
        note: Any = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(note, dict):
        return None
    pid, since = note.get("pid"), note.get("since")
    return Holder(pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
                  float(since) if isinstance(since, (int, float)) else None,
                  str(note.get("doing") or ""), str(note.get("host") or ""))


def _try_lock(fd: int, *, shared: bool = False) -> bool:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(fd: int) -> None:
    with contextlib.suppress(OSError):
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_UN)


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (on_disk.st_dev, on_disk.st_ino)


__all__ = ["FileLock", "Holder", "LockBusy", "read_holder"]
