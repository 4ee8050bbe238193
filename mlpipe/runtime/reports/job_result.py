"""``logs/job_result.txt``, ``logs/user/error.txt`` and the tracebacks under
``logs/user/error/``."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from mlpipe.plan import ParallelStep
from mlpipe.runtime.counters import StepCounters
from mlpipe.runtime.error_keys import Signature, message_line, signature
from mlpipe.runtime.faults import naming
from mlpipe.runtime.records import AttemptRecord, StepSummary, ThresholdBreach, WorkerInfo
from mlpipe.runtime.reports.job_report import process_label, utc_text
from mlpipe.runtime.step_logs import StepLogs
from mlpipe.runtime.textio import open_text
from mlpipe.runtime.timeouts import progress_text
from mlpipe.wording import plural

TOP_ERRORS = 5
FIRST_TEXT_LIMIT = 4000  # characters of the first traceback a group keeps (report.html shows it)


@dataclass
class ErrorGroup:
    """Failed attempts that share a :class:`~mlpipe.runtime.error_keys.Signature`."""

    category: str
    message: str  # the first occurrence's message line
    where: str  # error file of the first occurrence, relative to logs/
    first: str  # "mini-batch <id> attempt <n> on <node>/<process> at <time>"
    signature: Signature | None = None
    first_text: str = ""  # the first occurrence's message and traceback (shortened)
    attempts: int = 0
    mini_batches: set[str] = field(default_factory=set)
    failed_for_good: int = 0
    files: set[str] = field(default_factory=set)

    def as_json(self) -> dict[str, object]:
        """What ``runs.json`` keeps of the group (report.html reads it back)."""
        sig = self.signature or signature(self.category, self.message)
        return {"category": self.category, "exception": sig.exception, "pattern": sig.pattern,
                "frame": sig.frame, "message": self.message, "attempts": self.attempts,
                "mini_batches": len(self.mini_batches), "failed_for_good": self.failed_for_good,
                "where": self.where, "first": self.first, "first_text": self.first_text,
                "files": sorted(self.files)}

    def files_text(self, limit: int = 3) -> str:
        names = sorted(self.files)
        more = f" and {len(names) - limit} more" if len(names) > limit else ""
        return ", ".join(names[:limit]) + more


class ErrorLog:
    """Appends each failure's traceback to ``user/error/<node>/<process>.txt`` and groups them."""

    def __init__(self, logs_dir: Path, *, append: bool = False) -> None:
        self.logs_dir = logs_dir
        self.append = append  # a resumed step adds to the earlier run's tracebacks
        self.groups: dict[Signature, ErrorGroup] = {}
        self._files: dict[tuple[int, str], IO[str]] = {}
        self._closing = ExitStack()  # owns the handles in _files

    def add_attempt(self, record: AttemptRecord) -> None:
        """Record a failed attempt (call only when ``counters.attempt_failed(record)``)."""
        category = record.error_category or record.status
        message = record.error_message or (
            f"run() returned {record.succeeded} of {record.total} items" if record.failed
            else record.status)
        header = (f"mini-batch {record.mini_batch_id} attempt {record.picked_count} "
                  f"on {process_label(record.worker)} at {utc_text(record.start_time)}")
        group = self._record(record.worker, header, category, message, record.traceback)
        group.mini_batches.add(record.mini_batch_id)
        if record.final:
            group.failed_for_good += 1

    def add_init_failure(self, worker: WorkerInfo, message: str, *, ran: bool = True) -> None:
        """Record a worker that could not start: its init() failed (``ran``), or it never got
        that far (a died worker's in-flight attempt is recorded as that attempt, so deaths
        are not counted twice)."""
        now = utc_text(datetime.now(timezone.utc))
        pid = f" (pid {worker.pid})" if worker.pid is not None else ""
        what = "init() failed" if ran else "could not start"
        header = f"worker {process_label(worker)}{pid}: {what} at {now}"
        self._record(worker, header, "InitError" if ran else "StartError", message, None)

    def close(self) -> None:
        self._closing.close()
        self._files.clear()

    def top(self, count: int = TOP_ERRORS) -> list[ErrorGroup]:
        return sorted(self.groups.values(), key=lambda g: -g.attempts)[:count]

    def _record(self, worker: WorkerInfo, header: str, category: str, message: str,
                traceback: str | None) -> ErrorGroup:
        """Write one failure to the worker's error file and count it in its group."""
        where = self._write(worker, header, category, message, traceback)
        key = signature(category, message, traceback)  # the error file keeps the whole text
        group = self.groups.get(key)
        if group is None:
            text = message.rstrip() + ("\n" + traceback.rstrip() if traceback
                                       and traceback.strip() != message.strip() else "")
            group = self.groups[key] = ErrorGroup(category, _first_line(message), where, header,
                                                  key, text[:FIRST_TEXT_LIMIT])
        group.files.add(where)
        group.attempts += 1
        return group

    def _write(self, worker: WorkerInfo, header: str, category: str, message: str,
               traceback: str | None) -> str:
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
        return relative


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


def first_line(summary: StepSummary, errors: ErrorLog) -> str:
    """``Succeeded`` or ``Failed: <reason>``."""
    if summary.status == "Completed":
        return "Succeeded"
    if summary.status == "Canceled":
        return "Failed: The step was canceled" + (f": {summary.reason}" if summary.reason else ".")
    if summary.reason:
        return f"Failed: {_first_line(summary.reason)}"
    if summary.breach is not None:
        return f"Failed: {breach_text(summary.breach)}"
    top = errors.top(1)
    if top:
        return f"Failed: [{top[0].category}] {top[0].message}"
    if summary.top_errors:
        return f"Failed: {_first_line(summary.top_errors[0][0])}"
    return "Failed: the step did not complete."


def render_job_result(step: ParallelStep, summary: StepSummary, counters: StepCounters,
                      errors: ErrorLog, advice: Sequence[str] = ()) -> str:
    """The text of ``job_result.txt``."""
    total = summary.mini_batches_total or counters.scheduled
    failed_percent = 100.0 * summary.mini_batches_failed / total if total else 0.0
    lines = [first_line(summary, errors), f"Step: {step.name}", f"Status: {summary.status}"]
    if summary.started_at is not None:
        lines.append(f"Started: {_clock(summary.started_at)}")
    if summary.ended_at is not None:
        lines.append(f"Ended: {_clock(summary.ended_at)}")
    if summary.started_at is not None and summary.ended_at is not None:
        lines.append(f"Duration: {(summary.ended_at - summary.started_at).total_seconds():.3f} s")
    lines += [
        f"Mini-batches: {total} "
        f"{'total' if counters.listing_done else 'listed (the listing stopped before its end)'}, "
        f"{summary.mini_batches_succeeded} succeeded, "
        f"{summary.mini_batches_failed} failed, "
        f"{max(total - summary.mini_batches_succeeded - summary.mini_batches_failed, 0)} "
        "not processed",
        f"Attempts: {counters.attempts} ({counters.retries} retried, {counters.timeouts} timed out)"
        + (" in this run" if summary.mini_batches_reused else ""),
        f"Items: {summary.items_total} total, {summary.items_succeeded} succeeded, "
        f"{summary.items_failed} failed",
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
    if summary.mini_batches_reused:
        lines.insert(lines.index(next(x for x in lines if x.startswith("Attempts:"))),
                     f"Resumed: {plural(summary.mini_batches_reused, 'mini-batch')} reused from an "
                     "earlier run (counted as succeeded above; their attempts are the earlier "
                     "rows of sys/job_report/processed_mini-batches.csv)")
    if summary.breach is not None:
        lines.append(f"Threshold exceeded: {breach_text(summary.breach)}")
    if summary.append_row_file:
        lines.append(f"Append row file: {summary.append_row_file}")
    top = errors.top()
    if top:
        lines.append("Top errors (summary in user/error.txt, full tracebacks in the files named):")
        for group in top:
            lines.append(f"  {group.attempts} x [{group.category}] {group.message}")
            lines.append(f"      first: {group.first}; tracebacks: {group.files_text()}")
    elif summary.top_errors:
        lines.append("Top errors:")
        for message, count, where in summary.top_errors[:TOP_ERRORS]:
            see = f"; see {where}" if where else ""
            lines.append(f"  {count} x {_first_line(message)}{see}")
    else:
        lines.append("Errors: none")
    lines.extend(advice)
    if summary.reason and len(summary.reason.strip().splitlines()) > 1:
        lines.append("Reason in full:")
        lines.extend("  " + line for line in summary.reason.strip().splitlines())
    return "\n".join(lines) + "\n"


def render_error_summary(errors: ErrorLog) -> str:
    """The text of ``user/error.txt``: every error group, most frequent first."""
    groups = errors.top(len(errors.groups))
    attempts = sum(g.attempts for g in groups)
    lines = [f"{plural(attempts, 'failure')} in {plural(len(groups), 'distinct error')}.", ""]
    for group in groups:
        lines += [
            f"[{group.category}] {group.message}",
            f"  failures: {group.attempts}; mini-batches: {len(group.mini_batches)} "
            f"(failed after their last attempt: {group.failed_for_good})",
            f"  first: {group.first}",
            f"  tracebacks: {group.files_text(limit=20)}",
            "",
        ]
    return "\n".join(lines)


def _limit(value: int) -> str:
    return "-1 (unlimited)" if value == -1 else str(value)


def _clock(moment: datetime) -> str:
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment.isoformat(sep=" ", timespec="seconds") + " UTC"


__all__ = ["ErrorLog", "breach_text", "first_line", "render_job_result",
           "render_error_summary"]
