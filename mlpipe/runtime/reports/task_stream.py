"""A Dask-style task stream of a parallel step, drawn from ``processed_mini-batches.csv``.

One horizontal lane per worker process, one bar per attempt from its start to its end,
coloured by status (hover a bar for the mini-batch, attempt and error), above a small
table per process: attempts, busy seconds, utilisation. The page is a single
self-contained HTML file with inline SVG (a few lines of inline script zoom it).

    python -m mlpipe.runtime.reports.task_stream <step>/logs   # writes logs/sys/task_stream.html
"""

from __future__ import annotations

import csv
import html
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mlpipe.runtime.reports.charts import (
    BUCKETS,
    COLOURS,
    SPARSE_ATTEMPTS,
    ZOOM_SCRIPT,
    Axis,
    attempt_bars,
    bucketed_task_stream,
    format_seconds_short,
    task_stream,
)
from mlpipe.runtime.reports.run_chart import RunChart
from mlpipe.runtime.reports.timeline import Timeline
from mlpipe.runtime.step_logs import (
    Attempt,
    AttemptTable,
    RunEntry,
    StepLogs,
    read_attempts,
    read_runs,
)
from mlpipe.runtime.textio import write_text


@dataclass(frozen=True)
class Bar:
    process: str
    start: float  # seconds since the first attempt started
    seconds: float
    status: str


def read_bars(csv_path: Path) -> list[Bar]:
    """The attempts of ``processed_mini-batches.csv`` as bars, in file order (see
    :func:`mlpipe.runtime.step_logs.read_attempts`)."""
    attempts = read_attempts(StepLogs(csv_path.parent.parent.parent))
    origin = float(attempts.start.min()) if len(attempts) else 0.0
    return [Bar(a.process, round(a.start - origin, 6), a.elapsed, a.status) for a in attempts]


def read_utilisation(logs: StepLogs) -> dict[str, str]:
    """``{"0/process000": "87.5"}`` from ``process_summary.csv``: mlpipe's one utilisation
    figure (busy seconds / the step's wall time), so the pictures show what the CSV says."""
    if not logs.process_summary.is_file():
        return {}
    with open(logs.process_summary, newline="", encoding="utf-8") as handle:
        return {f"{row.get('Node')}/{row.get('Process')}": row.get("Utilization Percent") or ""
                for row in csv.DictReader(handle)}


def render_html(attempts: AttemptTable, title: str,
                utilisation: dict[str, str] | None = None, runs: Sequence[float] = ()) -> str:
    """The task-stream page for ``attempts`` (every run of the step: ``runs`` are the later
    runs' starts)."""
    return _page(title, render_body(attempts, utilisation, runs=runs))


def _page(title: str, body: str) -> str:
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>body{{font-family:sans-serif;"
            "margin:16px}td,th{padding:2px 10px;text-align:right}</style></head><body>"
            f"<h2>{html.escape(title)}</h2>{body}{ZOOM_SCRIPT}</body></html>\n")


RUN_GAP_SECONDS = 5.0
RUN_GAP_SHARE = 0.05


def run_starts(attempts: AttemptTable, runs: Sequence[RunEntry]) -> list[float]:
    """Where each later run of the step begins: from ``runs.json``, else (older logs) the end
    of each idle gap longer than 5 s and 5 % of the span."""
    import numpy as np  # noqa: PLC0415

    if runs:
        return [run.started for run in runs[1:]]
    if not len(attempts):
        return []
    order = np.argsort(attempts.start, kind="stable")
    starts, ends = attempts.start[order], attempts.end[order]
    busy_until = np.maximum.accumulate(ends)
    gaps = starts[1:] - busy_until[:-1]
    span = float(ends.max() - starts[0])
    found = np.nonzero((gaps > RUN_GAP_SECONDS) & (gaps > RUN_GAP_SHARE * span))[0]
    return [float(starts[i + 1]) for i in found]


def render_body(attempts: AttemptTable, utilisation: dict[str, str] | None = None,
                axis: Axis | None = None, runs: Sequence[float] = ()) -> str:
    """The summary line, the picture (on ``axis``, default: the attempts' own span, with a
    marker where each of ``runs`` after the first begins) and the per-process table. A
    process missing from ``utilisation`` gets busy seconds / span."""
    import numpy as np  # noqa: PLC0415

    present = sorted(set(np.unique(attempts.process).tolist()))
    processes = [attempts.processes[i] for i in present]
    renumber = np.zeros(len(attempts.processes) or 1, dtype=np.int64)
    renumber[present] = np.arange(len(present))
    codes = renumber[attempts.process] if len(attempts) else attempts.process
    names = processes
    if axis is None:
        start = float(attempts.start.min()) if len(attempts) else 0.0
        end = float(attempts.end.max()) if len(attempts) else start
        axis = Axis(start, end - start, "task-stream")
    busy = np.bincount(codes, weights=attempts.elapsed, minlength=len(names)).tolist()
    count = np.bincount(codes, minlength=len(names)).tolist()
    failed = np.bincount(codes, weights=attempts.status != "Succeeded",
                         minlength=len(names)).tolist() if len(attempts) else [0] * len(names)
    return _body(len(attempts), axis, processes, list(zip(count, failed, busy, strict=True)),
                 utilisation, task_stream(attempts, axis, processes, runs, codes))


def render_timeline_body(timeline: Timeline, utilisation: dict[str, str] | None = None,
                         runs: Sequence[float] = ()) -> str:
    """:func:`render_body` of a dense step from the :class:`Timeline` its reports kept while
    it ran: the same page without reading every row of the CSV back."""
    processes = sorted(timeline.totals)
    axis = Axis(timeline.first, timeline.span, "task-stream")
    rows = [(timeline.busy(name, BUCKETS), timeline.started(name, BUCKETS)[1])
            for name in processes]
    totals = [(t.attempts, t.failed, t.busy) for t in map(timeline.totals.__getitem__, processes)]
    return _body(timeline.count, axis, processes, totals, utilisation,
                 bucketed_task_stream(rows, axis, processes, runs))


def render_chart_body(chart: RunChart, utilisation: dict[str, str] | None = None,
                      axis: Axis | None = None) -> str:
    """:func:`render_body` of a run from the :class:`RunChart` its reports kept (on
    ``axis``, default the chart's own): the same page without reading the CSV back."""
    axis = axis or chart.axis("task-stream")
    picture = attempt_bars(chart.rows, axis, chart.processes) if chart.rows else \
        bucketed_task_stream(list(zip(chart.busy, chart.failed, strict=True)), axis,
                             chart.processes)
    return _body(chart.attempts, axis, chart.processes, chart.totals, utilisation, picture)


def _body(attempts: int, axis: Axis, processes: Sequence[str],
          totals: Sequence[tuple[int, float, float]], utilisation: dict[str, str] | None,
          picture: str) -> str:
    """The summary line, ``picture`` and the per-process table (``totals``: attempts,
    failed, busy seconds of each of ``processes``)."""
    span = axis.span or 1.0
    legend = " ".join(f'<span style="color:{colour}">&#9632; {status}</span>'
                      for status, colour in COLOURS.items())
    note = (f"<p>{attempts} attempts are drawn per worker process and time bucket: the "
            "shade is the share of the bucket spent in attempts, a red strip marks buckets "
            "where an attempt failed.</p>" if attempts > SPARSE_ATTEMPTS else "")
    table = ["<table><tr><th>Process</th><th>Attempts</th><th>Failed</th>"
             "<th>Busy seconds</th><th>Utilization</th></tr>"]
    for name, (count, failed, busy) in zip(processes, totals, strict=True):
        share = (utilisation or {}).get(name) or f"{100 * busy / span:.1f}"
        table.append(f"<tr><td>{html.escape(name)}</td><td>{count}</td>"
                     f"<td>{int(failed)}</td><td>{busy:.3f}</td><td>{share}%</td></tr>")
    table.append("</table><p>Utilization: busy seconds / the step's wall time, the figure of "
                 "process_summary.csv.</p>" if utilisation else "</table>")
    return (f"<p>{attempts} attempts over {span:.3f} s on {len(processes)} worker "
            f"process(es). {legend}</p>{note}{picture}{''.join(table)}")


def write_task_stream(logs_dir: str | Path, out: str | Path | None = None, *,
                      timeline: Timeline | None = None, rows: Sequence[Attempt] = ()) -> Path:
    """Write the task stream of the step whose ``logs/`` folder is ``logs_dir``.

    The page goes to ``out`` (default ``logs/sys/task_stream.html``). It is drawn from the
    job report CSV, or from ``timeline`` (the attempts the step's reports kept while it ran,
    all of them) when that holds more than ``SPARSE_ATTEMPTS`` or ``rows`` are each of its
    attempts: the rows are not read back (nor pyarrow imported for them). Raises
    :class:`FileNotFoundError` naming the CSV when the step wrote no job report.
    """
    logs = StepLogs.of(logs_dir)
    if not logs.processed.is_file():
        raise FileNotFoundError(f"no job report at {logs.processed}: "
                                f"is {logs.root} a parallel step's logs folder?")
    target = Path(out) if out is not None else logs.task_stream
    target.parent.mkdir(parents=True, exist_ok=True)
    title = f"Task stream of {logs.root.parent.name}"
    runs = read_runs(logs)
    if timeline is not None and timeline.count > SPARSE_ATTEMPTS:
        markers = [run.started for run in runs[1:]] if runs else \
            timeline.run_starts(RUN_GAP_SECONDS, RUN_GAP_SHARE)
        write_text(target, _page(title, render_timeline_body(
            timeline, read_utilisation(logs), markers)))
        return target
    if timeline is not None and timeline.count and len(rows) == timeline.count:
        chart = RunChart.of(timeline, (), timeline.first, timeline.last, rows)
        write_text(target, _page(title, render_chart_body(chart, read_utilisation(logs))))
        return target
    attempts = read_attempts(logs)
    write_text(target, render_html(attempts, title, read_utilisation(logs),
                                   run_starts(attempts, runs)))
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


__all__ = ["Bar", "format_seconds_short", "main", "read_bars", "read_utilisation",
           "render_body", "render_chart_body", "render_html", "render_timeline_body",
           "run_starts", "write_task_stream"]


if __name__ == "__main__":
    raise SystemExit(main())
