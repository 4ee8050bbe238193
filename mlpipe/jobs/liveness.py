"""Whether the process that wrote a job record still runs, and this process's identity."""

from __future__ import annotations

import socket
from typing import Any

import psutil


def process_alive(pid: int | None, create_time: float | None = None) -> bool:
    """Whether the process that wrote a record still runs (same pid and start time)."""
    if not pid:
        return False
    try:
        proc = psutil.Process(pid)
        if create_time is not None and abs(proc.create_time() - create_time) > 1.0:
            return False
        return bool(proc.status() != psutil.STATUS_ZOMBIE)
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False

def runner_identity() -> dict[str, Any]:
    """pid, start time and host of this process, so readers can tell a dead runner."""
    proc = psutil.Process()
    return {"pid": proc.pid, "pid_create_time": proc.create_time(), "host": socket.gethostname()}
