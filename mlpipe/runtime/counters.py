"""Running totals of a parallel step, shared by the progress display and the overview file,
and the one way an attempt's mini-batch and items are counted (:class:`AttemptTally`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from mlpipe.runtime.records import AttemptRecord

_TOTAL, _SUCCEEDED, _STATUS, _FINAL = map(attrgetter, ("total", "succeeded", "status", "final"))


def attempt_failed(record: AttemptRecord) -> bool:
    """True when an attempt did not process every item of its mini-batch."""
    return record.status != "Succeeded" or record.failed > 0


@dataclass(kw_only=True)
class AttemptTally:
    """Mini-batches (``processed``, ``failed``) and items of the attempts counted."""

    processed: int = 0
    failed: int = 0
    items_total: int = 0
    items_succeeded: int = 0
    items_failed: int = 0

    def count(self, record: AttemptRecord) -> None:
        """Add ``record``'s mini-batch and its items."""
        self.count_all((record,))

    def count_all(self, records: Sequence[AttemptRecord]) -> None:
        """Add each record's mini-batch and its items."""
        total = sum(map(_TOTAL, records))
        succeeded = sum(map(_SUCCEEDED, records))
        self.processed += len(records)
        self.items_total += total
        self.items_succeeded += succeeded
        self.items_failed += total - succeeded
        self.failed += sum(map(attempt_failed, records))


@dataclass
class StepCounters(AttemptTally):
    """Counts of mini-batches and items, updated once per attempt (a few attribute writes).

    ``processed`` counts mini-batches whose last attempt is over (succeeded or
    failed for good); a retried attempt counts in ``retries`` only.
    """

    scheduled: int = 0
    listing_done: bool = False
    counted: int | None = None  # the counting pass's total, before the listing is complete
    reused: int = 0  # resume: scheduled mini-batches that succeeded in an earlier run
    attempts: int = 0
    retries: int = 0
    timeouts: int = 0
    started: float = field(default_factory=time.monotonic)

    def add(self, record: AttemptRecord) -> None:
        self.add_all((record,))

    def add_all(self, records: Sequence[AttemptRecord]) -> None:
        """Count attempts: those whose mini-batch is retried in ``retries`` only."""
        self.attempts += len(records)
        self.timeouts += list(map(_STATUS, records)).count("Timeout")
        final = records if all(map(_FINAL, records)) else [r for r in records if r.final]
        self.retries += len(records) - len(final)
        if final:
            self.count_all(final)
            # the listing's count reaches observers throttled: what finished was scheduled
            self.scheduled = max(self.scheduled, self.done)

    @property
    def succeeded(self) -> int:
        return self.processed - self.failed

    @property
    def done(self) -> int:
        """Finished mini-batches, those reused from an earlier run included."""
        return self.processed + self.reused

    @property
    def remaining(self) -> int:
        """Mini-batches not finished yet (of the total once known, else of those scheduled)."""
        total = self.total
        return max((total if total is not None else self.scheduled) - self.done, 0)

    @property
    def total(self) -> int | None:
        """The number of mini-batches: the listing's once complete, else the counting
        pass's (never below what is already scheduled), else ``None``."""
        if self.listing_done:
            return self.scheduled
        if self.counted is not None:
            return max(self.counted, self.scheduled)
        return None

    def percent(self) -> float | None:
        """Finished share of the total, 0-100, once the total is known."""
        total = self.total
        if total is None:
            return None
        return 100.0 if total == 0 else min(100.0, 100.0 * self.done / total)

    def elapsed(self, now: float | None = None) -> float:
        return max((now if now is not None else time.monotonic()) - self.started, 0.0)

    def rate(self, now: float | None = None) -> float:
        """Finished mini-batches per second since the step started."""
        elapsed = self.elapsed(now)
        return self.processed / elapsed if elapsed > 0 else 0.0

    def items_rate(self, now: float | None = None) -> float:
        elapsed = self.elapsed(now)
        return self.items_total / elapsed if elapsed > 0 else 0.0

    def eta(self, now: float | None = None) -> float | None:
        """Seconds left, once the total is known and something has finished."""
        rate = self.rate(now)
        if self.total is None or rate <= 0:
            return None
        return self.remaining / rate


def format_seconds(seconds: float | None) -> str:
    """``75.2`` -> ``"1m15s"``; ``None`` -> ``"?"``."""
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"
