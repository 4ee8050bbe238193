"""Where a worker is within its current task: loading it, in run(), or handing the result back.

``retry_settings.timeout`` bounds run() itself and ``--task_overhead_timeout``
the rest of an attempt (loading the mini-batch before run(), counting and
formatting its result after). To tell the two apart the driver must know when
run() started and ended, without a message per task on the hot path: each
worker writes one fixed-size record to its own small *phase file* when run()
starts and when it returns (``task id, phase, load seconds, run seconds``:
about a microsecond through a shared memory map), and the driver reads it only
for an attempt that has run longer than the smaller of the two timeouts, which
never happens for a healthy short task. Durations, not clock readings, are
recorded, so the file works across machines (Dask on a shared folder, written
with ``pwrite`` there instead of a memory map).
"""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path
from typing import NamedTuple

RECORD = struct.Struct("<qqdd")  # task id, phase, load seconds, run seconds
RUN = 1  # run() has started
RESULT = 2  # run() has returned (or raised): the worker is handing the result back


class TaskPhase(NamedTuple):
    """Where a running task is: ``stage`` "load", "run" or "result", with the durations known
    so far."""

    stage: str
    load_seconds: float = 0.0  # known once run() has started
    run_seconds: float = 0.0  # known once run() has returned


def phase_file(working_root: str, node_name: str, process: str) -> Path:
    """``<state>/phases/<node>-<process>.phase``, next to the workers' working folders."""
    return Path(working_root).parent / "phases" / f"{node_name}-{process}.phase"


class PhaseWriter:
    """The worker's end: :meth:`note` the phase changes of its tasks."""

    def __init__(self, path: Path, *, memory_map: bool = True):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        os.ftruncate(self._fd, RECORD.size)
        self._map: mmap.mmap | None = mmap.mmap(self._fd, RECORD.size) if memory_map else None

    def note(self, task_id: int, phase: int, load_seconds: float, run_seconds: float) -> None:
        if self._map is not None:
            RECORD.pack_into(self._map, 0, task_id, phase, load_seconds, run_seconds)
        else:
            os.pwrite(self._fd, RECORD.pack(task_id, phase, load_seconds, run_seconds), 0)

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def read_phase(path: Path, task_id: int) -> TaskPhase | None:
    """What the worker has recorded for ``task_id``: no record of it yet means it is still loading.

    ``None`` when the file cannot be read (a Dask worker whose folder is not shared).
    """
    try:
        with open(path, "rb") as handle:
            for _ in range(3):  # a read racing a write can be torn: read until two agree
                first = handle.read(RECORD.size)
                handle.seek(0)
                second = handle.read(RECORD.size)
                handle.seek(0)
                if first == second:
                    break
    except OSError:
        return None
    return decode_phase(second, task_id)


def decode_phase(record: bytes, task_id: int) -> TaskPhase:
    """What a phase file's bytes (read here, or by a worker on another machine) say of
    ``task_id``: no record of it yet means it is still loading."""
    if len(record) < RECORD.size:
        return TaskPhase("load")
    recorded, phase, load_seconds, run_seconds = RECORD.unpack(record[:RECORD.size])
    if recorded != task_id or phase not in (RUN, RESULT):
        return TaskPhase("load")
    if phase == RUN:
        return TaskPhase("run", load_seconds)
    return TaskPhase("result", load_seconds, run_seconds)


__all__ = ["RESULT", "RUN", "PhaseWriter", "TaskPhase", "decode_phase", "phase_file", "read_phase"]
