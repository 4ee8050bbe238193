"""Who holds a lock: a note left by a holder that is gone never names it."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mlpipe.runtime.file_lock import FileLock, LockBusy, read_holder


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_holder_that_lets_go_leaves_no_note(tmp_path: Path) -> None:
    path = tmp_path / "job.lock"
    with FileLock(path, "run"):
        assert read_holder(path).pid == os.getpid()
    assert path.exists() and read_holder(path) is None


def test_the_note_of_a_dead_holder_does_not_name_the_next_one(tmp_path: Path) -> None:
    """A holder killed with kill -9 leaves its note; the next holder has locked the file but
    not yet written its own: a third process is told "another process", not the dead pid."""
    path = tmp_path / "job.lock"
    path.write_text(json.dumps({"pid": _dead_pid(), "since": time.time() - 5, "doing": "run",
                                "host": os.uname().nodename}))
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # locked, its note not written
        with pytest.raises(LockBusy) as busy:
            FileLock(path, "run").acquire()
        assert busy.value.holder.pid is None
        assert "held by another process" in str(busy.value)
    finally:
        os.close(fd)


def test_a_note_older_than_its_process_names_nobody(tmp_path: Path) -> None:
    """A pid reused by a process that started after the note was written is not the holder."""
    path = tmp_path / "job.lock"
    path.write_text(json.dumps({"pid": os.getpid(), "since": 1000.0, "doing": "run"}))
    assert read_holder(path) is None


def test_a_live_holder_is_named(tmp_path: Path) -> None:
    path = tmp_path / "job.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from mlpipe.runtime.file_lock import FileLock;"
         f"lock = FileLock({str(path)!r}, 'debug'); lock.acquire(); print('held', flush=True);"
         "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(LockBusy) as busy:
            FileLock(path, "run").acquire()
        assert (busy.value.holder.pid, busy.value.holder.doing) == (holder.pid, "debug")
    finally:
        holder.communicate("")
