"""``mlpipe job rerun``: which steps of a finished job run again, and how.

:func:`plan_rerun` turns a job's record into the record the runner resumes from
(:func:`mlpipe.jobs.front_door.submit` with ``rerun_of=``): a step kept stays
``completed``; a step run again from scratch loses its start (the runner then starts its
state afresh); a parallel step run again with ``failed_only`` keeps its start, so its
journal keeps every mini-batch that succeeded and only the others run. Steps downstream
of a step that runs again run again from scratch.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from mlpipe.errors import UsageError
from mlpipe.jobs.record import JobRecord, StepRecord
from mlpipe.jobs.store import JobConflictError, JobStore
from mlpipe.runtime.mini_batch_outcomes import read_outcomes


class RerunUsageError(UsageError):
    """A ``--step`` that names no step of the job."""


def plan_rerun(store: JobStore, name: str, *, failed_only: bool = False,
               steps: Sequence[str] = ()) -> tuple[JobRecord, list[str]]:
    """The record to resume job ``name`` from, and the steps that run again (``[]``:
    nothing to do). Raises :class:`~mlpipe.jobs.store.JobNotFound`,
    :class:`JobConflictError` (the job still runs) or :class:`RerunUsageError`."""
    record = store.load(name)
    if record.running:
        raise JobConflictError(f"job {name!r} is still running (pid {record.pid}); "
                               f"wait for it, or stop it with: mlpipe job cancel {name}")
    recorded = record.steps
    for step in steps:
        if step not in recorded:
            close = difflib.get_close_matches(step, list(recorded), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise RerunUsageError(f"job {name!r} has no step {step!r}{hint}; its steps: "
                                  f"{', '.join(recorded)}")
    again = _failed_only(recorded, steps) if failed_only else {
        step: "scratch" for step in (steps or recorded)}
    for step in _downstream(recorded, set(again)):
        again.setdefault(step, "scratch")
    previous = record.clone()
    for step, how in again.items():
        entry = previous.steps[step]
        entry.status = "queued"
        if how == "scratch":
            entry.started_at = None
    return previous, [step for step in recorded if step in again]


def _failed_only(recorded: dict[str, StepRecord], named: Sequence[str]) -> dict[str, str]:
    """Parallel steps with a mini-batch to run again keep their journal ("failed");
    unfinished steps resume; a completed command step runs again only when named."""
    again: dict[str, str] = {}
    for step, entry in recorded.items():
        if named and step not in named:
            continue
        if entry.kind == "parallel":
            outcomes = read_outcomes(entry.logs_dir or "")
            if entry.status != "completed" or any(not o.ok for o in outcomes):
                again[step] = "failed" if entry.started_at else "scratch"
        elif entry.status != "completed" or step in named:
            again[step] = "scratch"
    return again


def _downstream(recorded: dict[str, StepRecord], roots: set[str]) -> list[str]:
    """Every step that depends, directly or not, on one of ``roots``."""
    found: set[str] = set()
    grew = True
    while grew:
        grew = False
        for step, entry in recorded.items():
            if step in found or step in roots:
                continue
            if set(entry.depends_on) & (roots | found):
                found.add(step)
                grew = True
    return sorted(found)


__all__ = ["RerunUsageError", "plan_rerun"]
