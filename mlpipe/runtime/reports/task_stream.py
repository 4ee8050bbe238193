"""A Dask-style task stream of a parallel step, drawn from ``processed_mini-batches.csv``.

One horizontal lane per worker process, one bar per attempt from its start to
its end, coloured by status (hover a bar for the mini-batch, attempt and error),
above a small table per process: attempts, busy seconds, utilisation. Past
``DENSE_ATTEMPTS`` attempts are drawn per worker and time bucket, from a
:class:`~mlpipe.runtime.reports.timeline.Timeline` (bounded memory, one pass). The page
is a single self-contained HTML file with inline SVG (no network).

    python -m mlpipe.runtime.reports.task_stream <step>/logs   # writes logs/sys/task_stream.html
"""

from __future__ import annotations

import csv
import html
import json
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from mlpipe.runtime.records import AttemptRecord
from mlpipe.runtime.reports.job_report import detail_text, process_label
from mlpipe.runtime.reports.timeline import KEPT_BARS, Bar, Timeline
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
DENSE_ATTEMPTS = KEPT_BARS  # above it, attempts are drawn per worker and time bucket
BUCKETS = 400


REQUIRED_COLUMNS = ("Mini-batch Id", "Picked Count", "Process", "Process Start Time", "Total",
                    "Succeeded", "Elapsed Seconds", "Status", "Error Category", "Error Message")


def read_timeline(csv_path: Path, timeline: Timeline | None = None) -> Timeline:
    """The attempts of ``processed_mini-batches.csv`` added to ``timeline`` (default: a new
    one), read in one pass in bounded memory.

    A row that does not parse (torn by a killed run) is skipped; a file without
    the job report's columns raises :class:`ValueError` naming the file.
    """
    timeline = Timeline() if timeline is None else timeline
    for row in csv_rows(csv_path):
        add_row(timeline, row)
    return timeline


def read_bars(csv_path: Path) -> list[Bar]:
    """The attempts of ``processed_mini-batches.csv`` as bars, in file order (every row
    in memory: for small files; :func:`read_timeline` reads any size)."""
    rows = [entry for entry in map(_parse, csv_rows(csv_path)) if entry is not None]
    if not rows:
        return []
    origin = min(start for start, _ in rows)
    return [Bar(bar.process, (start - origin).total_seconds(), bar.seconds, bar.status, bar.label)
            for start, bar in rows]


def csv_rows(csv_path: Path) -> Iterator[dict[str, str]]:
    """The rows of ``processed_mini-batches.csv`` one by one (:class:`ValueError` naming the
    file when it lacks the job report's columns)."""
    with open_text(csv_path, newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [name for name in REQUIRED_COLUMNS if name not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{csv_path} is not a processed_mini-batches.csv: it has no "
                             f"column {', '.join(repr(name) for name in missing)}")
        yield from reader


def add_row(timeline: Timeline, row: dict[str, str]) -> None:
    """Add one CSV row's attempt to ``timeline`` (a torn row is skipped)."""
    if timeline.keeps_bars:
        parsed = _parse(row)
        if parsed is not None:
            start, bar = parsed
            timeline.add(bar.process, _epoch(start), bar.seconds, bar.status, bar.label)
        return
    try:
        start_time = datetime.fromisoformat(row["Process Start Time"])
        seconds = float(row["Elapsed Seconds"])
    except (TypeError, ValueError):
        return
    if None not in row:
        timeline.add(row["Process"], _epoch(start_time), seconds, row["Status"])


def add_attempt(timeline: Timeline, record: AttemptRecord, process: str | None = None) -> None:
    """Add a finished attempt as the driver reported it, as its CSV row would add it
    (``process``: its :func:`process_label`, if known)."""
    seconds = round(record.elapsed_seconds, 6)  # what the CSV holds
    name = process or process_label(record.worker)

    def label() -> str:  # made only if the attempt is drawn as a bar
        return attempt_label(record.mini_batch_id, record.picked_count, name, record.status,
                             record.succeeded, record.total, seconds, detail_text(record.detail),
                             record.error_category, record.error_message)

    timeline.add(name, _epoch(record.start_time), seconds, record.status,
                 label if timeline.keeps_bars else "")


def _epoch(moment: datetime) -> float:
    """Seconds since the epoch of a CSV start time (UTC, written without an offset)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _parse(row: dict[str, str]) -> tuple[datetime, Bar] | None:
    """``(start, bar with start 0)`` of one CSV row, or ``None`` when the row is torn."""
    try:
        start = datetime.fromisoformat(row["Process Start Time"])
        seconds = float(row["Elapsed Seconds"])
    except (TypeError, ValueError):
        return None
    if None in row:  # more fields than columns: two rows run together
        return None
    label = attempt_label(row["Mini-batch Id"], row["Picked Count"], row["Process"],
                          row["Status"], row["Succeeded"], row["Total"], seconds,
                          row.get("Mini-batch Detail") or "", row["Error Category"],
                          row["Error Message"])
    return start, Bar(row["Process"], 0.0, seconds, row["Status"], label)


def attempt_label(mini_batch_id: str, picked: object, process: str, status: str,
                  succeeded: object, total: object, seconds: float, detail: str,
                  category: str | None, message: str | None) -> str:
    """An attempt's hover text: mini-batch, attempt, process, status, items, seconds, its
    files or partition key (``detail``: the CSV's JSON) and its error."""
    label = (f"{mini_batch_id} attempt {picked} on {process}: "
             f"{status}, {succeeded}/{total} items, {seconds:.3f} s")
    if detail:  # the mini-batch's files or partition key
        label += f" - {describe_detail(detail)}"
    if message:
        label += f" - {category or ''}: {message}"
    return label


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


def render_html(stream: Timeline | list[Bar], title: str,
                utilisation: dict[str, str] | None = None) -> str:
    """The task-stream page for ``stream`` (a :class:`Timeline`, or bars)."""
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>body{{font-family:sans-serif}}"
            "td,th{padding:2px 10px;text-align:right}</style></head><body>"
            f"<h2>{html.escape(title)}</h2>{render_body(stream, utilisation)}{ZOOM_SCRIPT}"
            "</body></html>\n")


def timeline_of(bars: list[Bar]) -> Timeline:
    """A :class:`Timeline` of ``bars`` (their starts taken as seconds after 0)."""
    timeline = Timeline()
    for bar in bars:
        timeline.add(bar.process, bar.start, bar.seconds, bar.status, bar.label)
    return timeline


def render_body(stream: Timeline | list[Bar], utilisation: dict[str, str] | None = None) -> str:
    """The task stream's summary line, picture (inline SVG) and per-process table.

    ``utilisation`` (from :func:`read_utilisation`) gives each process's figure; a
    process missing from it gets busy seconds / the span of the attempts drawn."""
    timeline = timeline_of(stream) if isinstance(stream, list) else stream
    processes = sorted(timeline.totals)
    lane = {name: i for i, name in enumerate(processes)}
    span = timeline.span or 1.0
    scale = (WIDTH - LEFT - 10) / span
    height = LANE_HEIGHT * len(processes) + 44
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="zoomable" width="{WIDTH}" '
             f'height="{height}" font-family="sans-serif" font-size="12">']
    for name, i in lane.items():
        y = i * LANE_HEIGHT
        parts.append(f'<text x="4" y="{y + 15}">{html.escape(name)}</text>'
                     f'<line x1="{LEFT}" y1="{y + LANE_HEIGHT}" x2="{WIDTH}" '
                     f'y2="{y + LANE_HEIGHT}" stroke="#eee"/>')
    bars = timeline.bars()
    if bars is None:
        parts.extend(_bucket_rects(timeline, lane, span, scale))
    else:
        for bar in bars:
            x = LEFT + bar.start * scale
            w = max(bar.seconds * scale, 0.5)
            y = lane[bar.process] * LANE_HEIGHT + 3
            parts.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{LANE_HEIGHT - 6}" '
                         f'fill="{COLOURS.get(bar.status, "#999")}"><title>'
                         f'{html.escape(bar.label)}</title></rect>')
    axis_y = LANE_HEIGHT * len(processes) + 20
    runs = timeline.run_starts(RUN_GAP_SECONDS, RUN_GAP_SHARE)
    for number, at in enumerate(runs, start=2):
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
    table = ["<table><tr><th>Process</th><th>Attempts</th><th>Failed</th>"
             "<th>Busy seconds</th><th>Utilization</th></tr>"]
    for name in processes:
        totals = timeline.totals[name]
        share = (utilisation or {}).get(name) or f"{100 * totals.busy / span:.1f}"
        table.append(f"<tr><td>{html.escape(name)}</td><td>{totals.attempts}</td>"
                     f"<td>{totals.failed}</td><td>{totals.busy:.3f}</td><td>{share}%</td></tr>")
    table.append("</table><p>Utilization: busy seconds / the step's wall time, the figure of "
                 "process_summary.csv.</p>" if utilisation else "</table>")
    legend = " ".join(f'<span style="color:{colour}">&#9632; {status}</span>'
                      for status, colour in COLOURS.items())
    count = timeline.count
    note = (f"<p>{count} attempts are drawn per worker process and time bucket "
            f"({span / BUCKETS:.3f} s each): the shade is the share of the bucket spent in "
            "run(), red on top when an attempt started in it failed (all red when most did); "
            "hover a bucket for its counts.</p>" if bars is None else "")
    return (f"<p>{count} attempts over {span:.3f} s on "
            f"{len(processes)} worker process(es). {legend}</p>{note}{''.join(parts)}"
            f"{''.join(table)}")


RUN_GAP_SECONDS = 5.0  # a later run of the step (resume, rerun) begins after an idle gap
RUN_GAP_SHARE = 0.05  # longer than 5 s and than 5 % of the whole span


def _bucket_rects(timeline: Timeline, lane: dict[str, int], span: float,
                  scale: float) -> list[str]:
    """One rectangle per (process, time bucket) that holds work: a dense step's picture
    in a bounded size whatever its number of attempts."""
    width = span / BUCKETS
    rects = []
    for process in sorted(lane):
        busy = timeline.busy(process, BUCKETS)
        count, failed = timeline.started(process, BUCKETS)
        for bucket in range(BUCKETS):
            if not busy[bucket] and not count[bucket]:
                continue
            share = min(1.0, busy[bucket] / width) if width > 0 else 1.0
            bad = failed[bucket]
            colour = COLOURS["Failed"] if bad * 2 > count[bucket] else COLOURS["Succeeded"]
            if bad:  # a red strip on top: some attempt started in this bucket failed
                rects.append(f'<rect x="{LEFT + bucket * width * scale:.1f}" '
                             f'y="{lane[process] * LANE_HEIGHT}" '
                             f'width="{max(width * scale, 0.5):.1f}" height="3" '
                             f'fill="{COLOURS["Failed"]}"/>')
            rects.append(
                f'<rect x="{LEFT + bucket * width * scale:.1f}" '
                f'y="{lane[process] * LANE_HEIGHT + 3}" width="{max(width * scale, 0.5):.1f}" '
                f'height="{LANE_HEIGHT - 6}" fill="{colour}" '
                f'fill-opacity="{0.15 + 0.85 * share:.2f}">'
                f'<title>{html.escape(process)} {bucket * width:.1f}-{(bucket + 1) * width:.1f}'
                f' s: {count[bucket]} attempts started, {bad} failed, '
                f'{100 * share:.0f}% busy</title></rect>')
    return rects


def write_task_stream(logs_dir: str | Path, out: str | Path | None = None, *,
                      timeline: Timeline | None = None) -> Path:
    """Write the task stream of the step whose ``logs/`` folder is ``logs_dir``.

    The page goes to ``out`` (default ``logs/sys/task_stream.html``); it is drawn from
    ``timeline`` when given (the step's reports kept it while running), else from the
    job report CSV. Raises :class:`FileNotFoundError` naming the CSV when the step wrote
    no job report.
    """
    logs = Path(logs_dir)
    csv_path = logs / "sys" / "job_report" / "processed_mini-batches.csv"
    if timeline is None and not csv_path.is_file():
        raise FileNotFoundError(f"no job report at {csv_path}: "
                                f"is {logs} a parallel step's logs folder?")
    target = Path(out) if out is not None else logs / "sys" / "task_stream.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    title = f"Task stream of {logs.parent.name}"
    stream = timeline if timeline is not None else read_timeline(csv_path)
    write_text(target, render_html(stream, title, read_utilisation(logs)))
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
