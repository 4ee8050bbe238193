"""``<run>/report.html``: one self-contained page per job (inline SVG and CSS, no script,
no network).

For the job: every step with its kind, status and wall time, in pipeline order
(the DAG's topological order). For each parallel step, from its job report CSV
(``logs/sys/job_report/processed_mini-batches.csv``): the task stream (drawn per
worker and time bucket when dense), throughput over time, the slowest attempts
and the errors grouped with counts and a first message.
"""

from __future__ import annotations

import csv
import html
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from mlpipe.runtime.reports.resource_samples import MACHINE, samples_path
from mlpipe.runtime.reports.task_stream import (
    ZOOM_SCRIPT,
    Bar,
    describe_detail,
    format_seconds_short,
    read_bars,
    read_utilisation,
    render_body,
)
from mlpipe.runtime.textio import replace_text

REPORT_NAME = "report.html"
SLOWEST_SHOWN = 10
ERRORS_SHOWN = 10
THROUGHPUT_BUCKETS = 60
STYLE = ("body{font-family:sans-serif;margin:20px;max-width:1200px}"
         "td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}"
         "pre{white-space:pre-wrap;font-size:12px;background:#f6f6f6;padding:6px}"
         ".completed{color:#2a7a2a}.failed{color:#c62828}.canceled{color:#b26a00}")


def write_job_report(run_dir: str | os.PathLike[str],
                     record: dict[str, Any] | None = None) -> Path:
    """Write ``<run_dir>/report.html`` from the job's record (``record``, else its
    ``job.json``) and step logs; a write that fails leaves no temporary file."""
    run = Path(run_dir)
    if record is None:
        record = json.loads((run / "job.json").read_text(encoding="utf-8"))
    target = run / REPORT_NAME
    replace_text(target, render_job_report(record))
    return target


def render_job_report(record: dict[str, Any]) -> str:
    """The page for a job record (``job.json``)."""
    name = html.escape(str(record.get("name", "")))
    steps: dict[str, dict[str, Any]] = record.get("steps") or {}
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Job {name}</title>"
             f"<style>{STYLE}</style></head><body><h1>Job {name}: "
             f"{_status(str(record.get('status', '')))}</h1>",
             f"<p>Run folder: {html.escape(str(record.get('run_dir', '')))}; wall time "
             f"{_seconds(record.get('duration_seconds'))}</p>", _steps_table(steps)]
    for step_name, step in steps.items():
        if step.get("kind") == "parallel" and step.get("logs_dir"):
            parts.append(_parallel_section(step_name, step))
    parts.append(f"{ZOOM_SCRIPT}</body></html>\n")
    return "".join(parts)


def _status(status: str) -> str:
    return f"<span class='{html.escape(status)}'>{html.escape(status)}</span>"


def _seconds(value: Any) -> str:
    return f"{float(value):.1f} s" if isinstance(value, (int, float)) else "-"


def _steps_table(steps: dict[str, dict[str, Any]]) -> str:
    rows = ["<h2>Steps</h2><table><tr><th>step</th><th>kind</th><th>status</th>"
            "<th>wall time</th><th>after</th></tr>"]
    for name, step in steps.items():
        sources = [str(before) for before in step.get("depends_on") or ()]
        rows.append(f"<tr><td><a href='#{html.escape(name)}'>{html.escape(name)}</a></td>"
                    f"<td>{html.escape(str(step.get('kind', '')))}</td>"
                    f"<td>{_status(str(step.get('status', '')))}</td>"
                    f"<td>{_seconds(step.get('duration_seconds'))}</td>"
                    f"<td>{html.escape(', '.join(sources))}</td></tr>")
    rows.append("</table>")
    return "".join(rows)


def _parallel_section(name: str, step: dict[str, Any]) -> str:
    logs = Path(step["logs_dir"])
    csv_path = logs / "sys" / "job_report" / "processed_mini-batches.csv"
    head = f"<h2 id='{html.escape(name)}'>Step {html.escape(name)}</h2>"
    if not csv_path.is_file():
        return head + "<p>No attempts recorded.</p>"
    bars = read_bars(csv_path)
    rows = _rows(csv_path)
    return (head + "<h3>Task stream</h3>" + render_body(bars, read_utilisation(logs))
            + "<h3>Throughput</h3>" + _throughput_svg(bars)
            + "<h3>CPU and memory</h3>" + _resources(samples_path(logs))
            + "<h3>Slowest attempts</h3>" + _slowest(rows)
            + "<h3>Errors</h3>" + _errors(rows)
            + f"<p>Logs: {html.escape(str(logs))} (readme.txt)</p>")


def _rows(csv_path: Path) -> list[dict[str, str]]:
    with open(csv_path, newline="", encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle) if None not in row]


def _throughput_svg(bars: list[Bar]) -> str:
    """Attempts finished per second over time, one column per time bucket (inline SVG)."""
    if not bars:
        return "<p>-</p>"
    span = max(bar.start + bar.seconds for bar in bars) or 1.0
    buckets = max(1, min(THROUGHPUT_BUCKETS, len(bars) // 2))
    width = span / buckets
    counts = [0] * buckets
    for bar in bars:
        counts[min(int((bar.start + bar.seconds) / width), buckets - 1)] += 1
    rates = [count / width for count in counts]
    top = max(rates) or 1.0
    w, h, left = 1100, 160, 120
    column = (w - left - 10) / buckets
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="zoomable" width="{w}" '
             f'height="{h}" font-family="sans-serif" font-size="12">']
    for i, rate in enumerate(rates):
        tall = rate / top * (h - 40)
        parts.append(f'<rect x="{left + i * column:.1f}" y="{h - 20 - tall:.1f}" '
                     f'width="{max(column - 1, 0.5):.1f}" height="{tall:.1f}" fill="#1f77b4">'
                     f'<title>{format_seconds_short(i * width)}-'
                     f'{format_seconds_short((i + 1) * width)}: {counts[i]} attempts, '
                     f'{rate:.1f}/s</title></rect>')
    parts.append(f'<text x="4" y="24">{top:.1f} attempts/s</text>'
                 f'<text x="4" y="{h - 20}">0/s</text>'
                 f'<text x="{left}" y="{h - 4}">0 s</text>'
                 f'<text x="{w - 10}" y="{h - 4}" text-anchor="end">'
                 f'{format_seconds_short(span)}</text></svg>')
    return "".join(parts)


PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")


def _resources(path: Path) -> str:
    """CPU % and memory (MB) over time of the machine and each worker process, from the
    driver's twice-a-second samples."""
    if not path.is_file():
        return "<p>No samples (the step ended before the first one).</p>"
    series: dict[str, list[tuple[float, float, float]]] = {}
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            try:
                point = (float(row["Seconds"]), float(row["CPU Percent"]),
                         float(row["Memory MB"]))
            except (KeyError, TypeError, ValueError):
                continue
            series.setdefault(row["Source"], []).append(point)
    if not series:
        return "<p>No samples (the step ended before the first one).</p>"
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(sorted(series))}
    legend = " ".join(f"<span style='color:{colours[name]}'>&#9632; {html.escape(name)}"
                      f"{' (all cores, %)' if name == MACHINE else ''}</span>"
                      for name in sorted(series))
    workers = {name: points for name, points in series.items() if name != MACHINE}
    span = max(p[0] for points in series.values() for p in points) or 1.0
    return (f"<p>{legend}</p><p>CPU % (100 = one core; the machine line is the share of all "
            "cores)</p>" + _lines_svg(series, colours, 1, "%", span)
            + "<p>Resident memory of each worker process (MB)</p>"
            + _lines_svg(workers or series, colours, 2, " MB", span))


def _lines_svg(series: dict[str, list[tuple[float, float, float]]], colours: dict[str, str],
               column: int, unit: str, span: float) -> str:
    w, h, left = 1100, 160, 120
    top = max(p[column] for points in series.values() for p in points) or 1.0
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="zoomable" width="{w}" '
             f'height="{h}" font-family="sans-serif" font-size="12">']
    for name, points in sorted(series.items()):
        coords = " ".join(f"{left + p[0] / span * (w - left - 10):.1f},"
                          f"{h - 20 - p[column] / top * (h - 40):.1f}" for p in points)
        parts.append(f'<polyline fill="none" stroke="{colours[name]}" stroke-width="1.5" '
                     f'points="{coords}"><title>{html.escape(name)}</title></polyline>')
    parts.append(f'<text x="4" y="24">{top:.0f}{unit}</text><text x="4" y="{h - 20}">0</text>'
                 f'<text x="{left}" y="{h - 4}">0 s</text><text x="{w - 10}" y="{h - 4}" '
                 f'text-anchor="end">{format_seconds_short(span)}</text></svg>')
    return "".join(parts)


def _slowest(rows: list[dict[str, str]]) -> str:
    def seconds(row: dict[str, str]) -> float:
        try:
            return float(row["Elapsed Seconds"])
        except (KeyError, ValueError):
            return 0.0

    top = sorted(rows, key=seconds, reverse=True)[:SLOWEST_SHOWN]
    lines = ["<table><tr><th>mini-batch</th><th>attempt</th><th>process</th><th>status</th>"
             "<th>items</th><th>seconds</th><th>files or partition key</th></tr>"]
    for row in top:
        lines.append(f"<tr><td>{html.escape(row.get('Mini-batch Id', ''))}</td>"
                     f"<td>{html.escape(row.get('Picked Count', ''))}</td>"
                     f"<td>{html.escape(row.get('Process', ''))}</td>"
                     f"<td>{html.escape(row.get('Status', ''))}</td>"
                     f"<td>{html.escape(row.get('Succeeded', ''))}/"
                     f"{html.escape(row.get('Total', ''))}</td>"
                     f"<td>{seconds(row):.3f}</td>"
                     f"<td>{html.escape(describe_detail(row.get('Mini-batch Detail', '')))}"
                     "</td></tr>")
    lines.append("</table>")
    return "".join(lines)


def _errors(rows: list[dict[str, str]]) -> str:
    groups: Counter[tuple[str, str]] = Counter()
    first: dict[tuple[str, str], str] = {}
    for row in rows:
        if row.get("Status") == "Succeeded" and not row.get("Error Message"):
            continue
        message = row.get("Error Message") or row.get("Status", "")
        lines = [line for line in message.strip().splitlines() if line.strip()]
        key = (row.get("Error Category") or row.get("Status", ""), lines[-1] if lines else "")
        groups[key] += 1
        first.setdefault(key, message)
    if not groups:
        return "<p>No failed attempts.</p>"
    out = ["<table><tr><th>count</th><th>category</th><th>error</th></tr>"]
    for key, count in groups.most_common(ERRORS_SHOWN):
        out.append(f"<tr><td>{count}</td><td>{html.escape(key[0])}</td><td>"
                   f"{html.escape(key[1])}<details><summary>first</summary><pre>"
                   f"{html.escape(first[key])}</pre></details></td></tr>")
    out.append("</table>")
    return "".join(out)
