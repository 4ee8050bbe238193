"""Files a Dask worker writes on its own disk, brought back to the driver through Dask.

On a worker that cannot see the run folder (another machine, no shared file system) an
mlpipe worker writes its logs (the user's stdout and stderr, the entry script's log, a
profile) and the files run() puts in the step's outputs into a scratch folder of its
own. The :class:`Outbox` (worker side) looks at those folders after each bundle of
mini-batches, at shutdown() and when drained, and hands back what is new as a
:class:`Shipment` of at most ``limit`` bytes, read from disk when it is made (nothing
is held in memory between shipments): the tail of a file that grew (logs only grow;
an output file grows the same way when what was sent before is still there), else the
whole file again, in pieces. The :class:`Inbox` (driver side) writes them into the run
folder, each source's shipments in the order they were made, so the driver alone
writes the logs tree and the outputs, exactly as one machine would have them.

Only regular files travel (links are not followed); a path that would leave its root
is refused. A whole file is written beside its target and renamed over it when its
last piece has arrived, so a half-sent file never replaces a whole one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

SHIPMENT_BYTES = 8 << 20  # at most this much file data in one shipment (bounded memory)
_TAIL = 4096  # bytes before a file's sent end that must be unchanged for an append


class Piece(NamedTuple):
    """Bytes of one file: ``append`` them (``offset`` is where they start in the worker's
    file), or part ``offset`` of the ``whole`` file (``version``), ``last`` when it ends it."""

    root: str
    path: str  # relative to the root, "/"-separated
    kind: str  # "append" | "whole"
    offset: int
    data: bytes
    version: int = 0
    last: bool = True


class Shipment(NamedTuple):
    """What one look at a worker's folders found: ``seq`` orders a source's shipments,
    ``more`` says that more is waiting (the limit was reached)."""

    seq: int
    pieces: tuple[Piece, ...]
    more: bool = False


@dataclass
class _Sent:
    size: int = 0  # bytes of the current version the driver has (or will have)
    mtime: int = -1
    inode: int = -1
    tail: bytes = b""  # digest of the bytes before ``size``, to tell an append
    version: int = 0
    whole_at: int | None = None  # a whole transfer in progress: the next offset


@dataclass
class Outbox:
    """The worker's side: ``roots`` name the folders to watch (``"logs"``, ``"out0"``...);
    those in ``append_roots`` hold files that only grow (logs: a file seen for the first
    time is appended to the driver's, as a replacement worker appends to its
    predecessor's log), the others' new files replace the driver's."""

    roots: Mapping[str, str]
    append_roots: frozenset[str] = frozenset({"logs"})
    limit: int = SHIPMENT_BYTES
    _sent: dict[tuple[str, str], _Sent] = field(default_factory=dict)
    _seq: int = 0

    def collect(self) -> Shipment | None:
        """What changed since the last shipment (at most :attr:`limit` bytes), or None."""
        pieces: list[Piece] = []
        budget = self.limit
        more = False
        for root, relative, path, info in self._files():
            sent = self._sent.get((root, relative))
            if sent is not None and sent.whole_at is None and sent.mtime == info.st_mtime_ns \
                    and sent.inode == info.st_ino and sent.size == info.st_size:
                continue
            if budget <= 0:
                more = True
                break
            piece = self._piece(root, relative, path, info, sent, budget)
            if piece is not None:
                pieces.append(piece)
                budget -= max(1, len(piece.data))
                if piece.kind == "whole" and not piece.last:
                    more = True
        if not pieces:
            return None
        self._seq += 1
        return Shipment(self._seq, tuple(pieces), more)

    def _files(self) -> Iterator[tuple[str, str, str, os.stat_result]]:
        for root, folder in self.roots.items():
            for directory, _dirs, names in os.walk(folder):
                for name in sorted(names):
                    path = os.path.join(directory, name)
                    try:
                        info = os.lstat(path)
                    except OSError:
                        continue
                    if stat.S_ISREG(info.st_mode):
                        yield root, os.path.relpath(path, folder).replace(os.sep, "/"), path, info

    def _piece(self, root: str, relative: str, path: str, info: os.stat_result,
               sent: _Sent | None, budget: int) -> Piece | None:
        if sent is None:
            sent = self._sent[(root, relative)] = _Sent()
            if root in self.append_roots:
                sent.inode, sent.mtime = info.st_ino, info.st_mtime_ns  # append from 0
            else:
                sent.version = 0
                sent.whole_at = 0
        try:
            with open(path, "rb") as handle:
                if sent.whole_at is None and self._appended(handle, info, sent):
                    handle.seek(sent.size)
                    data = handle.read(min(budget, info.st_size - sent.size))
                    piece = Piece(root, relative, "append", sent.size, data)
                    sent.size += len(data)
                else:
                    if sent.whole_at is None or sent.inode != info.st_ino \
                            or sent.mtime != info.st_mtime_ns:
                        sent.version += 1  # a new whole copy of the file (or its first)
                        sent.whole_at = 0
                    start = sent.whole_at or 0
                    handle.seek(start)
                    data = handle.read(min(budget, max(0, info.st_size - start)))
                    end = start + len(data)
                    last = end >= info.st_size
                    piece = Piece(root, relative, "whole", start, data, sent.version, last)
                    sent.whole_at = None if last else end
                    if last:
                        sent.size = end
                sent.inode, sent.mtime = info.st_ino, info.st_mtime_ns
                if sent.whole_at is None:
                    sent.tail = _tail_digest(handle, sent.size)
        except OSError:
            return None
        return piece

    def _appended(self, handle: object, info: os.stat_result, sent: _Sent) -> bool:
        """True when the file only grew since it was sent: same file, longer, and the bytes
        just before what was sent are those sent."""
        if sent.inode != info.st_ino or info.st_size < sent.size:
            return False
        return sent.size == 0 or _tail_digest(handle, sent.size) == sent.tail


def _tail_digest(handle: object, end: int) -> bytes:
    start = max(0, end - _TAIL)
    handle.seek(start)  # type: ignore[attr-defined]
    return hashlib.blake2b(handle.read(end - start), digest_size=16).digest()  # type: ignore[attr-defined]


class TransferError(OSError):
    """A piece the driver refuses (a path leaving its root) or cannot write."""


@dataclass
class Inbox:
    """The driver's side: writes each source's shipments into ``roots`` (root name ->
    the run folder's path), in ``seq`` order."""

    roots: Mapping[str, str]
    _next: dict[str, int] = field(default_factory=dict)
    _held: dict[str, dict[int, Shipment]] = field(default_factory=dict)
    _parts: dict[tuple[str, str, str], tuple[int, str]] = field(default_factory=dict)

    def receive(self, source: str, shipment: Shipment | None) -> None:
        """Write ``shipment`` of ``source`` (one mlpipe worker's process), holding it until
        the shipments before it have arrived."""
        if shipment is None:
            return
        held = self._held.setdefault(source, {})
        held[shipment.seq] = shipment
        expected = self._next.get(source, 1)
        while expected in held:
            self._write(source, held.pop(expected))
            expected += 1
        self._next[source] = expected

    def close(self, source: str) -> None:
        """``source`` sends no more (its process ended or was lost): write what it sent, in
        order, past any gap, and drop its unfinished whole files."""
        held = self._held.pop(source, {})
        for seq in sorted(held):
            self._write(source, held[seq])
        self._next.pop(source, None)
        for key in [k for k in self._parts if k[0] == source]:
            _, part = self._parts.pop(key)
            with contextlib.suppress(OSError):
                os.unlink(part)

    def close_all(self) -> None:
        """:meth:`close` every source (the step ends)."""
        for source in {*self._held, *(key[0] for key in self._parts)}:
            self.close(source)

    def _write(self, source: str, shipment: Shipment) -> None:
        for piece in shipment.pieces:
            target = self._target(piece)
            target.parent.mkdir(parents=True, exist_ok=True)
            if piece.kind == "append":
                _append(target, piece.data)
                continue
            key = (source, piece.root, piece.path)
            known = self._parts.get(key)
            if known is None or known[0] != piece.version or piece.offset == 0:
                if known is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(known[1])
                part = f"{target}.mlpipe-part-{os.getpid()}-{abs(hash(source)) % 10**8}"
                with open(part, "wb"):
                    pass
                known = self._parts[key] = (piece.version, part)
            with open(known[1], "r+b") as handle:
                handle.seek(piece.offset)
                handle.write(piece.data)
            if piece.last:
                os.replace(known[1], target)
                del self._parts[key]

    def _target(self, piece: Piece) -> Path:
        base = self.roots.get(piece.root)
        parts = piece.path.split("/")
        if base is None or not piece.path or piece.path.startswith("/") \
                or any(part in ("", ".", "..") for part in parts):
            raise TransferError(f"a Dask worker sent a file outside the step's folders: "
                                f"{piece.root}/{piece.path}")
        target = Path(base, *parts)
        real = Path(os.path.realpath(target.parent))
        if real != Path(os.path.realpath(base)) and \
                Path(os.path.realpath(base)) not in real.parents:
            raise TransferError(f"{target}: its folder leads out of {base} (a link)")
        return target


def _append(target: Path, data: bytes) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


__all__ = ["SHIPMENT_BYTES", "Inbox", "Outbox", "Piece", "Shipment", "TransferError"]
