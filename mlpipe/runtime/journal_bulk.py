"""The journal's seal a column at a time: numpy over its per-slot arrays.

Sealing a step writes every mini-batch's rows into the append_row output in input order
and points each record at them (:meth:`mlpipe.runtime.journal.Journal.write`). Done one
mini-batch at a time that is a few microseconds each, seconds for a million; these
functions do the same work on whole columns, and leave to the journal's one-by-one path
what they do not handle (rows that fail their checksum, rows too large to read at once,
ids of different lengths): the same bytes either way.

Every numpy view of a journal array lives only inside one of these functions: an
``array.array`` cannot grow while a view of it exists.
"""

from __future__ import annotations

import os
import zlib
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

SPAN = 8 << 20  # bytes of a segment read at once for a chunk of mini-batches (memory bound)


def input_order(index: array[int], slots: Iterable[int]) -> array[int]:
    """``slots`` by their mini-batch ``index`` (ties in slot order)."""
    chosen = np.fromiter(slots, dtype=np.int32)
    ordered = chosen[np.argsort(np.frombuffer(index, dtype=index.typecode)[chosen],
                                kind="stable")]
    out = array("i")
    out.frombytes(ordered.astype(np.dtype(out.typecode), copy=False).tobytes())
    return out


def wanted(slots: Sequence[int], length: array[int], status: array[int], fresh: array[int],
           *, unique: bool) -> Any:
    """The slots of ``slots`` whose rows go into the output, in order: each once (its first
    place, unless ``unique`` says they are), with rows, not failed in an earlier run."""
    order = np.asarray(slots, dtype=np.int32)  # every one a slot (>= 0)
    if not unique and len(order):
        _, first = np.unique(order, return_index=True)
        order = order[np.sort(first)]
    rows = np.frombuffer(length, dtype=length.typecode)[order] > 0
    earlier = (np.frombuffer(status, dtype=status.typecode)[order] != 0) & \
        (np.frombuffer(fresh, dtype=fresh.typecode)[order] == 0)
    return order[rows & ~earlier]


def place(chunk: Any, columns: tuple[array[int], array[int], array[int], array[int]],
          reader: Callable[[int], int | None], add: Callable[[bytes], int],
          placed: array[int]) -> bool:
    """Add the rows of the slots ``chunk`` (in order) to the output through ``add`` and note
    where each landed in ``placed``, when they lie in one segment within :data:`SPAN` bytes
    and all pass their checksum; ``False`` (nothing added) otherwise. ``columns``: the
    journal's segment, offset, length and CRC-32 arrays; ``reader``: a segment's read
    descriptor."""
    segment, offset, length, crc = (np.frombuffer(values, dtype=values.typecode)[chunk]
                                    for values in columns)
    if not len(chunk) or (segment != segment[0]).any():
        return False
    low = int(offset.min())
    high = int((offset + length).max())
    fd = reader(int(segment[0]))
    if fd is None or high - low > SPAN:
        return False
    data = os.pread(fd, high - low, low)
    if len(data) < high - low:
        return False
    starts = (offset - low).tolist()
    pieces = list(map(data.__getitem__, map(slice, starts, (offset - low + length).tolist())))
    if (np.fromiter(map(zlib.crc32, pieces), dtype=np.uint32, count=len(pieces)) != crc).any():
        return False
    where = add(b"".join(pieces))
    np.frombuffer(placed, dtype=placed.typecode)[chunk] = where + np.cumsum(length) - length
    return True


def point_at_output(live: bytes, placed: array[int], offset: array[int], length: array[int],
                    status: array[int]) -> list[int]:
    """Point each live record with rows at where ``placed`` put them; a record of a failed
    mini-batch whose rows were left out gets none. Returns the slots of succeeded ones whose
    rows are not in the output (they must run again)."""
    has = np.frombuffer(live, dtype=np.uint8).astype(bool)
    rows = np.frombuffer(length, dtype=length.typecode)
    has &= rows[:len(has)] != 0
    where = np.frombuffer(placed, dtype=placed.typecode)[:len(has)]
    ok = np.frombuffer(status, dtype=status.typecode)[:len(has)] == 0
    put = has & (where >= 0)
    np.frombuffer(offset, dtype=offset.typecode)[:len(has)][put] = where[put]
    left = has & (where < 0)
    none = np.flatnonzero(left & ~ok)
    np.frombuffer(offset, dtype=offset.typecode)[none] = 0
    rows[none] = 0
    kept: list[int] = np.flatnonzero(left & ok).tolist()
    return kept
