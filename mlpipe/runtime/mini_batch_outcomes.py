"""Each mini-batch's attempts, read back from ``sys/job_report/processed_mini-batches.csv``.

The job report CSV (written by :mod:`mlpipe.runtime.reports.job_report`, read by
:func:`mlpipe.runtime.step_logs.read_attempts`) has one row per attempt;
:func:`read_outcomes` folds them into one :class:`MiniBatchOutcome` per mini-batch id, in
the order the ids first appear, for ``mlpipe job show --mini-batches`` and ``job rerun``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from mlpipe.runtime.step_logs import AttemptTable, StepLogs, first_line, iter_attempts


@dataclass
class MiniBatchOutcome:
    """A mini-batch's last attempt and how many it took."""

    id: str
    items: int
    attempts: int
    status: str  # the last attempt's: Succeeded, Failed, Timeout, ProcessDied
    succeeded: int
    failed: int
    error: str  # the first line of the last attempt's error message ("" when none)
    detail: str  # the files or partition key of the mini-batch, as the report names them

    @property
    def ok(self) -> bool:
        """Succeeded with every item: not a candidate for a rerun."""
        return self.status == "Succeeded" and self.failed == 0 and self.succeeded >= self.items


def read_outcomes(logs_dir: str | os.PathLike[str]) -> list[MiniBatchOutcome]:
    """One outcome per mini-batch id of the step whose ``logs/`` folder is ``logs_dir``
    (``[]`` when the step recorded no attempt). Torn or foreign rows are skipped."""
    logs = StepLogs.of(logs_dir)
    if not os.fspath(logs_dir) or not logs.processed.is_file():
        return []
    outcomes: dict[str, MiniBatchOutcome] = {}
    try:
        for attempt in iter_attempts(logs):
            previous = outcomes.get(attempt.mini_batch_id)
            outcomes[attempt.mini_batch_id] = MiniBatchOutcome(
                id=attempt.mini_batch_id, items=attempt.total,
                attempts=(previous.attempts if previous else 0) + 1, status=attempt.status,
                succeeded=attempt.succeeded, failed=attempt.failed,
                error=first_line(attempt.message), detail=_detail(attempt.detail))
    except ValueError:  # not a job report at all
        return []
    return list(outcomes.values())


def failed_attempts_last(table: AttemptTable) -> AttemptTable:
    """The last attempt of each mini-batch whose last attempt failed (those ``job show
    --mini-batches --failed`` lists and ``job rerun --failed-only`` runs again), in the
    order they ended."""
    import numpy as np  # noqa: PLC0415

    if not len(table):
        return table
    _, first_from_end = np.unique(table.mini_batch_id[::-1], return_index=True)
    last = np.sort(len(table) - 1 - first_from_end)
    return table.take(last[~table.ok[last]])


def _detail(text: str) -> str:
    try:
        detail = json.loads(text) if text else {}
    except ValueError:
        return text
    if isinstance(detail, dict):
        files = detail.get("files")
        if isinstance(files, list) and files:
            more = f" (+{len(files) - 1} more)" if len(files) > 1 else ""
            return f"{files[0]}{more}"
        return ", ".join(f"{key}={value}" for key, value in detail.items())
    return str(detail)


__all__ = ["MiniBatchOutcome", "failed_attempts_last", "read_outcomes"]
