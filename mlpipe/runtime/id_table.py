"""A compact map from mini-batch ids to slot numbers, for the journal's in-memory index.

A ``dict[str, int]`` of a million ids costs about 150 MB (a string object, an int
object and a dict entry per id). :class:`IdTable` keeps the ids' UTF-8 bytes in one
``bytearray`` and an open-addressing hash table of slot numbers in an ``array``:
about 30 bytes per id plus the id itself, with the same answers as the dict.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import compress

from mlpipe.runtime.textio import DATA_ERRORS

_EMPTY = -1
_REMOVED = -2


class IdTable:
    """Ids (strings) numbered ``0, 1, 2, ...`` in the order first added.

    :meth:`add` gives a new id the next slot; :meth:`find` returns an id's slot or
    -1; :meth:`remove` forgets an id (its slot number is not reused: adding the id
    again gives it a new slot, as ``dict`` ordering would put it last).
    """

    def __init__(self) -> None:
        self._bytes = bytearray()  # every id added, UTF-8, back to back
        self._starts = array("q", [0])  # slot -> offset of its id in _bytes (one extra at the end)
        self._hashes = array("q")  # slot -> hash of its id
        self._live = bytearray()  # slot -> 1 while its id is in the table
        self._table = array("i", [_EMPTY]) * 8  # open addressing: slot numbers
        self._used = 0  # table entries not empty (removed ones included)
        self._count = 0  # ids in the table

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.find(key) >= 0

    def slots(self, among: Iterable[int] | None = None) -> Iterator[int]:
        """The slots of the ids in the table, in slot order (only those flagged in
        ``among``, one byte per slot, when given)."""
        live: bytes | bytearray = self._live
        if among is not None:
            live = bytes(map(operator.and_, live, among))
        return compress(range(len(live)), live)

    def key(self, slot: int) -> str:
        """The id of ``slot``."""
        return self._bytes[self._starts[slot]:self._starts[slot + 1]].decode("utf-8",
                                                                            DATA_ERRORS)

    def raw(self, slot: int) -> bytes:
        """The id of ``slot``, UTF-8 encoded."""
        return bytes(self._bytes[self._starts[slot]:self._starts[slot + 1]])

    def find(self, key: str) -> int:
        """The slot of ``key``, or -1."""
        position = self._position(key, hash(key))
        return self._table[position] if position >= 0 else -1

    def add(self, key: str) -> int:
        """Give ``key`` (not in the table) the next slot and return it."""
        return self.find_or_add(key)[0]

    def find_or_add(self, key: str) -> tuple[int, bool]:
        """``(slot of key, False)``, or ``(next slot, True)`` after adding ``key``."""
        if 2 * (self._used + 1) > len(self._table):
            self._grow()
        code = hash(key)
        table, hashes, mask = self._table, self._hashes, len(self._table) - 1
        position = code & mask
        free = -1  # the first removed entry on the way: the new key goes there
        encoded = key.encode("utf-8", DATA_ERRORS)
        while True:
            slot = table[position]
            if slot == _EMPTY:
                break
            if slot == _REMOVED:
                if free < 0:
                    free = position
            elif hashes[slot] == code and \
                    self._bytes[self._starts[slot]:self._starts[slot + 1]] == encoded:
                return slot, False
            position = (position + 1) & mask
        slot = len(hashes)
        self._bytes += encoded
        self._starts.append(len(self._bytes))
        hashes.append(code)
        self._live.append(1)
        if free < 0:
            self._used += 1
            free = position
        table[free] = slot
        self._count += 1
        return slot, True

    def remove(self, key: str) -> int:
        """Forget ``key``; return the slot it had, or -1."""
        position = self._position(key, hash(key))
        if position < 0:
            return -1
        slot = self._table[position]
        self._table[position] = _REMOVED
        self._live[slot] = 0
        self._count -= 1
        return slot

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]

    def live_mask(self) -> bytes:
        """One byte per slot: 1 while its id is in the table."""
        return bytes(self._live)

    def uniform_keys(self, slots: Sequence[int]) -> tuple[bytes, int] | None:
        """The UTF-8 ids of ``slots`` back to back and their one length, when they all have
        the same length (mini-batch ids are digests: nearly always); else ``None``."""
        import numpy as np  # noqa: PLC0415 - the journal's seal alone asks for this

        chosen = np.asarray(slots, dtype=np.int64)
        starts = np.frombuffer(self._starts, dtype=np.int64)
        begin = starts[chosen]
        lengths = starts[chosen + 1] - begin
        del starts  # the arrays may grow again once no view of them is left
        if not len(chosen):
            return b"", 0
        width = int(lengths[0])
        if width == 0 or not bool((lengths == width).all()):
            return None
        raw = np.frombuffer(self._bytes, dtype=np.uint8)
        keys = raw[begin[:, None] + np.arange(width)].tobytes()
        del raw
        return keys, width

    def _position(self, key: str, code: int) -> int:
        table, hashes, mask = self._table, self._hashes, len(self._table) - 1
        position = code & mask
        encoded: bytes | None = None
        while True:
            slot = table[position]
            if slot == _EMPTY:
                return -1
            if slot >= 0 and hashes[slot] == code:
                if encoded is None:
                    encoded = key.encode("utf-8", DATA_ERRORS)
                if self._bytes[self._starts[slot]:self._starts[slot + 1]] == encoded:
                    return position
            position = (position + 1) & mask

    def _grow(self) -> None:
        """Rebuild the table at twice the live ids' need (removed entries are dropped)."""
        size = 8
        while size < 4 * (self._count + 1):
            size *= 2
        table, mask = array("i", [_EMPTY]) * size, size - 1
        hashes = self._hashes
        for slot in self.slots():
            position = hashes[slot] & mask
            while table[position] != _EMPTY:
                position = (position + 1) & mask
            table[position] = slot
        self._table, self._used = table, self._count


__all__ = ["IdTable"]
