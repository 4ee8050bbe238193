"""``<run>/report.html``: one self-contained page per job (inline SVG and CSS, a few lines
of inline script to zoom, no network), from its typed record
(:class:`~mlpipe.jobs.record.JobRecord`) and its steps' logs (read through
:mod:`mlpipe.runtime.step_logs`; the charts are :mod:`mlpipe.runtime.reports`').

The headline says how the job ended in words and colour (a job that completed with failed
mini-batches is not green). The steps are drawn on the job's time axis. Each parallel step
shows the totals of its final state (the counts of job_result.txt and ``job show``), where a
mini-batch's time goes and the advice that follows, the final run's task stream, throughput,
CPU and memory on one time axis, its durations, slowest attempts, errors grouped by
signature (each linked to its first traceback) and its run() profile; earlier runs (a
resume or rerun) are behind a switch, each on its own axis. While the job runs the page
reloads itself.
"""

from __future__ import annotations

import csv
import html
import os
import time
import urllib.parse
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from mlpipe.jobs.fix_loop import next_lines
from mlpipe.jobs.record import JobRecord, StepRecord
from mlpipe.jobs.store import JobStore
from mlpipe.runs import JOB_REPORT_FILE
from mlpipe.runtime.mini_batch_outcomes import failed_attempts_last
from mlpipe.runtime.records import totals_text
from mlpipe.runtime.reports.charts import (
    PALETTE,
    SPARSE_ATTEMPTS,
    ZOOM_SCRIPT,
    Axis,
    breakdown,
    format_seconds_short,
    gantt,
    histogram,
    lines,
    slowest,
    throughput,
    throughput_of,
)
from mlpipe.runtime.reports.icicle import icicle
from mlpipe.runtime.reports.run_chart import SLOWEST_SHOWN, RunChart, live_run
from mlpipe.runtime.reports.task_stream import (
    read_utilisation,
    render_body,
    render_chart_body,
    run_starts,
)
from mlpipe.runtime.step_logs import (
    Attempt,
    AttemptTable,
    RunEntry,
    StepLogs,
    describe_detail,
    first_line,
    read_attempts,
    read_runs,
    split_by_run,
)
from mlpipe.runtime.textio import replace_text
from mlpipe.runtime.tuning.brief import overhead_advice
from mlpipe.runtime.tuning.profile import (
    MACHINE,
    ProfileTally,
    StepProfile,
    read_profile,
    run_profile,
)
from mlpipe.wording import duration, plural

ERRORS_SHOWN = 10
FAILED_SHOWN = 50
REFRESH_SECONDS = 5
RUNNING = ("queued", "running")
STYLE = ("body{font-family:sans-serif;margin:16px}"
         "td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #eee;vertical-align:top}"
         "pre{white-space:pre-wrap;font-size:12px;background:#f6f6f6;padding:6px}"
         "h1,h2 .status{padding:2px 8px;border-radius:4px}"
         ".ok{color:#1b5e20;background:#e8f5e9}.warn{color:#7a4f00;background:#fff4d6}"
         ".bad{color:#b71c1c;background:#fdecea}.run{color:#0d47a1;background:#e3f2fd}"
         ".muted{color:#777}.advice{background:#fff8e1;padding:6px 10px;border-left:4px solid"
         " #e0a800}")


def write_job_report(run_dir: str | os.PathLike[str], record: JobRecord | None = None) -> Path:
    """Write ``<run_dir>/report.html`` from the job's record (``record``, else the one the
    job store reads from its ``job.json``) and step logs; a write that fails leaves no
    temporary file."""
    run = Path(run_dir)
    if record is None:
        record = JobStore(run.parent).load(run.name)
    target = run / JOB_REPORT_FILE
    replace_text(target, render_job_report(record, run))
    return target


def render_job_report(record: JobRecord, run_dir: Path | None = None) -> str:
    """The page for a job record; links are relative to ``run_dir``."""
    run = run_dir or Path(record.run_dir or ".")
    name = html.escape(str(record.name or ""))
    steps = record.steps
    status = record.status
    words, css = job_outcome(status, steps)
    refresh = (f"<meta http-equiv='refresh' content='{REFRESH_SECONDS}'>"
               if status in RUNNING else "")
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'>{refresh}<title>Job {name}: "
             f"{html.escape(words)}</title><style>{STYLE}</style></head><body>"
             f"<h1 class='{css}'>Job {name}: {html.escape(words)}</h1>",
             f"<p>Run folder: {html.escape(str(record.run_dir or ''))}; wall time "
             f"{_seconds(record.duration_seconds)}; attempt {record.attempt or 1}"
             f"{'; this page reloads every ' + str(REFRESH_SECONDS) + ' s' if refresh else ''}"
             "</p>", _next_steps(record), _steps_table(steps), _job_gantt(record, steps)]
    for step_name, step in steps.items():
        if step.kind == "parallel" and step.logs_dir:
            parts.append(_parallel_section(step_name, step, run))
    parts.append(f"{ZOOM_SCRIPT}</body></html>\n")
    return "".join(parts)


# -- words ---------------------------------------------------------------------------------
def outcome(status: str, failed: int, total: int) -> tuple[str, str]:
    """``("completed, 39 of 100 mini-batches failed", "warn")``: the words and CSS class
    of a step's or a job's outcome."""
    if status == "completed":
        if failed:
            return f"completed, {failed} of {plural(total, 'mini-batch')} failed", "warn"
        return "completed", "ok"
    if status in RUNNING:
        return status, "run"
    if status == "canceled":
        return (f"canceled, {failed} of {plural(total, 'mini-batch')} failed" if failed
                else "canceled"), "warn"
    if status == "failed" and failed:
        return f"failed, {failed} of {plural(total, 'mini-batch')} failed", "bad"
    return status or "unknown", "bad" if status in ("failed", "skipped") else "muted"


def job_outcome(status: str, steps: dict[str, StepRecord]) -> tuple[str, str]:
    failed = total = 0
    for step in steps.values():
        if step.summary is not None:
            failed += step.summary.mini_batches_failed
            total += step.summary.mini_batches_total
    words, css = outcome(status, failed, total)
    if status == "failed":
        broken = [n for n, s in steps.items() if s.status == "failed"]
        if broken:
            words += f" (step {', '.join(broken)})"
    return words, css


def _step_outcome(step: StepRecord) -> tuple[str, str]:
    summary = step.summary
    if summary is None:
        return outcome(step.status, 0, 0)
    return outcome(step.status, summary.mini_batches_failed, summary.mini_batches_total)


def _seconds(value: Any) -> str:
    return duration(float(value)) if isinstance(value, (int, float)) else "-"


def _status(step: StepRecord) -> str:
    words, css = _step_outcome(step)
    return f"<span class='status {css}'>{html.escape(words)}</span>"


# -- the job --------------------------------------------------------------------------------
def _steps_table(steps: dict[str, StepRecord]) -> str:
    rows = ["<h2>Steps</h2><table><tr><th>step</th><th>kind</th><th>status</th>"
            "<th>wall time</th><th>mini-batches</th><th>items</th><th>after</th></tr>"]
    for name, step in steps.items():
        summary = step.summary
        batches = items = ""
        if summary is not None:
            batches, _, items = totals_text(summary).partition("; ")
        sources = [str(before) for before in step.depends_on]
        rows.append(f"<tr><td><a href='#{html.escape(name)}'>{html.escape(name)}</a></td>"
                    f"<td>{html.escape(step.kind or '')}</td><td>{_status(step)}</td>"
                    f"<td>{_seconds(step.duration_seconds)}</td><td>{batches}</td>"
                    f"<td>{items}</td><td>{html.escape(', '.join(sources))}</td></tr>")
    rows.append("</table>")
    return "".join(rows)


def _epoch(text: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(text)).timestamp() if text else None
    except ValueError:
        return None


def _job_gantt(record: JobRecord, steps: dict[str, StepRecord]) -> str:
    """The steps of this run of the job on its time axis (a step reused from an earlier
    run says so instead of a bar)."""
    start = _epoch(record.started_at)
    if start is None:
        return ""
    end = _epoch(record.ended_at) or time.time()
    rows: list[tuple[str, float | None, float | None, str]] = []
    for name, step in steps.items():
        began, ended = _epoch(step.started_at), _epoch(step.ended_at)
        status = step.status
        if step.reused or (began is not None and began < start - 1):
            rows.append((name, None, None, "reused from an earlier run"))
        elif began is None:
            rows.append((name, None, None, status))
        else:
            css = _step_outcome(step)[1]
            rows.append((name, began, ended, "warning" if css == "warn" and
                         status == "completed" else status))
    return "<h3>Timeline</h3>" + gantt(rows, Axis(start, max(end - start, 1e-3), "job"))


# -- a parallel step ---------------------------------------------------------------------------
def _parallel_section(name: str, step: StepRecord, run_dir: Path) -> str:
    logs = StepLogs.of(step.logs_dir or "")
    anchor = html.escape(name)
    head = (f"<h2 id='{anchor}'>Step {anchor}: {_status(step)}</h2>"
            f"<p>{_links(logs, run_dir)}</p>")
    recorded = _runs_so_far(logs)
    charts = [RunChart.from_json(run.chart) for run in recorded]
    parts: Sequence[AttemptTable | RunChart]
    profile: StepProfile | None
    attempts: AttemptTable | None = None
    if recorded and _charted(charts):  # drawn from what the step kept: the CSV is not read
        runs, parts = recorded, [chart for chart in charts if chart is not None]
        profile = run_profile(logs, runs)
    else:
        try:
            attempts = read_attempts(logs)
        except ValueError as error:
            return head + f"<p>{html.escape(str(error))}</p>"
        runs = recorded or _runs_of(attempts)
        if not len(attempts) and not runs:
            return head + "<p>No attempts recorded.</p>"
        parts = split_by_run(attempts, runs)
        profile = read_profile(logs, attempts=attempts)
    out = [head, _totals(step, runs), _where_time_goes(profile, step, run_dir)]
    final = parts[-1]
    run = runs[-1] if runs else None
    out.append(f"<h3>Final run (run {len(parts)} of {len(parts)})</h3>" if len(parts) > 1
               else "<h3>The run</h3>")
    out.append(_run_charts(name, logs, final, run, profile, samples=True))
    out.append(_failed_mini_batches(attempts, logs, step))
    out.append("<h3>Errors of the final state</h3>" + _errors(
        run.errors if recorded and run is not None else _errors_of(final), logs, run_dir))
    out.append(_profile(logs))
    if len(parts) > 1:
        earlier = []
        for index, (part, entry) in enumerate(zip(parts[:-1], runs[:-1], strict=False)):
            what = (f"{html.escape(entry.status)}, {_run_counts(entry)}" if recorded
                    else plural(len(part), "attempt"))
            earlier.append(f"<h4>Run {index + 1}: {what}</h4>"
                           + _run_charts(f"{name}-{index}", logs, part, entry, None,
                                         samples=False)
                           + "<h4>Its errors</h4>"
                           + _errors(entry.errors if recorded else _errors_of(part), logs,
                                     run_dir))
        out.append(f"<details><summary>Earlier runs of this step ({len(parts) - 1})</summary>"
                   f"{''.join(earlier)}</details>")
    return "".join(out)


def _runs_so_far(logs: StepLogs) -> list[RunEntry]:
    """The step's runs in ``runs.json``, the last one as it is now when the step runs in
    this process (its chart, tally and errors so far)."""
    runs = read_runs(logs)
    live = live_run(logs)
    if live is not None:
        runs = [*runs[:-1], live] if runs and runs[-1].started == live.started else [*runs, live]
    return runs


def _charted(charts: list[RunChart | None]) -> bool:
    """Every run has its chart, with its attempts when it is drawn one bar per attempt (at
    most ``SPARSE_ATTEMPTS``; a chart written before charts kept them is not)."""
    return all(chart is not None and (chart.attempts > SPARSE_ATTEMPTS or
                                      len(chart.rows) == chart.attempts)
               for chart in charts)


def _runs_of(attempts: AttemptTable) -> list[RunEntry]:
    """The runs of logs written before runs.json: split where the attempts pause (a resume)."""
    if not len(attempts):
        return []
    starts = [float(attempts.start.min()), *run_starts(attempts, [])]
    parts = split_by_run(attempts, [RunEntry(started=start) for start in starts])
    return [RunEntry(started=start, ended=float(part.end.max()) if len(part) else start,
                     status="") for start, part in zip(starts, parts, strict=True)]


def _links(logs: StepLogs, run_dir: Path) -> str:
    links = [(logs.job_result.name, logs.job_result), (logs.readme.name, logs.readme),
             (logs.relative(logs.error_summary), logs.error_summary),
             (logs.master_role.name, logs.master_role), (logs.processed.name, logs.processed),
             (logs.task_stream.name, logs.task_stream)]
    found = [f"<a href='{_href(path, run_dir)}'>{label}</a>" for label, path in links
             if path.is_file()]
    return "Logs: " + " · ".join([f"<a href='{_href(logs.root, run_dir)}'>folder</a>", *found])


def _href(path: Path, run_dir: Path, fragment: str = "") -> str:
    try:
        relative = os.path.relpath(path, run_dir)
    except ValueError:
        relative = str(path)
    target = urllib.parse.quote(Path(relative).as_posix())
    if fragment:
        target += "#:~:text=" + urllib.parse.quote(fragment, safe="")
    return html.escape(target)


def _totals(step: StepRecord, runs: list[RunEntry]) -> str:
    """The final state's counts, as job_result.txt and ``job show`` give them (a running
    step's progress so far: its items' total is not known yet)."""
    summary, progress = step.summary, step.progress
    items: int | None = None
    if summary is not None:
        total, succeeded = summary.mini_batches_total, summary.mini_batches_succeeded
        failed, reused = summary.mini_batches_failed, summary.mini_batches_reused
        if summary.items_known:
            items = summary.items_total
        items_ok, items_bad = summary.items_succeeded, summary.items_failed
    elif progress is not None:
        total = (progress.mini_batches_total if progress.mini_batches_total is not None
                 else progress.mini_batches_known)
        failed, reused = progress.mini_batches_failed, progress.mini_batches_reused
        succeeded = progress.mini_batches_done - failed + reused
        items_ok, items_bad = progress.items_succeeded, progress.items_failed
    else:
        return ""
    rest = max(total - succeeded - failed, 0)
    items_rest = "" if items is None else max(items - items_ok - items_bad, 0)
    attempts = runs[-1].counts.get("attempts") if runs and runs[-1].counts else None
    return ("<table><tr><th>mini-batches</th><th>succeeded</th><th>failed</th>"
            "<th>not processed</th><th>items</th><th>items succeeded</th><th>items failed</th>"
            "<th>items not processed</th><th>attempts (final run)</th><th>reused</th></tr>"
            f"<tr><td>{total}</td><td>{succeeded}</td><td>{failed}</td><td>{rest}</td>"
            f"<td>{'' if items is None else items}</td><td>{items_ok}</td><td>{items_bad}</td>"
            f"<td>{items_rest}</td><td>{'' if attempts is None else attempts}</td>"
            f"<td>{reused}</td></tr></table>")


def _where_time_goes(profile: StepProfile | None, step: StepRecord, run_dir: Path) -> str:
    if profile is None or not profile.tally.attempts:
        return ""
    p = profile
    bar = breakdown([("dispatch", p.dispatch_per_attempt, "#9467bd"),
                     ("load", p.load_per_attempt, "#17becf"),
                     ("run()", p.run_per_attempt, "#2ca02c"),
                     ("result", p.result_per_attempt, "#bcbd22")])
    memory = (f"{p.memory_per_worker_mb:.0f} MB" if p.memory_per_worker_mb else "not sampled")
    facts = (f"<p>Per mini-batch: dispatch {format_seconds_short(p.dispatch_per_attempt)}, "
             f"load {format_seconds_short(p.load_per_attempt)}, run() "
             f"{format_seconds_short(p.run_per_attempt)}, result "
             f"{format_seconds_short(p.result_per_attempt)} (overhead {p.overhead_share:.0%}); "
             f"run() per item {format_seconds_short(p.time_per_item)}; CPU-bound "
             f"{p.cpu_share:.0%} of attempt time; peak memory per worker {memory}; worker "
             f"start-up {format_seconds_short(p.startup_per_worker)}; utilisation "
             f"{p.utilisation:.0%}; workers idle between attempts "
             f"{format_seconds_short(p.waiting)} in all.</p>")
    advice = overhead_advice(p)
    job = run_dir.name
    hint = (f"<p class='advice'>{html.escape(advice[0].upper() + advice[1:])}.</p>"
            if advice else "")
    return (f"<h3>Where the time goes</h3>{bar}{facts}{hint}<p class='muted'>"
            f"<code>mlpipe job advise {html.escape(job)}</code> predicts this step at other "
            "settings and its duration on Azure VM sizes.</p>")


def _run_counts(run: RunEntry) -> str:
    c = run.counts
    if not c:
        return "no counts recorded"
    return (f"{c.get('succeeded', 0)} succeeded, {c.get('failed', 0)} failed of "
            f"{plural(c.get('mini_batches', 0), 'mini-batch')}, "
            f"{plural(c.get('attempts', 0), 'attempt')}")


def _run_charts(name: str, logs: StepLogs, attempts: AttemptTable | RunChart,
                run: RunEntry | None, profile: StepProfile | None, *, samples: bool) -> str:
    """The run's task stream, throughput, CPU and memory on one axis (the run's start to its
    end), its durations and slowest attempts (from its rows, or from its chart)."""
    if isinstance(attempts, RunChart):
        return _chart_charts(name, logs, attempts, run, profile, samples=samples)
    last = float(attempts.end.max()) if len(attempts) else None
    first = float(attempts.start.min()) if len(attempts) else 0.0
    start = run.started if run is not None else first
    end = run.ended if run is not None and run.ended is not None else (last or start)
    if run is not None and run.ended is None:  # still running
        end = max(time.time(), last or 0.0)
    axis = Axis(start, max(end - start, 1e-3), f"step-{name}")
    out = ["<h4>Task stream</h4>", render_body(attempts, read_utilisation(logs) if samples
                                                else None, axis)]
    out.append("<h4>Throughput</h4>" + throughput(attempts, axis))
    if samples:
        out.append(_resources(logs, axis))
    tally = profile.tally if profile is not None else ProfileTally.of(attempts)
    out.append("<h4>Durations of the attempts</h4>" + histogram(tally.histogram))
    out.append("<h4>Slowest attempts</h4>" + _slowest(slowest(attempts, SLOWEST_SHOWN)))
    return "".join(out)


def _chart_charts(name: str, logs: StepLogs, chart: RunChart, run: RunEntry | None,
                  profile: StepProfile | None, *, samples: bool) -> str:
    """:func:`_run_charts` of a run drawn from its :class:`RunChart`."""
    axis = chart.axis(f"step-{name}")
    out = ["<h4>Task stream</h4>", render_chart_body(chart, read_utilisation(logs) if samples
                                                     else None, axis)]
    out.append("<h4>Throughput</h4>" + throughput_of(chart.finished, axis))
    if samples:
        out.append(_resources(logs, axis))
    tally = profile.tally if profile is not None else ProfileTally.from_json(
        run.tally if run is not None else {})
    out.append("<h4>Durations of the attempts</h4>" + histogram(tally.histogram))
    out.append("<h4>Slowest attempts</h4>" + _slowest(chart.slowest))
    return "".join(out)


def _resources(logs: StepLogs, axis: Axis) -> str:
    """CPU % and memory (MB) of the machine and each worker process on the run's axis."""
    series: dict[str, list[tuple[float, float, float]]] = {}
    try:
        with open(logs.samples, newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                try:
                    point = (axis.start + float(row["Seconds"]), float(row["CPU Percent"]),
                             float(row["Memory MB"]))
                except (KeyError, TypeError, ValueError):
                    continue
                series.setdefault(row.get("Source") or "", []).append(point)
    except OSError:
        return "<h4>CPU and memory</h4><p>Not sampled (resource_monitor_interval 0).</p>"
    if not series:
        return "<h4>CPU and memory</h4><p>No samples (the step ended before the first one).</p>"
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(sorted(series))}
    legend = " ".join(f"<span style='color:{colours[name]}'>&#9632; {html.escape(name)}"
                      f"{' (all cores)' if name == MACHINE else ''}</span>"
                      for name in sorted(series))
    cpu = {name: [(t, c) for t, c, _ in points] for name, points in series.items()}
    memory = {name: [(t, m) for t, _, m in points] for name, points in series.items()
              if name != MACHINE} or {name: [(t, m) for t, _, m in points]
                                       for name, points in series.items()}
    return (f"<h4>CPU and memory</h4><p>{legend}</p><p>CPU % (100 = one core; the machine line "
            "is the share of all cores)</p>" + lines(cpu, axis, "%", colours)
            + "<p>Resident memory of each worker process (MB)</p>"
            + lines(memory, axis, " MB", colours))


def _slowest(attempts: Sequence[Attempt]) -> str:
    rows = ["<table><tr><th>mini-batch</th><th>attempt</th><th>process</th><th>status</th>"
            "<th>items</th><th>seconds</th><th>run()</th><th>files or partition key</th></tr>"]
    for a in attempts:
        rows.append(f"<tr><td>{html.escape(a.mini_batch_id)}</td><td>{a.picked_count}</td>"
                    f"<td>{html.escape(a.process)}</td><td>{html.escape(a.status)}</td>"
                    f"<td>{a.succeeded}/{a.total}</td><td>{a.elapsed:.3f}</td>"
                    f"<td>{a.run_seconds:.3f}</td>"
                    f"<td>{html.escape(describe_detail(a.detail))}</td></tr>")
    rows.append("</table>")
    return "".join(rows)


def _failed_mini_batches(attempts: AttemptTable | None, logs: StepLogs,
                         step: StepRecord) -> str:
    """The mini-batches whose last attempt failed (``job show --mini-batches --failed``):
    the first ``FAILED_SHOWN`` with their files or partition key and error. ``attempts``:
    the step's, when the page read them; else they are read only when the step has failed
    mini-batches (a large step's page is otherwise drawn without reading them back)."""
    if attempts is None:
        counts = step.summary or step.progress
        if counts is None or not counts.mini_batches_failed:
            return ""
        try:
            attempts = read_attempts(logs)
        except ValueError:
            return ""
    failed = failed_attempts_last(attempts)
    if not len(failed):
        return ""
    rows = [f"<h3>Failed mini-batches ({len(failed)})</h3><table><tr><th>mini-batch</th>"
            "<th>attempts</th><th>status</th><th>files or partition key</th><th>error</th></tr>"]
    for a in failed.take(range(min(len(failed), FAILED_SHOWN))):
        rows.append(f"<tr><td><code>{html.escape(a.mini_batch_id)}</code></td>"
                    f"<td>{a.picked_count}</td><td>{html.escape(a.status)}</td>"
                    f"<td>{html.escape(describe_detail(a.detail))}</td>"
                    f"<td>{html.escape(first_line(a.message or a.status))}</td></tr>")
    rows.append("</table>")
    if len(failed) > FAILED_SHOWN:
        rows.append(f"<p>and {len(failed) - FAILED_SHOWN} more.</p>")
    return "".join(rows)


def _next_steps(record: JobRecord) -> str:
    """What to do now the job ended: the fail-fix loop's commands, or how to resume it (the
    console's last lines)."""
    lines = next_lines(record) if record.status not in RUNNING else []
    return f"<pre class='advice'>{html.escape(chr(10).join(lines))}</pre>" if lines else ""


def _errors_of(attempts: AttemptTable | RunChart) -> list[dict[str, Any]]:
    """Error groups from the attempts alone (logs written before runs.json, which have no
    chart)."""
    from mlpipe.runtime.error_keys import message_line, signature  # noqa: PLC0415

    if isinstance(attempts, RunChart):
        return []
    groups: dict[Any, dict[str, Any]] = {}
    batches: dict[Any, set[str]] = {}
    for a in attempts.take(~attempts.ok):
        message = a.message or a.status
        key = signature(a.category or a.status, message)
        group = groups.get(key)
        if group is None:
            group = groups[key] = {"category": key.category, "exception": key.exception,
                                   "pattern": key.pattern, "frame": key.frame,
                                   "message": message_line(message), "attempts": 0,
                                   "first_text": message, "where": "", "first": ""}
            batches[key] = set()
        group["attempts"] += 1
        batches[key].add(a.mini_batch_id)
    for key, group in groups.items():
        group["mini_batches"] = len(batches[key])
    return sorted(groups.values(), key=lambda g: -g["attempts"])


def _errors(groups: list[dict[str, Any]], logs: StepLogs, run_dir: Path) -> str:
    """Every error group (the first ``ERRORS_SHOWN`` open, the rest behind a switch)."""
    if not groups:
        return "<p>No failed attempts.</p>"
    attempts = sum(int(g.get("attempts") or 0) for g in groups)
    head = (f"<p>{plural(attempts, 'failed attempt')} in "
            f"{plural(len(groups), 'kind of error', 'kinds of error')} (grouped by signature: "
            "the exception, its message with numbers, paths and quoted names masked, and the "
            "user's frame).</p><table><tr><th>failed attempts</th><th>mini-batches hit</th>"
            "<th>mini-batches failed</th><th>category</th><th>error</th><th>raised in</th>"
            "<th>first</th></tr>")
    rows = [_error_row(group, logs, run_dir) for group in groups]
    shown = "".join(rows[:ERRORS_SHOWN])
    if len(rows) > ERRORS_SHOWN:
        hidden = plural(len(rows) - ERRORS_SHOWN, "more kind of error", "more kinds of error")
        more = (f"</table><details><summary>{hidden}</summary><table>"
                f"{''.join(rows[ERRORS_SHOWN:])}</table></details>")
        return head + shown + more
    return head + shown + "</table>"


def _error_row(group: dict[str, Any], logs: StepLogs, run_dir: Path) -> str:
    exception = str(group.get("exception") or "")
    pattern = str(group.get("pattern") or "")
    text = f"{exception}: {pattern}" if exception else pattern
    where = str(group.get("where") or "")
    first = str(group.get("first") or "")
    link = (f"<a href='{_href(logs.root / where, run_dir, first)}'>{html.escape(where)}</a>"
            if where else "")
    full = str(group.get("first_text") or group.get("message") or "")
    return (f"<tr><td>{group.get('attempts', 0)}</td><td>{group.get('mini_batches', '')}</td>"
            f"<td>{group.get('failed', group.get('failed_for_good', ''))}</td>"
            f"<td>{html.escape(str(group.get('category', '')))}</td><td>{html.escape(text)}"
            f"<details><summary>e.g. {html.escape(str(group.get('message', ''))[:160])}"
            f"</summary><pre>{html.escape(full)}</pre></details></td>"
            f"<td>{html.escape(str(group.get('frame') or ''))}</td>"
            f"<td>{html.escape(first)} {link}</td></tr>")


def _profile(logs: StepLogs) -> str:
    files = logs.profile_files()
    if not files:
        return ""
    chart = icicle(files)
    if not chart:
        return ""
    return (f"<h3>run() profile</h3><p>From {plural(len(files), 'profile')} of "
            "--profiling_module (sys/profile): each box is a function, as wide as the time "
            "spent in it, its callees below.</p>" + chart)


__all__ = ["job_outcome", "outcome", "render_job_report", "write_job_report"]
