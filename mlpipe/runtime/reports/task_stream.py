"""A Dask-style task stream of a parallel step, drawn from ``processed_mini-batches.csv``.

One horizontal lane per worker process, one bar per attempt from its start to
its end, coloured by status (hover a bar for the mini-batch, attempt and error),
above a small table per process: attempts, busy seconds, utilisation. The page is
a single self-contained HTML file with inline SVG (no JavaScript, no network).

    python -m mlpipe.runtime.reports.task_stream <step>/logs   # writes logs/sys/task_stream.html
"""

from __future__ import annotations

import csv
import html
import json
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from mlpipe.runtime.textio import open_text, write_text

COLOURS = {"Succeeded": "#4c9a2a", "Failed": "#d62728", "Timeout": "#ff7f0e",
           "ProcessDied": "#7f3f98"}
LANE_HEIGHT = 22
LEFT = 120
WIDTH = 1100
# Zoom (mouse wheel) and pan (drag) along the time axis of every ``svg.zoomable``, reset by a
# double click; inline, so the page works offline.
ZOOM_SCRIPT = """<script>
document.querySelectorAll('svg.zoomable').forEach(function (s) {
  var w = +s.getAttribute('width'), h = +s.getAttribute('height'), v = {x: 0, w: w}, d = null;
  function set() { s.setAttribute('viewBox', v.x + ' 0 ' + v.w + ' ' + h); }
  function clamp() {
    v.w = Math.min(w, Math.max(w / 1000, v.w)); v.x = Math.min(w - v.w, Math.max(0, v.x));
  }
  s.setAttribute('preserveAspectRatio', 'none'); s.style.cursor = 'grab'; set();
  s.addEventListener('wheel', function (e) {
    e.preventDefault();
    var r = s.getBoundingClientRect(), f = (e.clientX - r.left) / r.width, at = v.x + f * v.w;
    v.w *= e.deltaY < 0 ? 0.8 : 1.25; v.x = at - f * v.w; clamp(); set();
  }, {passive: false});
  s.addEventListener('mousedown', function (e) { d = {x: e.clientX, vx: v.x}; });
  window.addEventListener('mousemove', function (e) {
    if (!d) return;
    v.x = d.vx - (e.clientX - d.x) * v.w / s.getBoundingClientRect().width; clamp(); set();
  });
  window.addEventListener('mouseup', function () { d = null; });
  s.addEventListener('dblclick', function () { v = {x: 0, w: w}; set(); });
});
</script>"""
DENSE_ATTEMPTS = 3_000  # above it, attempts are drawn per worker and time bucket
BUCKETS = 400


@dataclass(frozen=True)
class Bar:
    process: str
    start: float  # seconds since the first attempt started
    seconds: float
    status: str
    label: str


REQUIRED_COLUMNS = ("Mini-batch Id", "Picked Count", "Process", "Process Start Time", "Total",
                    "Succeeded", "Elapsed Seconds", "Status", "Error Category", "Error Message")


def read_bars(csv_path: Path) -> list[Bar]:
    """The attempts of ``processed_mini-batches.csv`` as bars, in file order.

    A row that does not parse (torn by a killed run) is skipped; a file without
    the job report's columns raises :class:`ValueError` naming the file.
    """
    with open_text(csv_path, newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [name for name in REQUIRED_COLUMNS if name not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{csv_path} is not a processed_mini-batches.csv: it has no "
                             f"column {', '.join(repr(name) for name in missing)}")
        parsed = [_parse(row) for row in reader]
    rows = [entry for entry in parsed if entry is not None]
    if not rows:
        return []
    origin = min(start for start, _ in rows)
    return [Bar(bar.process, (start - origin).total_seconds(), bar.seconds, bar.status, bar.label)
            for start, bar in rows]


def _parse(row: dict[str, str]) -> tuple[datetime, Bar] | None:
    """``(start, bar with start 0)`` of one CSV row, or ``None`` when the row is torn."""
    try:
        start = datetime.fromisoformat(row["Process Start Time"])
        seconds = float(row["Elapsed Seconds"])
        label = (f"{row['Mini-batch Id']} attempt {row['Picked Count']} on {row['Process']}: "
                 f"{row['Status']}, {row['Succeeded']}/{row['Total']} items, {seconds:.3f} s")
    except (TypeError, ValueError):
        return None
    if None in row:  # more fields than columns: two rows run together
        return None
    if row.get("Mini-batch Detail"):  # the mini-batch's files or partition key
        label += f" - {describe_detail(row['Mini-batch Detail'])}"
    if row["Error Message"]:
        label += f" - {row['Error Category']}: {row['Error Message']}"
    return start, Bar(row["Process"], 0.0, seconds, row["Status"], label)


def format_seconds_short(seconds: float) -> str:
    """An axis label: ``"12 ms"`` below a second, ``"3.25 s"``, ``"75.0 s"``."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.2f} ms"
    return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.1f} s"


def describe_detail(detail: str, limit: int = 160) -> str:
    """A mini-batch's ``Mini-batch Detail`` for people: ``files: a.png, b.png``,
    ``partition_key_value: {"k": 1}`` or the text itself, at most ``limit`` characters."""
    try:
        value = json.loads(detail)
    except ValueError:
        value = None
    if isinstance(value, dict) and "partition_key_value" in value:
        text = f"partition_key_value: {json.dumps(value['partition_key_value'])}"
    elif isinstance(value, dict) and isinstance(value.get("files"), list):
        text = "files: " + ", ".join(str(name) for name in value["files"])
    else:
        text = detail
    return text if len(text) <= limit else text[:limit - 3] + "..."


def read_utilisation(logs_dir: Path) -> dict[str, str]:
    """``{"0/process000": "87.5"}`` from ``process_summary.csv``: mlpipe's one utilisation
    figure (busy seconds / the step's wall time), so the pictures show what the CSV says."""
    path = logs_dir / "sys" / "job_report" / "process_summary.csv"
    if not path.is_file():
        return {}
    with open(path, newline="", encoding="utf-8") as handle:
        return {f"{row.get('Node')}/{row.get('Process')}": row.get("Utilization Percent") or ""
                for row in csv.DictReader(handle)}


def render_html(bars: list[Bar], title: str,
                utilisation: dict[str, str] | None = None) -> str:
    """The task-stream page for ``bars``."""
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>body{{font-family:sans-serif}}"
            "td,th{padding:2px 10px;text-align:right}</style></head><body>"
            f"<h2>{html.escape(title)}</h2>{render_body(bars, utilisation)}{ZOOM_SCRIPT}"
            "</body></html>\n")


def render_body(bars: list[Bar], utilisation: dict[str, str] | None = None) -> str:
    """The task stream's summary line, picture (inline SVG) and per-process table.

    ``utilisation`` (from :func:`read_utilisation`) gives each process's figure; a
    process missing from it gets busy seconds / the span of the attempts drawn."""
    processes = sorted({bar.process for bar in bars})
    lane = {name: i for i, name in enumerate(processes)}
    span = max((bar.start + bar.seconds for bar in bars), default=0.0) or 1.0
    scale = (WIDTH - LEFT - 10) / span
    height = LANE_HEIGHT * len(processes) + 44
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="zoomable" width="{WIDTH}" '
             f'height="{height}" font-family="sans-serif" font-size="12">']
    for name, i in lane.items():
        y = i * LANE_HEIGHT
        parts.append(f'<text x="4" y="{y + 15}">{html.escape(name)}</text>'
                     f'<line x1="{LEFT}" y1="{y + LANE_HEIGHT}" x2="{WIDTH}" '
                     f'y2="{y + LANE_HEIGHT}" stroke="#eee"/>')
    if len(bars) > DENSE_ATTEMPTS:
        parts.extend(_bucket_rects(bars, lane, span, scale))
    else:
        for bar in bars:
            x = LEFT + bar.start * scale
            w = max(bar.seconds * scale, 0.5)
            y = lane[bar.process] * LANE_HEIGHT + 3
            parts.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{LANE_HEIGHT - 6}" '
                         f'fill="{COLOURS.get(bar.status, "#999")}"><title>'
                         f'{html.escape(bar.label)}</title></rect>')
    axis_y = LANE_HEIGHT * len(processes) + 20
    for number, at in enumerate(run_starts(bars), start=2):
        x = LEFT + at * scale
        parts.append(f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{axis_y - 14}" stroke="#333" '
                     f'stroke-dasharray="4 3"><title>run {number} starts at {at:.1f} s (a resumed '
                     f'or rerun step)</title></line><text x="{x + 3:.1f}" y="{axis_y + 15}" '
                     f'font-size="11">run {number}</text>')
    for tick in range(6):
        seconds = span * tick / 5
        anchor = "start" if tick == 0 else "end" if tick == 5 else "middle"
        parts.append(f'<text x="{LEFT + seconds * scale:.1f}" y="{axis_y}" '
                     f'text-anchor="{anchor}">{format_seconds_short(seconds)}</text>')
    parts.append("</svg>")
    per_process: dict[str, list[Bar]] = {name: [] for name in processes}
    for bar in bars:
        per_process[bar.process].append(bar)
    table = ["<table><tr><th>Process</th><th>Attempts</th><th>Failed</th>"
             "<th>Busy seconds</th><th>Utilization</th></tr>"]
    for name in processes:
        mine = per_process[name]
        share = (utilisation or {}).get(name) or f"{100 * sum(b.seconds for b in mine) / span:.1f}"
        busy = sum(bar.seconds for bar in mine)
        failed = sum(bar.status != "Succeeded" for bar in mine)
        table.append(f"<tr><td>{html.escape(name)}</td><td>{len(mine)}</td><td>{failed}</td>"
                     f"<td>{busy:.3f}</td><td>{share}%</td></tr>")
    table.append("</table><p>Utilization: busy seconds / the step's wall time, the figure of "
                 "process_summary.csv.</p>" if utilisation else "</table>")
    legend = " ".join(f'<span style="color:{colour}">&#9632; {status}</span>'
                      for status, colour in COLOURS.items())
    note = (f"<p>{len(bars)} attempts are drawn per worker process and time bucket "
            f"({span / BUCKETS:.3f} s each): the shade is the share of the bucket spent in "
            "run(), red on top when an attempt started in it failed (all red when most did); "
            "hover a bucket for its counts.</p>"
            if len(bars) > DENSE_ATTEMPTS else "")
    return (f"<p>{len(bars)} attempts over {span:.3f} s on "
            f"{len(processes)} worker process(es). {legend}</p>{note}{''.join(parts)}"
            f"{''.join(table)}")


RUN_GAP_SECONDS = 5.0
RUN_GAP_SHARE = 0.05


def run_starts(bars: list[Bar]) -> list[float]:
    """Where a later run of the step begins: the end of an idle gap longer than 5 s and
    than 5 % of the whole span (a resume or rerun appends to the same CSV)."""
    if not bars:
        return []
    span = max(bar.start + bar.seconds for bar in bars)
    starts, busy_until = [], 0.0
    for bar in sorted(bars, key=lambda b: b.start):
        gap = bar.start - busy_until
        if gap > RUN_GAP_SECONDS and gap > RUN_GAP_SHARE * span:
            starts.append(bar.start)
        busy_until = max(busy_until, bar.start + bar.seconds)
    return starts


def _bucket_rects(bars: list[Bar], lane: dict[str, int], span: float,
                  scale: float) -> list[str]:
    """One rectangle per (process, time bucket) that holds work: a dense step's picture
    in a bounded size whatever its number of attempts."""
    width = span / BUCKETS
    busy: dict[tuple[str, int], float] = {}
    count: dict[tuple[str, int], int] = {}
    failed: dict[tuple[str, int], int] = {}
    for bar in bars:
        first = min(int(bar.start / width), BUCKETS - 1)
        last = min(int((bar.start + bar.seconds) / width), BUCKETS - 1)
        for bucket in range(first, last + 1):
            lo, hi = bucket * width, (bucket + 1) * width
            key = (bar.process, bucket)
            busy[key] = busy.get(key, 0.0) + max(0.0, min(hi, bar.start + bar.seconds)
                                                 - max(lo, bar.start))
        key = (bar.process, first)
        count[key] = count.get(key, 0) + 1
        if bar.status != "Succeeded":
            failed[key] = failed.get(key, 0) + 1
    rects = []
    for (process, bucket), seconds in sorted(busy.items()):
        share = min(1.0, seconds / width) if width > 0 else 1.0
        key = (process, bucket)
        bad = failed.get(key, 0)
        colour = COLOURS["Failed"] if bad * 2 > count.get(key, 0) else COLOURS["Succeeded"]
        if bad:  # a red strip on top: some attempt started in this bucket failed
            rects.append(f'<rect x="{LEFT + bucket * width * scale:.1f}" '
                         f'y="{lane[process] * LANE_HEIGHT}" '
                         f'width="{max(width * scale, 0.5):.1f}" height="3" '
                         f'fill="{COLOURS["Failed"]}"/>')
        rects.append(
            f'<rect x="{LEFT + bucket * width * scale:.1f}" '
            f'y="{lane[process] * LANE_HEIGHT + 3}" width="{max(width * scale, 0.5):.1f}" '
            f'height="{LANE_HEIGHT - 6}" fill="{colour}" fill-opacity="{0.15 + 0.85 * share:.2f}">'
            f'<title>{html.escape(process)} {bucket * width:.1f}-{(bucket + 1) * width:.1f} s: '
            f'{count.get(key, 0)} attempts started, {failed.get(key, 0)} failed, '
            f'{100 * share:.0f}% busy</title></rect>')
    return rects


def write_task_stream(logs_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write the task stream of the step whose ``logs/`` folder is ``logs_dir``.

    The page goes to ``out`` (default ``logs/sys/task_stream.html``). Raises
    :class:`FileNotFoundError` naming the CSV when the step wrote no job report.
    """
    logs = Path(logs_dir)
    csv_path = logs / "sys" / "job_report" / "processed_mini-batches.csv"
    if not csv_path.is_file():
        raise FileNotFoundError(f"no job report at {csv_path}: "
                                f"is {logs} a parallel step's logs folder?")
    target = Path(out) if out is not None else logs / "sys" / "task_stream.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    title = f"Task stream of {logs.parent.name}"
    write_text(target, render_html(read_bars(csv_path), title, read_utilisation(logs)))
    return target


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2):
        print("usage: python -m mlpipe.runtime.reports.task_stream <step logs folder> "
              "[output.html]", file=sys.stderr)
        return 2
    try:
        path = write_task_stream(*args)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
