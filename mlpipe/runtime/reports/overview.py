"""``logs/job_progress_overview.<yyyymmddhh>.txt``: a readable progress page, rewritten while
running.

The file is named after the current UTC hour, so a long step leaves one file
per hour, each with the last state written during that hour. Rewrites are
atomic (temporary file + :func:`os.replace`) and throttled.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

from mlpipe.runtime.counters import StepCounters, format_seconds
from mlpipe.runtime.records import StepSummary
from mlpipe.runtime.reports.job_result import items_line, mini_batches_line
from mlpipe.runtime.textio import replace_text
from mlpipe.wording import duration

MIN_REWRITE_SECONDS = 1.0


def overview_name(moment: datetime) -> str:
    return f"job_progress_overview.{moment.astimezone(timezone.utc):%Y%m%d%H}.txt"


class ProgressOverview:
    """Writes the overview page at most once per ``min_interval`` seconds (forced writes
    excepted)."""

    def __init__(self, logs_dir: Path, step_name: str, workers: int,
                 min_interval: float = MIN_REWRITE_SECONDS) -> None:
        self.logs_dir = logs_dir
        self.step_name = step_name
        self.workers = workers
        self.min_interval = min_interval
        self.started_at = datetime.now(timezone.utc)
        self._last = float("-inf")
        self.path: Path | None = None

    def maybe_write(self, counters: StepCounters, status: str = "Running") -> None:
        """Rewrite the page if ``min_interval`` has passed since the last write."""
        if time.monotonic() - self._last >= self.min_interval:
            self.write(counters, status)

    def write(self, counters: StepCounters, status: str = "Running",
              summary: StepSummary | None = None) -> Path:
        """Rewrite the page now; ``summary`` at the step's end gives its totals (the input's,
        from the counting pass when the step stopped early) as job_result.txt does."""
        now = datetime.now(timezone.utc)
        self.path = self.logs_dir / overview_name(now)
        replace_text(self.path, self.render(counters, status, now, summary))
        self._last = time.monotonic()
        return self.path

    def render(self, counters: StepCounters, status: str, now: datetime,
               summary: StepSummary | None = None) -> str:
        total = counters.total
        scheduled = f"{counters.scheduled}" + (
            " (listing complete)" if counters.listing_done else
            f" so far of {total} counted (listing in progress)" if total is not None
            else " so far (listing in progress)")
        remaining = counters.remaining if total is not None else "?"
        percent = counters.percent()
        eta = "0s" if status != "Running" else format_seconds(counters.eta())
        if summary is None:
            counts = [
                f"Mini-batches total: {total if total is not None else '? (counting)'}"
                + (f", {percent:.1f}% done" if percent is not None else ""),
                f"Mini-batches processed: {counters.processed} "
                f"(succeeded {counters.succeeded}, failed {counters.failed}); "
                f"remaining: {remaining}"]
        else:  # the end: the step's totals
            counts = [mini_batches_line(summary), items_line(summary)]
        lines = [
            f"Step: {self.step_name}",
            f"Status: {status}",
            f"Updated: {now:%Y-%m-%d %H:%M:%S} UTC",
            f"Started: {self.started_at:%Y-%m-%d %H:%M:%S} UTC",
            f"Elapsed: {format_seconds(counters.elapsed())}" if summary is None or
            summary.seconds is None else f"Duration: {duration(summary.seconds)}",
            f"Worker processes: {self.workers}",
            f"Mini-batches scheduled: {scheduled}",
            *([f"Mini-batches reused from an earlier run: {counters.reused} (resume)"]
              if counters.reused else []),
            *counts,
            f"Attempts: {counters.attempts} (retried {counters.retries}, "
            f"timed out {counters.timeouts})",
        ]
        if summary is None:
            lines.append(f"Items processed: {counters.items_total} "
                         f"(succeeded {counters.items_succeeded}, failed {counters.items_failed})")
        lines += [f"Rate: {counters.rate():.2f} mini-batches/s, "
                  f"{counters.items_rate():.2f} items/s", f"ETA: {eta}"]
        return "\n".join(lines) + "\n"
