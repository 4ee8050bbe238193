"""The inline SVG charts of report.html and task_stream.html.

Every time chart of a step is drawn on one :class:`Axis` (the run's start to its end), so
the task stream, throughput, CPU and memory line up; charts of one axis zoom and pan
together (:data:`ZOOM_SCRIPT`). Sizes stay bounded whatever the number of attempts: above
``SPARSE_ATTEMPTS`` the task stream is drawn per worker and time bucket, merged into runs of
equal shade; lines keep at most ``LINE_POINTS`` points.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mlpipe.runtime.step_logs import Attempt, AttemptTable, describe_detail
from mlpipe.runtime.tuning.profile import bucket_bounds

WIDTH = 1600  # user units of every chart; the page stretches it to its width
LEFT = 130
RIGHT = 12
LANE = 20
COLOURS = {"Succeeded": "#4c9a2a", "Failed": "#d62728", "Timeout": "#ff7f0e",
           "ProcessDied": "#7f3f98"}
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
SPARSE_ATTEMPTS = 500  # up to this many, one bar per attempt (with its tooltip)
BUCKETS = 240
SHADES = 4
LINE_POINTS = 120
# Zoom (mouse wheel) and pan (drag) along the time axis of every ``svg.zoomable``; charts
# with the same ``data-axis`` move together; a double click resets. Inline: works offline.
ZOOM_SCRIPT = """<script>
(function () {
  var groups = {};
  document.querySelectorAll('svg.zoomable').forEach(function (s) {
    var b = s.getAttribute('viewBox').split(' ').map(Number), key = s.dataset.axis || Math.random();
    var g = groups[key] = groups[key] || {svgs: [], v: {x: b[0], w: b[2]}, w: b[2], d: null};
    g.svgs.push({s: s, h: b[3]}); s.setAttribute('preserveAspectRatio', 'none');
    s.style.cursor = 'grab';
    function set() { g.svgs.forEach(function (e) {
      e.s.setAttribute('viewBox', g.v.x + ' 0 ' + g.v.w + ' ' + e.h); }); }
    function clamp() {
      g.v.w = Math.min(g.w, Math.max(g.w / 1000, g.v.w));
      g.v.x = Math.min(g.w - g.v.w, Math.max(0, g.v.x));
    }
    s.addEventListener('wheel', function (e) {
      e.preventDefault();
      var r = s.getBoundingClientRect(), f = (e.clientX - r.left) / r.width, at = g.v.x + f * g.v.w;
      g.v.w *= e.deltaY < 0 ? 0.8 : 1.25; g.v.x = at - f * g.v.w; clamp(); set();
    }, {passive: false});
    s.addEventListener('mousedown', function (e) { g.d = {x: e.clientX, vx: g.v.x, s: s}; });
    window.addEventListener('mousemove', function (e) {
      if (!g.d) return;
      g.v.x = g.d.vx - (e.clientX - g.d.x) * g.v.w / g.d.s.getBoundingClientRect().width;
      clamp(); set();
    });
    window.addEventListener('mouseup', function () { g.d = null; });
    s.addEventListener('dblclick', function () { g.v = {x: 0, w: g.w}; set(); });
    set();
  });
})();
</script>"""


@dataclass(frozen=True)
class Axis:
    """Seconds since the epoch from ``start`` for ``span`` seconds, onto x in
    ``[LEFT, WIDTH - RIGHT]``; ``name`` ties the charts that zoom together."""

    start: float
    span: float
    name: str

    @property
    def scale(self) -> float:
        return (WIDTH - LEFT - RIGHT) / (self.span if self.span > 0 else 1.0)

    def x(self, moment: float) -> float:
        return LEFT + (moment - self.start) * self.scale

    def ticks(self, y: float) -> str:
        """Six tick labels along the axis (seconds from its start)."""
        parts = []
        for tick in range(6):
            seconds = self.span * tick / 5
            anchor = "start" if tick == 0 else "end" if tick == 5 else "middle"
            parts.append(f'<text x="{LEFT + seconds * self.scale:.0f}" y="{y:.0f}" '
                         f'text-anchor="{anchor}">{format_seconds_short(seconds)}</text>')
        return "".join(parts)


def svg_open(height: float, axis: Axis | None = None, label: str = "") -> str:
    zoom = f' class="zoomable" data-axis="{html.escape(axis.name)}"' if axis is not None else ""
    aria = f' aria-label="{html.escape(label)}"' if label else ""
    return (f'<svg xmlns="http://www.w3.org/2000/svg"{zoom}{aria} viewBox="0 0 {WIDTH} '
            f'{height:.0f}" width="100%" height="{height:.0f}" font-family="sans-serif" '
            'font-size="12">')


def format_seconds_short(seconds: float) -> str:
    """An axis label: ``"12 ms"`` below a second, ``"3.25 s"``, ``"75.0 s"``."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.2f} ms"
    return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.1f} s"


def attempt_label(a: Attempt) -> str:
    label = (f"{a.mini_batch_id} attempt {a.picked_count} on {a.process}: {a.status}, "
             f"{a.succeeded}/{a.total} items, {a.elapsed:.3f} s")
    if a.detail and a.detail != "{}":
        label += f" - {describe_detail(a.detail)}"
    if a.message:
        label += f" - {a.category}: {a.message}"
    return label


# -- task stream ---------------------------------------------------------------------------
def task_stream(attempts: AttemptTable, axis: Axis, processes: Sequence[str],
                markers: Sequence[float] = (), lanes: Any = None) -> str:
    """One lane per worker process, one bar per attempt (dense: shaded buckets); a dashed
    line at each of ``markers`` where a later run of the step begins. ``lanes`` gives each
    attempt's lane (default: its process's place in ``processes``)."""
    lane = {name: i for i, name in enumerate(processes)}
    if len(attempts) > SPARSE_ATTEMPTS:
        if lanes is None:
            lanes = [lane[attempts.processes[code]] for code in attempts.process.tolist()]
        return bucketed_task_stream(_buckets(attempts, axis, len(processes), lanes), axis,
                                    processes, markers)
    return attempt_bars(attempts, axis, processes, markers)


def attempt_bars(attempts: Iterable[Attempt], axis: Axis, processes: Sequence[str],
                 markers: Sequence[float] = ()) -> str:
    """The task stream of a sparse step: one bar per attempt (with its tooltip), in the lane
    of its process."""
    lane = {name: i for i, name in enumerate(processes)}
    parts = _lanes(processes, axis)
    for a in attempts:
        x = axis.x(a.start)
        w = max(a.elapsed * axis.scale, 0.5)
        parts.append(f'<rect x="{x:.2f}" y="{lane[a.process] * LANE + 3}" width="{w:.2f}" '
                     f'height="{LANE - 6}" fill="{COLOURS.get(a.status, "#999")}"><title>'
                     f'{html.escape(attempt_label(a))}</title></rect>')
    return _close_lanes(parts, processes, axis, markers)


def bucketed_task_stream(rows: Sequence[tuple[Sequence[float], Sequence[int]]], axis: Axis,
                         processes: Sequence[str], markers: Sequence[float] = ()) -> str:
    """The task stream of a dense step from its buckets: for each lane (``processes``
    order), the busy seconds and the failed attempts of each of ``BUCKETS`` equal parts of
    the axis (from the attempts, or from a
    :class:`~mlpipe.runtime.reports.timeline.Timeline` kept while the step ran)."""
    parts = _lanes(processes, axis)
    parts.extend(_bucket_paths(rows, axis))
    return _close_lanes(parts, processes, axis, markers)


def _lanes(processes: Sequence[str], axis: Axis) -> list[str]:
    parts = [svg_open(LANE * len(processes) + 22, axis, "task stream")]
    for i, name in enumerate(processes):
        y = i * LANE
        parts.append(f'<text x="4" y="{y + 14}">{html.escape(name)}</text>'
                     f'<line x1="{LEFT}" y1="{y + LANE}" x2="{WIDTH}" y2="{y + LANE}" '
                     'stroke="#eee"/>')
    return parts


def _close_lanes(parts: list[str], processes: Sequence[str], axis: Axis,
                 markers: Sequence[float]) -> str:
    bottom = LANE * len(processes)
    for number, at in enumerate(markers, start=2):
        x = axis.x(at)
        parts.append(f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{bottom}" stroke="#333" '
                     f'stroke-dasharray="4 3"><title>run {number} starts (a resumed or rerun '
                     f'step)</title></line><text x="{x + 3:.1f}" y="{bottom - 4}" '
                     f'font-size="11">run {number}</text>')
    parts.append(axis.ticks(bottom + 16) + "</svg>")
    return "".join(parts)


def busy_per_bucket(offsets: Any, durations: Any, width: float, buckets: int) -> Any:
    """Seconds of attempts (starting ``offsets`` after the axis start, lasting ``durations``)
    that fall in each of ``buckets`` buckets of ``width`` seconds."""
    import numpy as np  # noqa: PLC0415

    starts = np.clip(offsets, 0.0, width * buckets)
    ends = np.clip(offsets + durations, 0.0, width * buckets)
    edges = np.arange(buckets + 1) * width
    # covered(t): the attempts' overlap with [0, t], summed; a bucket's busy seconds are
    # covered(its end) - covered(its start)
    order_s, order_e = np.sort(starts), np.sort(ends)
    cum_s = np.concatenate(([0.0], np.cumsum(order_s)))
    cum_e = np.concatenate(([0.0], np.cumsum(order_e)))
    n_s = np.searchsorted(order_s, edges, side="right")
    n_e = np.searchsorted(order_e, edges, side="right")
    # overlap with [0, t] = min(end, t) - min(start, t)
    ends_before = cum_e[n_e] + edges * (len(order_e) - n_e)
    starts_before = cum_s[n_s] + edges * (len(order_s) - n_s)
    covered = ends_before - starts_before
    return np.diff(covered)


def _buckets(attempts: AttemptTable, axis: Axis, count: int,
             lanes: Any) -> list[tuple[list[float], list[int]]]:
    """Per lane, the busy seconds of each time bucket and the failed attempts started in it."""
    import numpy as np  # noqa: PLC0415

    width = (axis.span if axis.span > 0 else 1.0) / BUCKETS
    offsets = attempts.start - axis.start
    bad = ~attempts.ok
    lanes = np.asarray(lanes)
    rows = []
    for row in range(count):
        mine = lanes == row
        busy = busy_per_bucket(offsets[mine], attempts.elapsed[mine], width, BUCKETS)
        failed_at = np.clip((offsets[mine & bad] / width).astype(int), 0, BUCKETS - 1)
        rows.append((busy.tolist(), np.bincount(failed_at, minlength=BUCKETS).tolist()))
    return rows


def _bucket_paths(rows: Sequence[tuple[Sequence[float], Sequence[int]]],
                  axis: Axis) -> list[str]:
    """Per lane, the share of each time bucket spent in attempts, drawn as runs of buckets
    of one shade (one path per lane and shade) and a red strip where attempts failed."""
    width = (axis.span if axis.span > 0 else 1.0) / BUCKETS
    step = width * axis.scale
    out = []
    for row, (busy, failed) in enumerate(rows):
        levels = [_shade(value / width) for value in busy]
        y = row * LANE
        shades: dict[int, list[str]] = {}
        bucket = 0
        while bucket < BUCKETS:
            level = levels[bucket]
            end = bucket
            while end + 1 < BUCKETS and levels[end + 1] == level:
                end += 1
            if level:
                shades.setdefault(level, []).append(
                    f"M{LEFT + bucket * step:.1f} {y + 3}h{(end - bucket + 1) * step:.1f}"
                    f"v{LANE - 6}h-{(end - bucket + 1) * step:.1f}z")
            bucket = end + 1
        for level, path in sorted(shades.items()):
            out.append(f'<path d="{"".join(path)}" fill="{COLOURS["Succeeded"]}" '
                       f'fill-opacity="{level / SHADES:.2f}"/>')
        strips = [f"M{LEFT + b * step:.1f} {y}h{max(step, 1):.1f}v3h-{max(step, 1):.1f}z"
                  for b in range(BUCKETS) if failed[b]]
        if strips:
            out.append(f'<path d="{"".join(strips)}" fill="{COLOURS["Failed"]}"><title>'
                       f'{sum(failed)} failed attempts</title></path>')
    return out


def _shade(share: float) -> int:
    return 0 if share <= 0 else min(SHADES, max(1, math.ceil(share * SHADES - 1e-9)))


# -- throughput, lines ----------------------------------------------------------------------
THROUGHPUT_BUCKETS = 60


def throughput(attempts: AttemptTable, axis: Axis) -> str:
    """Attempts finished per time bucket (:func:`throughput_of` the attempts' ends)."""
    import numpy as np  # noqa: PLC0415

    width = (axis.span if axis.span > 0 else 1.0) / THROUGHPUT_BUCKETS
    at = np.clip(((attempts.end - axis.start) / width).astype(int), 0, THROUGHPUT_BUCKETS - 1)
    return throughput_of(np.bincount(at, minlength=THROUGHPUT_BUCKETS).tolist(), axis)


def throughput_of(counts: Sequence[int], axis: Axis) -> str:
    """The attempts finished in each of ``THROUGHPUT_BUCKETS`` equal parts of ``axis``; a
    rate per second only where buckets are a second or longer (a 1 ms step is not drawn as
    thousands per second)."""
    width = (axis.span if axis.span > 0 else 1.0) / len(counts)
    top = max(counts) or 1
    per_second = width >= 1.0
    unit = "/s" if per_second else f" per {format_seconds_short(width)}"
    height = 120
    parts = [svg_open(height, axis, "throughput")]
    for i, count in enumerate(counts):
        if not count:
            continue
        tall = count / top * (height - 36)
        value = f"{count / width:.1f}/s" if per_second else f"{count}"
        parts.append(f'<rect x="{LEFT + i * width * axis.scale:.1f}" y="{height - 18 - tall:.1f}" '
                     f'width="{max(width * axis.scale - 1, 0.5):.1f}" height="{tall:.1f}" '
                     f'fill="#1f77b4"><title>{format_seconds_short(i * width)}: {count} '
                     f'finished ({value})</title></rect>')
    top_text = f"{top / width:.1f}/s" if per_second else f"{top}{unit}"
    parts.append(f'<text x="4" y="16">{top_text}</text><text x="4" y="{height - 18}">0</text>'
                 f"{axis.ticks(height - 4)}</svg>")
    return "".join(parts)


def lines(series: dict[str, list[tuple[float, float]]], axis: Axis, unit: str,
          colours: dict[str, str]) -> str:
    """One polyline per series of ``(moment, value)``, at most ``LINE_POINTS`` points each
    (the largest value of each slice is kept)."""
    height = 130
    top = max((v for points in series.values() for _, v in points), default=0.0) or 1.0
    parts = [svg_open(height, axis, unit)]
    for name, points in sorted(series.items()):
        kept = _thin(points)
        coords = " ".join(f"{axis.x(t):.0f},{height - 18 - v / top * (height - 30):.0f}"
                          for t, v in kept)
        parts.append(f'<polyline fill="none" stroke="{colours.get(name, "#333")}" '
                     f'stroke-width="1.5" points="{coords}"><title>{html.escape(name)}</title>'
                     "</polyline>")
    parts.append(f'<text x="4" y="16">{top:.0f}{unit}</text><text x="4" y="{height - 18}">0'
                 f"</text>{axis.ticks(height - 4)}</svg>")
    return "".join(parts)


def _thin(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    if len(points) <= LINE_POINTS:
        return points
    size = math.ceil(len(points) / LINE_POINTS)
    return [max(points[i:i + size], key=lambda p: p[1]) for i in range(0, len(points), size)]


# -- histogram, breakdown, gantt ----------------------------------------------------------------
def histogram(buckets: dict[int, int]) -> str:
    """Attempts by duration (log scale: four buckets per doubling)."""
    if not buckets:
        return "<p>No attempts.</p>"
    low, high = min(buckets), max(buckets)
    pad = max(0, 16 - (high - low + 1)) // 2  # a few empty buckets either side of a narrow one
    low, high = max(low - pad, 0), high + pad
    count = high - low + 1
    top = max(buckets.values())
    height = 120
    column = (WIDTH - LEFT - RIGHT) / count
    parts = [svg_open(height, None, "duration histogram")]
    for index in range(low, high + 1):
        value = buckets.get(index, 0)
        if not value:
            continue
        tall = value / top * (height - 36)
        start, end = bucket_bounds(index)
        x = LEFT + (index - low) * column
        parts.append(f'<rect x="{x:.1f}" y="{height - 18 - tall:.1f}" '
                     f'width="{max(column - 1, 0.5):.1f}" height="{tall:.1f}" fill="#8c564b">'
                     f"<title>{format_seconds_short(start)} - {format_seconds_short(end)}: "
                     f"{value} attempts</title></rect>")
    first, _ = bucket_bounds(low)
    _, last = bucket_bounds(high)
    parts.append(f'<text x="4" y="16">{top} attempts</text>'
                 f'<text x="{LEFT}" y="{height - 4}">{format_seconds_short(first)}</text>'
                 f'<text x="{WIDTH - RIGHT}" y="{height - 4}" text-anchor="end">'
                 f"{format_seconds_short(last)} (log scale)</text></svg>")
    return "".join(parts)


def breakdown(parts: Sequence[tuple[str, float, str]]) -> str:
    """One stacked bar of where a mini-batch's time goes: ``(label, seconds, colour)``."""
    total = sum(seconds for _, seconds, _ in parts) or 1.0
    height = 46
    out = [svg_open(height, None, "time per mini-batch")]
    x = float(LEFT)
    for label, seconds, colour in parts:
        w = seconds / total * (WIDTH - LEFT - RIGHT)
        if w <= 0:
            continue
        out.append(f'<rect x="{x:.1f}" y="4" width="{w:.1f}" height="20" fill="{colour}"><title>'
                   f"{html.escape(label)}: {format_seconds_short(seconds)} "
                   f"({seconds / total:.0%})</title></rect>")
        if w > 70:
            out.append(f'<text x="{x + 4:.1f}" y="40">{html.escape(label)} {seconds / total:.0%}'
                       "</text>")
        x += w
    out.append('<text x="4" y="18">per mini-batch</text></svg>')
    return "".join(out)


def gantt(rows: Sequence[tuple[str, float | None, float | None, str]], axis: Axis) -> str:
    """One row per step: a bar from its start to its end, coloured by status."""
    colours = {"completed": "#4c9a2a", "failed": "#d62728", "canceled": "#b26a00",
               "running": "#1f77b4", "warning": "#e0a800"}
    height = LANE * len(rows) + 22
    parts = [svg_open(height, axis, "steps")]
    for i, (name, start, end, status) in enumerate(rows):
        y = i * LANE
        parts.append(f'<text x="4" y="{y + 14}">{html.escape(name)}</text>')
        if start is None:
            parts.append(f'<text x="{LEFT}" y="{y + 14}" fill="#777">{html.escape(status)}</text>')
            continue
        finish = end if end is not None else axis.start + axis.span
        parts.append(f'<rect x="{axis.x(start):.1f}" y="{y + 3}" '
                     f'width="{max((finish - start) * axis.scale, 1):.1f}" height="{LANE - 6}" '
                     f'fill="{colours.get(status, "#999")}"><title>{html.escape(name)}: '
                     f"{html.escape(status)}, {format_seconds_short(finish - start)}</title>"
                     "</rect>")
    parts.append(axis.ticks(LANE * len(rows) + 16) + "</svg>")
    return "".join(parts)


def slowest(attempts: AttemptTable, count: int) -> list[Attempt]:
    """The ``count`` longest attempts, longest first."""
    import numpy as np  # noqa: PLC0415

    if len(attempts) > count:
        picked = np.argpartition(-attempts.elapsed, count)[:count]
    else:
        picked = np.arange(len(attempts))
    return sorted((attempts.row(int(i)) for i in picked), key=lambda a: -a.elapsed)


__all__ = ["COLOURS", "PALETTE", "ZOOM_SCRIPT", "Axis", "attempt_bars", "attempt_label",
           "breakdown", "format_seconds_short", "gantt", "histogram", "lines", "slowest",
           "task_stream", "throughput", "throughput_of"]
