"""The time limits of an attempt and of the step's progress (seed 001's automation table).

- ``retry_settings.timeout`` bounds run() itself;
- ``--task_overhead_timeout`` bounds the rest of an attempt on its worker:
  loading the mini-batch before run() plus counting and formatting its result
  after run() (the two together);
- ``--progress_update_timeout`` bounds the time without progress (no attempt
  ended, no worker finished init()) while mini-batches are outstanding. Azure
  says its default is "dynamically calculated by other settings"; mlpipe uses
  ``(max_retries + 1) x retry_settings.timeout + task_overhead_timeout``, which is
  more than any single attempt can last (``timeout + task_overhead_timeout``), so
  the default only stops a step that is stuck, never a slow but healthy one.
"""

from __future__ import annotations

from typing import NamedTuple

from mlpipe.plan import ParallelStep
from mlpipe.runtime.phases import TaskPhase


class Overrun(NamedTuple):
    """Why an attempt was stopped: its Error Category and message."""

    category: str
    message: str


def progress_update_timeout(step: ParallelStep) -> tuple[float, bool]:
    """``(seconds, computed)``: the setting, or the default formula when it is not set."""
    if step.prs.progress_update_timeout is not None:
        return float(step.prs.progress_update_timeout), False
    computed = ((step.retry.max_retries + 1) * step.retry.timeout
                + step.prs.task_overhead_timeout)
    return float(computed), True


def progress_text(step: ParallelStep) -> str:
    """``--progress_update_timeout 780 s (computed: ...)`` for the logs and job_result.txt."""
    seconds, computed = progress_update_timeout(step)
    if not computed:
        return f"{seconds:g} s"
    return (f"{seconds:g} s (computed: (max_retries {step.retry.max_retries} + 1) x timeout "
            f"{step.retry.timeout} + task_overhead_timeout {step.prs.task_overhead_timeout})")


def attempt_deadline(since: float, phase: TaskPhase | None, timeout: float,
                     overhead: float) -> tuple[float, str]:
    """``(deadline, stage)`` of an attempt that started at ``since`` and is in ``phase`` now.

    ``stage`` is "load", "run", "result" or "attempt" (phase unknown: the whole
    attempt gets ``timeout + overhead``).
    """
    if phase is None:
        return since + timeout + overhead, "attempt"
    if phase.stage == "load":
        return since + overhead, "load"
    if phase.stage == "run":
        return since + phase.load_seconds + timeout, "run"
    return since + phase.run_seconds + overhead, "result"


REPLACED = "its worker process was stopped and replaced."


def overrun(stage: str, timeout: float, overhead: float, replaced: str = REPLACED) -> Overrun:
    """The Error Category and message of an attempt stopped in ``stage``; ``replaced`` says
    what became of its worker (the backend's ``kill_effect``)."""
    if stage == "run":
        return Overrun("Timeout", f"run() did not finish within retry_settings.timeout = "
                                  f"{timeout:g} seconds; {replaced}")
    if stage == "load":
        return Overrun("TaskOverheadTimeout",
                       f"Loading the mini-batch took longer than --task_overhead_timeout = "
                       f"{overhead:g} seconds (run() had not started); {replaced}")
    if stage == "result":
        return Overrun("TaskOverheadTimeout",
                       f"Handing back run()'s result (counting and formatting it for "
                       f"append_row) took longer than --task_overhead_timeout = {overhead:g} "
                       f"seconds, less the time spent loading; {replaced}")
    return Overrun("Timeout", f"The attempt did not finish within retry_settings.timeout + "
                              f"--task_overhead_timeout = {timeout + overhead:g} seconds; "
                              f"{replaced}")


__all__ = ["REPLACED", "Overrun", "attempt_deadline", "overrun", "progress_text",
           "progress_update_timeout"]
