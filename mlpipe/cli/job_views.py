"""How job records look in the terminal: summary tables and progress lines."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from mlpipe.jobs.timestamps import parse_iso
from mlpipe.runtime.fix_loop import next_lines
from mlpipe.runtime.records import totals_text
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


def step_detail(step: dict[str, Any]) -> str:
    """A short description of what a step did (counts for parallel steps)."""
    summary = step.get("summary") or {}
    progress = step.get("progress") or {}
    if step.get("kind") == "parallel" and (summary or progress):
        if summary:
            text = totals_text(summary)
            if summary.get("mini_batches_total", 0) == 0 and step.get("status") == "completed":
                text = "no mini-batches: the input is empty"
        else:
            text = (f"{progress_fraction(progress)} mini-batches, "
                    f"{progress.get('items_succeeded', 0)} items ok, "
                    f"{progress.get('items_failed', 0)} failed")
        return text
    if step.get("skipped_by_user"):
        return "not run (--skip-step): outputs given"
    if step.get("kind") == "sweep" and step.get("trials"):
        trials = step["trials"]
        stopped = sum(1 for t in trials.values() if t.get("status") == "early_terminated")
        best = step.get("best_trial")
        text = f"{len(trials)} trials" + (f", {stopped} stopped early" if stopped else "")
        return text + (f", best {best}" if best else "")
    if step.get("exit_code") is not None:
        return f"exit code {step['exit_code']}"
    return ""


def progress_fraction(progress: dict[str, Any]) -> str:
    """``"742/3000 (25%)"`` of a running step's progress, ``"742/?"`` until its total is
    known, ``"+ 933 reused"`` on a resumed step; done (reused included) never exceeds
    the total."""
    reused = int(progress.get("mini_batches_reused", 0))
    done = int(progress.get("mini_batches_done", 0)) + reused
    total = progress.get("mini_batches_total")
    if total is None and progress.get("listing_done"):
        total = progress.get("mini_batches_known", 0)
    suffix = f" ({reused} reused)" if reused else ""
    if total is None:
        return f"{done}/?{suffix}"
    total = max(int(total), int(progress.get("mini_batches_known", 0)))
    done = min(done, total)
    percent = 100 if total == 0 else 100 * done // total
    return f"{done}/{total} ({percent}%){suffix}"


def steps_table(record: dict[str, Any]) -> Table:
    table = Table()
    table.add_column("step", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("wall time", justify="right", no_wrap=True)
    table.add_column("detail")
    for name, step in record.get("steps", {}).items():
        table.add_row(name, step.get("kind", ""), styled(step.get("status", "")),
                      seconds(_elapsed(step)), step_detail(step))
    return table


def _elapsed(step: dict[str, Any]) -> float | None:
    """A step's wall time; for a running step, the time since it started."""
    if step.get("duration_seconds") is not None or step.get("status") != "running":
        return step.get("duration_seconds")
    started = parse_iso(step.get("started_at"))
    return (datetime.now(timezone.utc) - started).total_seconds() if started else None


def print_job(record: dict[str, Any], out: Console | None = None) -> None:
    """The steps table, then where the outputs and logs are (one path per line)."""
    out = out or console()
    out.print(f"job {record.get('name')}: {styled(record.get('status', ''))}")
    out.print(steps_table(record))
    out.print(f"run folder: {record.get('run_dir')}", soft_wrap=True)
    total = record.get("duration_seconds")
    if total is not None:
        out.print(f"wall time:  {seconds(total)}")
    lines = []
    for name, output in (record.get("outputs") or {}).items():
        lines.append(f"  {name}: {output.get('path')}")
    for step_name, step in record.get("steps", {}).items():
        for name, output in (step.get("outputs") or {}).items():
            lines.append(f"  {step_name}.{name}: {output.get('path')}")
        outputs = {o.get("path") for o in (step.get("outputs") or {}).values()}
        if step.get("append_row_file") and step["append_row_file"] not in outputs:
            lines.append(f"  {step_name} append_row file: {step['append_row_file']}")
    if lines:
        out.print("outputs:")
        for line in lines:
            out.print(line, soft_wrap=True, markup=False)
    for step_name, step in record.get("steps", {}).items():
        for line in failure_lines(step_name, step):
            out.print(line, soft_wrap=True, markup=False)
    if record.get("error"):
        out.print(f"error: {record['error']}", soft_wrap=True, markup=False)
    if record.get("status") in ("failed", "canceled", "completed"):
        for line in next_lines(record):  # the fail-fix loop, or how to resume
            out.print(line, soft_wrap=True, markup=False)


TOP_ERRORS_SHOWN = 3
INIT_FAILED = "init() failed: "  # how the driver counts a worker that could not start


def failure_lines(step_name: str, step: dict[str, Any]) -> list[str]:
    """Why a step failed, or that a parallel step completed although items failed (within
    its error thresholds): the reason, its most frequent errors with their counts, and
    where the details are."""
    status = step.get("status")
    if status == "failed" and step.get("error"):
        lines = [f"step {step_name} failed: {brief_error(step['error'])}"]
        lines += top_error_lines(step, skip=step["error"])
        lines.append(f"  logs: {step.get('logs_dir')}")
        return lines
    summary = step.get("summary") or {}
    failed = summary.get("items_failed", 0) or summary.get("mini_batches_failed", 0)
    if status not in ("completed", "canceled") or not failed:
        return []
    items = plural(summary.get("items_failed", 0), "item")
    batches = plural(summary.get("mini_batches_failed", 0), "mini-batch")
    how = ("completed, but {} ({}) failed (within its error thresholds):" if status == "completed"
           else "canceled; {} ({}) had failed:")
    return [f"step {step_name}: {how.format(batches, items)}", *top_error_lines(step)]


def top_error_lines(step: dict[str, Any], skip: str = "") -> list[str]:
    """A parallel step's most frequent kinds of error, each labelled by its signature with
    its failed attempts and mini-batches, and the path of its ``user/error.txt``; nothing
    when it recorded no errors or ``skip`` already says it all."""
    from mlpipe.runtime.error_groups import group_line  # noqa: PLC0415 - job show stays light

    summary = step.get("summary") or {}
    top = summary.get("error_groups")
    if top is None:  # a record written before error groups: (message, attempts, error file)
        top = [{"label": message, "attempts": count} for message, count, _where
               in summary.get("top_errors") or []]
    if all(str(group.get("message") or group.get("label")).removeprefix(INIT_FAILED) in skip
           for group in top):
        return []  # nothing to add (an init() failure's reason already has its traceback)
    lines = [f"  {group_line(group)}" for group in top[:TOP_ERRORS_SHOWN]]
    more = max(int(summary.get("error_kinds") or 0), len(top)) - TOP_ERRORS_SHOWN
    if more > 0:
        lines.append(f"  ... and {plural(more, 'other kind of error', 'other kinds of error')}")
    lines.append(f"  details: {Path(step.get('logs_dir') or '.') / 'user' / 'error.txt'}")
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


def jobs_table(records: list[dict[str, Any]]) -> Table:
    table = Table()
    for column in ("name", "status", "created", "wall time", "steps", "source"):
        table.add_column(column, no_wrap=column != "source")
    for record in records:
        steps = record.get("steps", {}).values()
        done = sum(1 for s in steps if s.get("status") == "completed")
        created = parse_iso(record.get("created_at"))
        status = record.get("status", "")
        if record.get("stale"):
            status += " (runner gone)"
        table.add_row(record.get("name", ""), styled(status) if not record.get("stale") else status,
                      created.astimezone().strftime("%Y-%m-%d %H:%M:%S") if created else "-",
                      seconds(record.get("duration_seconds")), f"{done}/{len(steps)}",
                      record.get("source") or "")
    return table


def progress_lines(before: dict[str, Any] | None, after: dict[str, Any]) -> list[str]:
    """What changed between two snapshots of a record, as lines for ``job stream``."""
    lines = []
    old_steps = (before or {}).get("steps", {})
    for name, step in after.get("steps", {}).items():
        old = old_steps.get(name, {})
        if step.get("status") != old.get("status"):
            extra = ""
            if step.get("status") in ("completed", "failed", "canceled"):
                extra = f" in {seconds(step.get('duration_seconds'))}"
                detail = step_detail(step)
                extra += f" ({detail})" if detail else ""
            elif step.get("status") == "running" and step.get("progress"):
                detail = step_detail(step)  # where a step already under way stands
                extra = f" ({detail})" if detail else ""
            if step.get("status") in ("failed", "skipped") and step.get("error"):
                extra += f": {error_summary(step['error'])}"
            lines.append(f"step {name}: {step.get('status')}{extra}")
        elif step.get("status") == "running" and step.get("progress") != old.get("progress"):
            lines.append(f"step {name}: {step_detail(step)}")
    if (before or {}).get("status") != after.get("status"):
        lines.append(f"job {after['name']}: {after['status']}")
    return lines
