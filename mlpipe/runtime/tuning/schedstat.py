"""Time spent waiting for a core, as Linux's scheduler counts it (``/proc/<pid>/schedstat``:
the nanoseconds a task ran, then the nanoseconds it was runnable but waited: its
*run-delay*).

CPU seconds over elapsed seconds mistakes a wait for a core for a wait for I/O; the run-delay
tells them apart: a task's own pace is ``elapsed - run-delay``, the same whether the machine
is quiet or busy. Light (no third-party import): every worker reads it around each attempt.
Where the file does not exist (not Linux, no schedstats) every reader gives ``None``.
"""

from __future__ import annotations

import os
import threading
from typing import NamedTuple

_local = threading.local()
_NS = 1e-9


class Usage(NamedTuple):
    """A process's CPU seconds and run-delay seconds so far."""

    cpu: float
    delay: float


def thread_delay() -> float | None:
    """The calling thread's run-delay so far, in seconds (``None`` where unknown): a
    ``pread`` of a descriptor kept open per thread, about two microseconds."""
    fd = getattr(_local, "fd", None)
    if fd is None or _local.pid != os.getpid():  # first call here, or a forked child
        try:
            fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            fd = -1
        _local.fd, _local.pid = fd, os.getpid()
    if fd < 0:
        return None
    try:
        return int(os.pread(fd, 96, 0).split()[1]) * _NS
    except (OSError, ValueError, IndexError):
        return None


def process_usage(pid: int | None = None) -> Usage | None:
    """CPU and run-delay seconds of process ``pid`` (this one by default), summed over its
    threads alive now (``None`` where unknown or the process is gone)."""
    base = f"/proc/{pid if pid is not None else 'self'}/task"
    try:
        tasks = os.listdir(base)
    except OSError:
        return None
    cpu = delay = 0
    for task in tasks:
        try:
            with open(f"{base}/{task}/schedstat", "rb") as handle:
                ran, waited = handle.read(96).split()[:2]
        except (OSError, ValueError):
            continue  # a thread that ended meanwhile
        cpu += int(ran)
        delay += int(waited)
    return Usage(cpu * _NS, delay * _NS)


def process_age(pid: int) -> float | None:
    """Seconds since process ``pid`` started (to the clock tick; ``None`` where unknown)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as handle:
            uptime = float(handle.read().split()[0])
        return max(uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"), 0.0)
    except (OSError, ValueError, IndexError):
        return None


def load_average() -> float | None:
    """The machine's one-minute load average (``None`` where unknown)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


__all__ = ["Usage", "load_average", "process_age", "process_usage", "thread_delay"]
