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
from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

_local = threading.local()
_NS = 1e-9


class Usage(NamedTuple):
    """A process's CPU seconds and run-delay seconds so far (``threads``: each live thread's
    nanoseconds ran and waited, by thread id, for :meth:`since`)."""

    cpu: float
    delay: float
    threads: Mapping[str, tuple[int, int]] = MappingProxyType({})

    def since(self, earlier: Usage) -> Usage:
        """The CPU and run-delay seconds the process's threads used since ``earlier``: each
        thread alive now less what it had then (one started since counts whole). A thread
        that ended in between is left out, so the figure never goes back, where the totals'
        difference would lose all it had used (a counting thread ending mid-run)."""
        cpu = delay = 0
        for task, (ran, waited) in self.threads.items():
            ran_then, waited_then = earlier.threads.get(task, (0, 0))
            cpu += max(ran - ran_then, 0)
            delay += max(waited - waited_then, 0)
        return Usage(cpu * _NS, delay * _NS, {})


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
    threads alive now, with each thread's (``None`` where unknown or the process is gone);
    what it used between two readings is :meth:`Usage.since`."""
    base = f"/proc/{pid if pid is not None else 'self'}/task"
    try:
        tasks = os.listdir(base)
    except OSError:
        return None
    threads = {}
    for task in tasks:
        try:
            with open(f"{base}/{task}/schedstat", "rb") as handle:
                ran, waited = handle.read(96).split()[:2]
            threads[task] = (int(ran), int(waited))
        except (OSError, ValueError):
            continue  # a thread that ended meanwhile
    return Usage(sum(ran for ran, _ in threads.values()) * _NS,
                 sum(waited for _, waited in threads.values()) * _NS, threads)


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
