"""The journal's seal for a small step, in plain loops: what :mod:`mlpipe.runtime.journal_bulk`
does with numpy, without importing it (~0.1 s of the driver's CPU at the end of every step;
below :data:`mlpipe.runtime.journal.BULK_FROM` mini-batches the loops take less). The same
slots, in the same order, and the same records either way (tests/runtime/test_journal_bulk.py).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence


def input_order(index: array[int], slots: Iterable[int]) -> array[int]:
    """``slots`` by their mini-batch ``index`` (ties in slot order)."""
    return array("i", sorted(slots, key=index.__getitem__))


def wanted(slots: Sequence[int], length: array[int], status: array[int], fresh: array[int],
           *, unique: bool) -> list[int]:
    """The slots of ``slots`` whose rows go into the output, in order: each once (its first
    place, unless ``unique`` says they are), with rows, not failed in an earlier run."""
    order: Iterable[int] = slots if unique else dict.fromkeys(slots)
    return [slot for slot in order
            if length[slot] > 0 and not (status[slot] != 0 and fresh[slot] == 0)]


def point_at_output(live: bytes, placed: array[int], offset: array[int], length: array[int],
                    status: array[int]) -> list[int]:
    """Point each live record with rows at where ``placed`` put them; a record of a failed
    mini-batch whose rows were left out gets none. Returns the slots of succeeded ones whose
    rows are not in the output (they must run again)."""
    again = []
    for slot, alive in enumerate(live):
        if not alive or not length[slot]:
            continue
        where = placed[slot]
        if where >= 0:
            offset[slot] = where
        elif status[slot] != 0:
            offset[slot] = length[slot] = 0
        else:
            again.append(slot)
    return again


__all__ = ["input_order", "point_at_output", "wanted"]
