"""Each mini-batch's attempts, read back from ``sys/job_report/processed_mini-batches.csv``.

The job report CSV (written by :mod:`mlpipe.runtime.reports.job_report`) has one row per
attempt; :func:`read_outcomes` folds them into one :class:`MiniBatchOutcome` per
mini-batch id, in the order the ids first appear, for ``mlpipe job show --mini-batches``.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from mlpipe.runtime.reports.job_report import PROCESSED_COLUMNS

PROCESSED_CSV = Path("sys") / "job_report" / "processed_mini-batches.csv"


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


def read_outcomes(logs_dir: str | Path) -> list[MiniBatchOutcome]:
    """One outcome per mini-batch id of the step whose ``logs/`` folder is ``logs_dir``
    (``[]`` when the step recorded no attempt). Torn or foreign rows are skipped."""
    path = Path(logs_dir) / PROCESSED_CSV
    if not path.is_file():
        return []
    outcomes: dict[str, MiniBatchOutcome] = {}
    with open(path, newline="", encoding="utf-8", errors="replace") as handle:
        for row in csv.DictReader(handle):
            if None in row or any(row.get(column) is None for column in PROCESSED_COLUMNS):
                continue
            try:
                total, succeeded, failed = (int(row["Total"]), int(row["Succeeded"]),
                                            int(row["Failed"]))
            except ValueError:
                continue
            mini_batch_id = row["Mini-batch Id"]
            previous = outcomes.get(mini_batch_id)
            outcomes[mini_batch_id] = MiniBatchOutcome(
                id=mini_batch_id, items=total,
                attempts=(previous.attempts if previous else 0) + 1,
                status=row["Status"], succeeded=succeeded, failed=failed,
                error=_first_line(row["Error Message"]), detail=_detail(row["Mini-batch Detail"]))
    return list(outcomes.values())


def _first_line(message: str) -> str:
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return lines[-1] if lines and lines[0].startswith("Traceback") else (lines[0] if lines else "")


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


__all__ = ["PROCESSED_CSV", "MiniBatchOutcome", "read_outcomes"]
