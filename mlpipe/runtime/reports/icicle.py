"""An icicle chart of a step's ``run()`` profiles (``sys/profile/*/*.prof``, ``pstats``).

The profiles of every worker are added up; from the functions nobody called (run() itself)
downwards, each function is a box as wide as the time spent in it from that caller, its
callees below it. Boxes narrower than ``MIN_SHARE`` of the whole and levels deeper than
``MAX_DEPTH`` are left out, so the chart stays small whatever the profile.
"""

from __future__ import annotations

import html
import os
import pstats
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlpipe.runtime.reports.charts import LEFT, RIGHT, WIDTH, format_seconds_short, svg_open

MAX_DEPTH = 12
MIN_SHARE = 0.005
ROW = 18
PALETTE = ("#f2c57c", "#ddae7e", "#7fb685", "#426a5a", "#ef6f6c", "#9fb4c7", "#c3b299",
           "#e6aace")
Func = tuple[str, int, str]


def icicle(profiles: Sequence[Path]) -> str:
    """The chart of ``profiles`` ("" when none can be read)."""
    stats = _load(profiles)
    if stats is None:
        return ""
    table: dict[Func, Any] = stats.stats  # type: ignore[attr-defined]
    children: dict[Func, list[tuple[Func, float]]] = {}
    for func, (_cc, _nc, _tt, _ct, callers) in table.items():
        for caller, edge in callers.items():
            children.setdefault(caller, []).append((func, float(edge[3])))
    roots = [(func, float(entry[3])) for func, entry in table.items()
             if not any(caller in table for caller in entry[4])]
    roots = [(func, ct) for func, ct in roots if ct > 0 and not _is_profiler(func)]
    total = sum(ct for _, ct in roots)
    if total <= 0:
        return ""
    boxes: list[str] = []
    width = WIDTH - LEFT - RIGHT
    depth_seen = [0]

    def draw(func: Func, seconds: float, x: float, depth: int, path: frozenset[Func]) -> None:
        w = seconds / total * width
        if w < MIN_SHARE * width or depth >= MAX_DEPTH:
            return
        depth_seen[0] = max(depth_seen[0], depth + 1)
        name = _name(func)
        colour = PALETTE[zlib.crc32(func[0].encode()) % len(PALETTE)]
        text = (f'<text x="{x + 3:.1f}" y="{depth * ROW + 13}" font-size="11">'
                f"{html.escape(name[: int(w / 7)])}</text>" if w > 40 else "")
        boxes.append(f'<g><rect x="{x:.1f}" y="{depth * ROW}" width="{w:.1f}" height="{ROW - 1}" '
                     f'fill="{colour}"><title>{html.escape(name)} ({html.escape(func[0])}:'
                     f"{func[1]}): {format_seconds_short(seconds)}, {seconds / total:.1%}</title>"
                     f"</rect>{text}</g>")
        offset = x
        kids = sorted(children.get(func, []), key=lambda pair: -pair[1])
        room = sum(ct for _, ct in kids)
        shrink = min(1.0, seconds / room) if room > 0 else 1.0  # recursion: never wider
        for kid, ct in kids:
            if kid in path:
                continue
            draw(kid, ct * shrink, offset, depth + 1, path | {kid})
            offset += ct * shrink / total * width

    x = float(LEFT)
    for func, ct in sorted(roots, key=lambda pair: -pair[1]):
        draw(func, ct, x, 0, frozenset({func}))
        x += ct / total * width
    height = depth_seen[0] * ROW + 4
    return (svg_open(height, None, "run() profile") + f'<text x="4" y="13">run() '
            f"{format_seconds_short(total)}</text>" + "".join(boxes) + "</svg>")


def _load(profiles: Sequence[Path]) -> pstats.Stats | None:
    readable = [str(path) for path in profiles if path.is_file() and os.path.getsize(path)]
    stats = None
    for path in readable:
        try:
            if stats is None:
                stats = pstats.Stats(path)
            else:
                stats.add(path)
        except Exception:  # noqa: BLE001, S112 - a torn or foreign file: skip it
            continue
    return stats


def _is_profiler(func: Func) -> bool:
    return func[2] in ("<method 'disable' of '_lsprof.Profiler' objects>",)


def _name(func: Func) -> str:
    file, _line, name = func
    return name if file == "~" else f"{name} ({Path(file).name})"


__all__ = ["icicle"]
