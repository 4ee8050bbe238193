"""Cutting delimited and JSON-lines files into byte ranges that start at record starts.

Driver-side and cheap: without ``support_multi_line`` a cut is found by reading a
few kilobytes around the target offset (a 1 GB file costs a handful of small
reads per cut); with it, the file is scanned once, in blocks, tracking double
quotes so a newline inside a quoted value never ends a record. Nothing is
parsed into values and nothing larger than one block is held.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator
from typing import BinaryIO

import numpy as np

WINDOW = 64 * 1024
BLOCK = 4 * 1024 * 1024
NEWLINE = 0x0A
QUOTE = 0x22


def _last_newline(handle: BinaryIO, lo: int, hi: int) -> int | None:
    """Offset just after the last ``\\n`` in ``[lo, hi)``, or ``None``."""
    right = hi
    while right > lo:
        left = max(lo, right - WINDOW)
        handle.seek(left)
        found = handle.read(right - left).rfind(b"\n")
        if found >= 0:
            return left + found + 1
        right = left
    return None


def _next_newline(handle: BinaryIO, lo: int, end: int) -> int:
    """Offset just after the first ``\\n`` at or after ``lo`` (``end`` when none)."""
    pos = lo
    while pos < end:
        handle.seek(pos)
        chunk = handle.read(min(WINDOW, end - pos))
        found = chunk.find(b"\n")
        if found >= 0:
            return pos + found + 1
        pos += len(chunk)
        if not chunk:
            break
    return end


def line_ranges(path: str, start: int, end: int, target: int) -> Iterator[tuple[int, int]]:
    """Byte ranges of whole lines, each at most ``target`` bytes unless one line is longer."""
    with open(path, "rb") as handle:
        pos = start
        while pos < end:
            limit = pos + target
            if limit >= end:
                yield pos, end
                return
            cut = _last_newline(handle, pos, limit)
            if cut is None or cut <= pos:
                cut = _next_newline(handle, limit, end)
            yield pos, cut
            pos = cut


def _record_ends(path: str, start: int, end: int, quoted: bool) -> Iterator[np.ndarray]:
    """Offsets just after each record-ending newline in ``[start, end)``, block by block."""
    in_quote = 0
    with open(path, "rb") as handle:
        handle.seek(start)
        pos = start
        while pos < end:
            block = handle.read(min(BLOCK, end - pos))
            if not block:
                break
            data = np.frombuffer(block, dtype=np.uint8)
            newlines = np.flatnonzero(data == NEWLINE)
            if quoted:
                quotes = np.cumsum(data == QUOTE, dtype=np.int64)
                parity = (quotes[newlines] + in_quote) & 1
                in_quote = int((quotes[-1] + in_quote) & 1)
                newlines = newlines[parity == 0]
            yield newlines + (pos + 1)
            pos += len(block)


def _boundaries(path: str, start: int, end: int, quoted: bool) -> Iterator[np.ndarray]:
    """Record boundaries in ``(start, end]`` block by block; ``end`` closes a last record
    that has no newline."""
    last = start
    for ends in _record_ends(path, start, end, quoted):
        if len(ends):
            last = int(ends[-1])
        yield ends
    if last < end:
        yield np.array([end], dtype=np.int64)


def record_ranges(path: str, start: int, end: int, target: int, *, quoted: bool
                  ) -> Iterator[tuple[int, int, int]]:
    """``(start, end, records)`` ranges of whole records, packed up to ``target`` bytes.

    With ``quoted`` a newline inside double quotes does not end a record. A range
    always holds at least one record.
    """
    pos = start
    pending = np.empty(0, dtype=np.int64)
    for ends in _boundaries(path, start, end, quoted):
        pending = np.concatenate([pending, ends.astype(np.int64)])
        while len(pending) and pending[-1] > pos + target:
            fits = int(np.searchsorted(pending, pos + target, side="right"))
            cut_index = max(fits, 1) - 1
            cut = int(pending[cut_index])
            yield pos, cut, cut_index + 1
            pos = cut
            pending = pending[cut_index + 1:]
    if len(pending):
        yield pos, int(pending[-1]), len(pending)


def count_records(path: str, start: int, end: int, *, quoted: bool) -> int:
    """Records in ``[start, end)`` (a last record without a newline counts)."""
    return sum(len(ends) for ends in _boundaries(path, start, end, quoted))


def first_record(path: str, encoding: str, *, quoted: bool) -> tuple[str, int]:
    """The text of the first record (without its newline) and the offset after it."""
    for ends in _record_ends(path, 0, os.path.getsize(path), quoted):
        if len(ends):
            stop = int(ends[0])
            break
    else:
        stop = os.path.getsize(path)
    with open(path, "rb") as handle:
        raw = handle.read(stop)
    text = raw.decode(encoding, errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.rstrip("\r\n"), stop


def split_fields(line: str, delimiter: str) -> list[str]:
    """The fields of one CSV record (quotes honoured)."""
    rows = list(csv.reader(io.StringIO(line), delimiter=delimiter))
    return rows[0] if rows else []
