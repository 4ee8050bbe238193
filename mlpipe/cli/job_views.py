"""How job records look in the terminal: summary tables and progress lines."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table

from mlpipe.jobs.fix_loop import next_lines
from mlpipe.jobs.record import JobRecord, ProgressRecord, StepRecord
from mlpipe.jobs.timestamps import parse_iso
from mlpipe.runtime.records import totals_text
from mlpipe.runtime.step_logs import StepLogs
from mlpipe.wording import duration, error_summary, plural

STATUS_STYLES = {"completed": "green", "failed": "red", "canceled": "yellow",
                 "skipped": "dim", "running": "cyan", "queued": "dim"}


MLPIPE_DIR = str(Path(__file__).resolve().parents[1])
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line \d+')
PIPE_WIDTH = 200  # when stdout is not a terminal, tables are not squeezed to 80 columns


def console() -> Console:
    out = Console(highlight=False, soft_wrap=False)
    if not out.is_terminal:
        out = Console(highlight=False, soft_wrap=False, width=PIPE_WIDTH)
    return out


def seconds(value: float | None) -> str:
    return "-" if value is None else duration(value)


def styled(status: str) -> str:
    return f"[{STATUS_STYLES.get(status, 'default')}]{status}[/]"


def step_detail(step: StepRecord) -> str:
    """A short description of what a step did (counts for parallel steps)."""
    summary, progress = step.summary, step.progress
    if step.kind == "parallel" and summary is not None:
        if summary.mini_batches_total == 0 and step.status == "completed":
            return "no mini-batches: the input is empty"
        return totals_text(summary)
    if step.kind == "parallel" and progress is not None:
        return (f"{progress_fraction(progress)} mini-batches, "
                f"{progress.items_succeeded} items ok, {progress.items_failed} failed")
    if step.skipped_by_user:
        return "not run (--skip-step): outputs given"
    if step.kind == "sweep" and step.trials:
        trials = step.trials
        stopped = sum(1 for t in trials.values() if t.status == "early_terminated")
        text = f"{len(trials)} trials" + (f", {stopped} stopped early" if stopped else "")
        return text + (f", best {step.best_trial}" if step.best_trial else "")
    if step.exit_code is not None:
        return f"exit code {step.exit_code}"
    return ""


def progress_fraction(progress: ProgressRecord) -> str:
    """``"742/3000 (25%)"`` of a running step's progress, ``"742/?"`` until its total is
    known, ``"+ 933 reused"`` on a resumed step; done (reused included) never exceeds
    the total."""
    reused = progress.mini_batches_reused
    done = progress.finished
    total = progress.mini_batches_total
    if total is None and progress.listing_done:
        total = progress.mini_batches_known
    suffix = f" ({reused} reused)" if reused else ""
    if total is None:
        return f"{done}/?{suffix}"
    total = max(total, progress.mini_batches_known)
    done = min(done, total)
    percent = 100 if total == 0 else 100 * done // total
    return f"{done}/{total} ({percent}%){suffix}"


def steps_table(record: JobRecord) -> Table:
    table = Table()
    table.add_column("step", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("wall time", justify="right", no_wrap=True)
    table.add_column("detail")
    for name, step in record.steps.items():
        table.add_row(name, step.kind or "", styled(step.status), seconds(_elapsed(step)),
                      step_detail(step))
    return table


def _elapsed(step: StepRecord) -> float | None:
    """A step's wall time; for a running step, the time since it started."""
    if step.duration_seconds is not None or step.status != "running":
        return step.duration_seconds
    started = parse_iso(step.started_at)
    return (datetime.now(timezone.utc) - started).total_seconds() if started else None


def print_job(record: JobRecord, out: Console | None = None) -> None:
    """The steps table, then where the outputs and logs are (one path per line)."""
    out = out or console()
    out.print(f"job {record.name}: {styled(record.status)}")
    out.print(steps_table(record))
    out.print(f"run folder: {record.run_dir}", soft_wrap=True)
    if record.duration_seconds is not None:
        out.print(f"wall time:  {seconds(record.duration_seconds)}")
    lines = []
    for name, output in record.outputs.items():
        lines.append(f"  {name}: {output.path}")
    for step_name, step in record.steps.items():
        for name, step_output in step.outputs.items():
            lines.append(f"  {step_name}.{name}: {step_output.path}")
        outputs = {o.path for o in step.outputs.values()}
        if step.append_row_file and step.append_row_file not in outputs:
            lines.append(f"  {step_name} append_row file: {step.append_row_file}")
    if lines:
        out.print("outputs:")
        for line in lines:
            out.print(line, soft_wrap=True, markup=False)
    for step_name, step in record.steps.items():
        for line in failure_lines(step_name, step):
            out.print(line, soft_wrap=True, markup=False)
    if record.error:
        out.print(f"error: {record.error}", soft_wrap=True, markup=False)
    if record.status in ("failed", "canceled", "completed"):
        for line in next_lines(record):  # the fail-fix loop, or how to resume
            out.print(line, soft_wrap=True, markup=False)


TOP_ERRORS_SHOWN = 3
INIT_FAILED = "init() failed: "  # how the driver counts a worker that could not start


def failure_lines(step_name: str, step: StepRecord) -> list[str]:
    """Why a step failed, or that a parallel step completed although items failed (within
    its error thresholds): the reason, its most frequent errors with their counts, and
    where the details are."""
    if step.status == "failed" and step.error:
        lines = [f"step {step_name} failed: {brief_error(step.error)}"]
        lines += top_error_lines(step, skip=step.error)
        lines.append(f"  logs: {step.logs_dir}")
        return lines
    summary = step.summary
    if step.status not in ("completed", "canceled") or summary is None or not (
            summary.items_failed or summary.mini_batches_failed):
        return []
    items = plural(summary.items_failed, "item")
    batches = plural(summary.mini_batches_failed, "mini-batch")
    how = ("completed, but {} ({}) failed (within its error thresholds):"
           if step.status == "completed" else "canceled; {} ({}) had failed:")
    return [f"step {step_name}: {how.format(batches, items)}", *top_error_lines(step)]


def top_error_lines(step: StepRecord, skip: str = "") -> list[str]:
    """A parallel step's most frequent kinds of error, each labelled by its signature with
    its failed attempts and mini-batches, and the path of its ``user/error.txt``; nothing
    when it recorded no errors or ``skip`` already says it all."""
    from mlpipe.runtime.error_groups import group_line  # noqa: PLC0415 - job show stays light

    summary = step.summary
    if summary is None:
        return []
    top = [group.to_json() for group in summary.error_groups]
    if not top:  # a record written before error groups: (message, attempts, error file)
        top = [{"label": message, "attempts": count} for message, count, _where
               in summary.top_errors]
    if all(str(group.get("message") or group.get("label")).removeprefix(INIT_FAILED) in skip
           for group in top):
        return []  # nothing to add (an init() failure's reason already has its traceback)
    lines = [f"  {group_line(group)}" for group in top[:TOP_ERRORS_SHOWN]]
    more = max(summary.error_kinds, len(top)) - TOP_ERRORS_SHOWN
    if more > 0:
        lines.append(f"  ... and {plural(more, 'other kind of error', 'other kinds of error')}")
    lines.append(f"  details: {StepLogs.of(step.logs_dir or '.').error_summary}")
    return lines


def brief_error(error: str) -> str:
    """A step's error for the terminal: a Python traceback keeps only the frames of the
    user's code (not mlpipe's or importlib's) and the exception itself."""
    lines = error.rstrip().splitlines()
    try:
        start = lines.index("Traceback (most recent call last):")
    except ValueError:
        return error.rstrip()
    kept, keep_frame = lines[:start + 1], False
    for line in lines[start + 1:]:
        frame = _FRAME.match(line)
        if frame:
            file = frame.group("file")
            keep_frame = not (file.startswith(MLPIPE_DIR) or file.startswith("<frozen"))
        elif not line.startswith(" "):
            keep_frame = True  # the exception line(s) at the end
        if keep_frame:
            kept.append(line)
    return "\n".join(kept)


def jobs_table(records: list[JobRecord]) -> Table:
    table = Table()
    for column in ("name", "status", "created", "wall time", "steps", "source"):
        table.add_column(column, no_wrap=column != "source")
    for record in records:
        steps = record.steps.values()
        done = sum(1 for s in steps if s.status == "completed")
        created = parse_iso(record.created_at)
        status = f"{record.status} (runner gone)" if record.stale else styled(record.status)
        table.add_row(record.name or "", status,
                      created.astimezone().strftime("%Y-%m-%d %H:%M:%S") if created else "-",
                      seconds(record.duration_seconds), f"{done}/{len(steps)}",
                      record.source or "")
    return table


def progress_lines(before: JobRecord | None, after: JobRecord) -> list[str]:
    """What changed between two snapshots of a record, as lines for ``job stream``."""
    lines = []
    old_steps = before.steps if before is not None else {}
    for name, step in after.steps.items():
        old = old_steps.get(name)
        if old is None or step.status != old.status:
            extra = ""
            if step.status in ("completed", "failed", "canceled"):
                extra = f" in {seconds(step.duration_seconds)}"
                detail = step_detail(step)
                extra += f" ({detail})" if detail else ""
            elif step.status == "running" and step.progress is not None:
                detail = step_detail(step)  # where a step already under way stands
                extra = f" ({detail})" if detail else ""
            if step.status in ("failed", "skipped") and step.error:
                extra += f": {error_summary(step.error)}"
            lines.append(f"step {name}: {step.status}{extra}")
        elif step.status == "running" and step.progress != old.progress:
            lines.append(f"step {name}: {step_detail(step)}")
    if before is None or before.status != after.status:
        lines.append(f"job {after.name}: {after.status}")
    return lines
