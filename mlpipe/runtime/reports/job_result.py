"""``logs/job_result.txt``, ``logs/user/error.txt`` and the tracebacks under
``logs/user/error/``."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from mlpipe.plan import ParallelStep
from mlpipe.runtime.counters import StepCounters
from mlpipe.runtime.error_groups import ErrorGroups, attempt_error
from mlpipe.runtime.error_keys import message_line
from mlpipe.runtime.faults import naming
from mlpipe.runtime.records import AttemptRecord, StepSummary, ThresholdBreach, WorkerInfo
from mlpipe.runtime.reports.job_report import utc_text
from mlpipe.runtime.step_logs import StepLogs, attempt_header, init_failure_header
from mlpipe.runtime.textio import open_text
from mlpipe.runtime.timeouts import progress_text
from mlpipe.wording import duration, plural

TOP_ERRORS = 5


class ErrorLog:
    """Appends each failure's traceback to ``user/error/<node>/<process>.txt`` (the driver
    groups them: :class:`~mlpipe.runtime.error_groups.ErrorGroups`)."""

    def __init__(self, logs_dir: Path, *, append: bool = False) -> None:
        self.logs_dir = logs_dir
        self.append = append  # a resumed step adds to the earlier run's tracebacks
        self._files: dict[tuple[int, str], IO[str]] = {}
        self._closing = ExitStack()  # owns the handles in _files

    def add_attempt(self, record: AttemptRecord) -> None:
        """Write a failed attempt (call only when ``counters.attempt_failed(record)``)."""
        category, message = attempt_error(record)
        self._write(record.worker, attempt_header(record), category, message, record.traceback)

    def add_init_failure(self, worker: WorkerInfo, message: str, *, ran: bool = True) -> None:
        """Write a worker that could not start: its init() failed (``ran``), or it never got
        that far (a died worker's in-flight attempt is written as that attempt, so deaths are
        not written twice)."""
        now = utc_text(datetime.now(timezone.utc))
        self._write(worker, f"{init_failure_header(worker, ran=ran)} at {now}",
                    "InitError" if ran else "StartError", message, None)

    def close(self) -> None:
        self._closing.close()
        self._files.clear()

    def _write(self, worker: WorkerInfo, header: str, category: str, message: str,
               traceback: str | None) -> None:
        relative = StepLogs.error_file(worker)
        handle = self._files.get((worker.node, worker.process))
        if handle is None:
            path = self.logs_dir / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            mode = "a" if self.append else "w"
            # kept open across attempts; close() (through _closing) ends it
            handle = self._closing.enter_context(open_text(path, mode))
            self._files[(worker.node, worker.process)] = handle
        with naming(self.logs_dir / relative):
            handle.write(f"===== {header} [{category}]\n{message.rstrip()}\n")
            if traceback and traceback.strip() != message.strip():
                handle.write(traceback.rstrip() + "\n")
            handle.write("\n")


def _first_line(message: str) -> str:
    return message_line(message)


def breach_text(breach: ThresholdBreach) -> str:
    """One sentence naming the threshold and its numbers."""
    if breach.name == "mini_batch_error_threshold":
        what = f"The number of failed mini-batches ({breach.actual:g})"
    elif breach.name == "error_threshold":
        what = f"The number of failed items ({breach.actual:g})"
    elif breach.name == "allowed_failed_percent":
        what = f"The percentage of failed mini-batches ({breach.actual:.1f}%)"
    else:
        what = f"The value {breach.actual:g}"
    unit = "%" if breach.name == "allowed_failed_percent" else ""
    return f"{what} exceeded {breach.name} ({breach.limit}{unit})."


def first_line(summary: StepSummary) -> str:
    """``Succeeded`` or ``Failed: <reason>``."""
    if summary.status == "Completed":
        return "Succeeded"
    if summary.status == "Canceled":
        return "Failed: The step was canceled" + (f": {summary.reason}" if summary.reason else ".")
    if summary.reason:
        return f"Failed: {_first_line(summary.reason)}"
    if summary.breach is not None:
        return f"Failed: {breach_text(summary.breach)}"
    top = summary.errors.top(1)
    if top:
        return f"Failed: [{top[0].category}] {top[0].label}"
    return "Failed: the step did not complete."


def mini_batches_line(summary: StepSummary) -> str:
    """``Mini-batches: 100 total, 17 succeeded, 6 failed, 77 not processed``."""
    total = (f"{summary.mini_batches_total} total" if summary.total_known else
             f"{summary.mini_batches_total} listed (the step stopped before the listing's end "
             "and the input could not be counted)")
    return (f"Mini-batches: {total}, {summary.mini_batches_succeeded} succeeded, "
            f"{summary.mini_batches_failed} failed, {summary.mini_batches_not_processed} "
            "not processed")


def items_line(summary: StepSummary) -> str:
    """``Items: 200 total, 34 succeeded, 12 failed, 154 not processed``."""
    counts = f"{summary.items_succeeded} succeeded, {summary.items_failed} failed"
    rest = summary.items_not_processed
    if rest is None:
        return (f"Items: {summary.items_total} in the mini-batches that ended, {counts}; the "
                f"items of the {plural(summary.mini_batches_not_processed, 'mini-batch')} not "
                "processed are not known without reading them")
    return f"Items: {summary.items_total} total, {counts}, {rest} not processed"


def render_job_result(step: ParallelStep, summary: StepSummary, counters: StepCounters,
                      advice: Sequence[str] = ()) -> str:
    """The text of ``job_result.txt``: ``summary``'s counts (``counters``: the attempts)."""
    total = summary.mini_batches_total
    failed_percent = 100.0 * summary.mini_batches_failed / total if total else 0.0
    lines = [first_line(summary), f"Step: {step.name}", f"Status: {summary.status}"]
    if summary.started_at is not None:
        lines.append(f"Started: {_clock(summary.started_at)}")
    if summary.ended_at is not None:
        lines.append(f"Ended: {_clock(summary.ended_at)}")
    if summary.seconds is not None:
        lines.append(f"Duration: {duration(summary.seconds)}")
    lines.append(mini_batches_line(summary))
    if summary.mini_batches_reused:
        lines.append(f"Resumed: {plural(summary.mini_batches_reused, 'mini-batch')} reused from "
                     "an earlier run (counted as succeeded above; their attempts are the earlier "
                     "rows of sys/job_report/processed_mini-batches.csv)")
    lines += [
        f"Attempts: {counters.attempts} ({counters.retries} retried, {counters.timeouts} timed out)"
        + (" in this run" if summary.mini_batches_reused else ""),
        items_line(summary),
        "Thresholds:",
        f"  mini_batch_error_threshold: {_limit(step.mini_batch_error_threshold)}; "
        f"failed mini-batches: {summary.mini_batches_failed}",
        f"  error_threshold: {_limit(step.error_threshold)}; "
        f"failed items: {summary.items_failed}",
        f"  allowed_failed_percent: {step.prs.allowed_failed_percent}%; "
        f"failed mini-batches: {failed_percent:.1f}%",
        f"  retry_settings: max_retries {step.retry.max_retries}, timeout {step.retry.timeout} s "
        f"(each run() call)",
        f"  task_overhead_timeout: {step.prs.task_overhead_timeout} s (loading and result "
        f"handling of each attempt)",
        f"  progress_update_timeout: {progress_text(step)}",
    ]
    if summary.breach is not None:
        lines.append(f"Threshold exceeded: {breach_text(summary.breach)}")
    if summary.append_row_file:
        lines.append(f"Append row file: {summary.append_row_file}")
    lines.extend(error_lines(summary.errors))
    lines.extend(advice)
    if summary.reason and len(summary.reason.strip().splitlines()) > 1:
        lines.append("Reason in full:")
        lines.extend("  " + line for line in summary.reason.strip().splitlines())
    return "\n".join(lines) + "\n"


def error_lines(errors: ErrorGroups) -> list[str]:
    """The most frequent error groups of job_result.txt, each labelled by its signature."""
    top = errors.top(TOP_ERRORS)
    if not top:
        return ["Errors: none"]
    lines = ["Errors by signature, most failed attempts first (all of them in user/error.txt, "
             "full tracebacks in the files named):"]
    for group in top:
        lines += [f"  [{group.category}] {group.label}: {group.counts_text()}",
                  f"      e.g. {group.example}" + (f" (raised in {group.signature.frame})"
                                                    if group.signature.frame else ""),
                  f"      first: {group.first or '-'}; tracebacks: {group.files_text() or '-'}"]
    more = len(errors) - len(top)
    if more > 0:
        lines.append(f"  ... and {plural(more, 'other kind of error', 'other kinds of error')} "
                     "(user/error.txt)")
    return lines


def render_error_summary(errors: ErrorGroups) -> str:
    """The text of ``user/error.txt``: every error group, most failed attempts first."""
    groups = errors.top()
    attempts = sum(g.attempts for g in groups)
    failed = sum(g.failed for g in groups)
    lines = [f"{plural(attempts, 'failed attempt')} ({plural(failed, 'mini-batch')} failed) in "
             f"{plural(len(groups), 'kind of error', 'kinds of error')}, grouped by signature: "
             "the exception, its message with numbers, paths and quoted names masked, and the "
             "user's frame that raised it.", ""]
    for group in groups:
        lines += [
            f"[{group.category}] {group.label}",
            f"  {group.counts_text()}",
            f"  e.g. {group.example}",
            *([f"  raised in: {group.signature.frame}"] if group.signature.frame else []),
            f"  first: {group.first or '-'}",
            f"  tracebacks: {group.files_text(limit=20) or '-'}",
            "",
        ]
    return "\n".join(lines)


def _limit(value: int) -> str:
    return "-1 (unlimited)" if value == -1 else str(value)


def _clock(moment: datetime) -> str:
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment.isoformat(sep=" ", timespec="seconds") + " UTC"


__all__ = ["ErrorLog", "breach_text", "error_lines", "first_line", "items_line",
           "mini_batches_line", "render_error_summary", "render_job_result"]
