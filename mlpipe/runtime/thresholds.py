"""The three failure thresholds of a parallel step (seed 001's automation table).

A threshold of -1 means unlimited; a step fails when a count is **greater than**
its threshold. ``allowed_failed_percent`` (100 = unlimited) is only checked once
every mini-batch has been scheduled, as Azure does. The limits come from the plan as
the compiler decided them (``error_threshold``: the attribute, else ``--error_threshold``).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlpipe.plan import ParallelStep
from mlpipe.runtime.records import StepSummary, ThresholdBreach
from mlpipe.wording import plural


@dataclass(frozen=True)
class Thresholds:
    """The limits of one step."""

    mini_batch_error_threshold: int = -1
    error_threshold: int = -1
    allowed_failed_percent: int = 100

    @classmethod
    def of(cls, step: ParallelStep) -> Thresholds:
        return cls(step.mini_batch_error_threshold, step.error_threshold,
                   step.prs.allowed_failed_percent)

    def check(self, failed_mini_batches: int, failed_items: int, scheduled: int,
              all_scheduled: bool) -> ThresholdBreach | None:
        """The first threshold the counts exceed, or ``None``."""
        if 0 <= self.mini_batch_error_threshold < failed_mini_batches:
            return ThresholdBreach("mini_batch_error_threshold", self.mini_batch_error_threshold,
                                   failed_mini_batches)
        if 0 <= self.error_threshold < failed_items:
            return ThresholdBreach("error_threshold", self.error_threshold, failed_items)
        if all_scheduled and scheduled and 0 <= self.allowed_failed_percent < 100:
            percent = 100.0 * failed_mini_batches / scheduled
            if percent > self.allowed_failed_percent:
                return ThresholdBreach("allowed_failed_percent", self.allowed_failed_percent,
                                       round(percent, 2))
        return None


    def final(self, breach: ThresholdBreach, summary: StepSummary) -> ThresholdBreach:
        """``breach`` restated with the step's final counts (attempts running when it
        stopped the step may have failed too): the number every report gives."""
        if breach.name == "mini_batch_error_threshold":
            actual: float = summary.mini_batches_failed
        elif breach.name == "error_threshold":
            actual = summary.items_failed
        else:
            total = summary.mini_batches_total
            actual = round(100.0 * summary.mini_batches_failed / total, 2) if total else 0.0
        return ThresholdBreach(breach.name, breach.limit, actual)


def describe(breach: ThresholdBreach) -> str:
    """The failure reason job_result.txt starts with."""
    if breach.name == "mini_batch_error_threshold":
        what = f"{plural(int(breach.actual), 'mini-batch')} failed"
    elif breach.name == "error_threshold":
        what = f"{plural(int(breach.actual), 'item')} failed"
    else:
        what = f"{breach.actual:g}% of the mini-batches failed"
    return f"{what}, more than {breach.name} = {breach.limit}"


__all__ = ["Thresholds", "describe"]
