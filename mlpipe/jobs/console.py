"""The job's console: the lines ``mlpipe job create`` prints while a job runs.

:func:`console` makes the caller's ``echo`` harmless; :class:`WorkerNotices` tells the
console when a step loses a worker (a process that died, a Dask worker that left its
cluster), with what happens to its mini-batches, for a step that has no progress
display (which says it itself).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from mlpipe.runtime.records import StepObserver, WorkerInfo

Echo = Callable[[str], None]


def console(echo: Echo | None) -> Echo:
    """``echo`` made harmless: a console that cannot be written (a closed pipe, a full disk)
    is silenced, it never stops a step or the job."""
    if echo is None:
        return lambda _line: None
    broken = threading.Event()

    def say(line: str) -> None:
        if broken.is_set():
            return
        try:
            echo(line)
        except (OSError, ValueError):  # BrokenPipeError, ENOSPC, a closed stream
            broken.set()

    return say


class WorkerNotices(StepObserver):
    """``step NAME: <the backend's message>`` for each lost worker (``worker 0/process001
    (pid 4242) was killed by SIGKILL``, ``... died or left the Dask cluster; ...``)."""

    def __init__(self, step_name: str, say: Echo) -> None:
        self.step_name = step_name
        self.say = say

    def worker_event(self, worker: WorkerInfo, event: str, message: str) -> None:
        if event == "died":
            lines = (message or "").strip().splitlines()
            self.say(f"step {self.step_name}: "
                     + (lines[0] if lines else f"worker {worker.node}/{worker.process} was lost"))


__all__ = ["Echo", "WorkerNotices", "console"]
