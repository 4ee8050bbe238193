"""A Dask-style task stream of a parallel step, drawn from ``processed_mini-batches.csv``.

One horizontal lane per worker process, one bar per attempt from its start to
its end, coloured by status (hover a bar for the mini-batch, attempt and error),
above a small table per process: attempts, busy seconds, utilisation. The page is
a single self-contained HTML file with inline SVG (no JavaScript, no network).

    python -m mlpipe.runtime.task_stream <step>/logs   # writes logs/sys/task_stream.html
"""

from __future__ import annotations

import csv
import html
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
MAX_BARS = 50_000


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
    if row["Error Message"]:
        label += f" - {row['Error Category']}: {row['Error Message']}"
    return start, Bar(row["Process"], 0.0, seconds, row["Status"], label)


def render_html(bars: list[Bar], title: str) -> str:
    """The task-stream page for ``bars``."""
    processes = sorted({bar.process for bar in bars})
    lane = {name: i for i, name in enumerate(processes)}
    span = max((bar.start + bar.seconds for bar in bars), default=0.0) or 1.0
    scale = (WIDTH - LEFT - 10) / span
    height = LANE_HEIGHT * len(processes) + 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             'font-family="sans-serif" font-size="12">']
    for name, i in lane.items():
        y = i * LANE_HEIGHT
        parts.append(f'<text x="4" y="{y + 15}">{html.escape(name)}</text>'
                     f'<line x1="{LEFT}" y1="{y + LANE_HEIGHT}" x2="{WIDTH}" '
                     f'y2="{y + LANE_HEIGHT}" stroke="#eee"/>')
    for bar in bars[:MAX_BARS]:
        x = LEFT + bar.start * scale
        w = max(bar.seconds * scale, 0.5)
        y = lane[bar.process] * LANE_HEIGHT + 3
        parts.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{LANE_HEIGHT - 6}" '
                     f'fill="{COLOURS.get(bar.status, "#999")}"><title>'
                     f'{html.escape(bar.label)}</title></rect>')
    axis_y = LANE_HEIGHT * len(processes) + 20
    for tick in range(6):
        seconds = span * tick / 5
        parts.append(f'<text x="{LEFT + seconds * scale:.1f}" y="{axis_y}" text-anchor="middle">'
                     f'{seconds:.1f}s</text>')
    parts.append("</svg>")
    table = ["<table><tr><th>Process</th><th>Attempts</th><th>Failed</th>"
             "<th>Busy seconds</th><th>Utilization</th></tr>"]
    for name in processes:
        mine = [bar for bar in bars if bar.process == name]
        busy = sum(bar.seconds for bar in mine)
        failed = sum(bar.status != "Succeeded" for bar in mine)
        table.append(f"<tr><td>{html.escape(name)}</td><td>{len(mine)}</td><td>{failed}</td>"
                     f"<td>{busy:.3f}</td><td>{100 * busy / span:.1f}%</td></tr>")
    table.append("</table>")
    legend = " ".join(f'<span style="color:{colour}">&#9632; {status}</span>'
                      for status, colour in COLOURS.items())
    note = (f"<p>Only the first {MAX_BARS} of {len(bars)} attempts are drawn.</p>"
            if len(bars) > MAX_BARS else "")
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>body{{font-family:sans-serif}}"
            "td,th{padding:2px 10px;text-align:right}</style></head><body>"
            f"<h2>{html.escape(title)}</h2><p>{len(bars)} attempts over {span:.3f} s on "
            f"{len(processes)} worker process(es). {legend}</p>{note}{''.join(parts)}"
            f"{''.join(table)}</body></html>\n")


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
    write_text(target, render_html(read_bars(csv_path), title))
    return target


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2):
        print("usage: python -m mlpipe.runtime.task_stream <step logs folder> [output.html]",
              file=sys.stderr)
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
