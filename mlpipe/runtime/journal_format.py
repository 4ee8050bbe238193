"""The bytes of a step's journal (:mod:`mlpipe.runtime.journal`): records, blocks, files.

A *record* describes one mini-batch's final outcome::

    index (q) status (B) total succeeded failed (III) segment (H) offset length (qq)
    rows CRC-32 (I) id length (H) | id | header length (I) | header

The index file is a sequence of records, each framed by its length and the CRC-32 of
its bytes. A segment file is a sequence of *blocks*: the magic ``MLJ2``, the record's
length and CRC-32, the record (its segment and offset are 0: a block's place is where it
is) and the mini-batch's rows. So every row block carries its own checksum, and the
index can be rebuilt from the segments alone (:func:`scan_segment`).

Appends go through :func:`append`, which reports where the bytes really landed (the
file offset after an ``O_APPEND`` write, not a count kept by the writer) and cuts what
it wrote when the write fails.
"""

from __future__ import annotations

import os
import stat
import struct
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from mlpipe.runtime.textio import DATA_ERRORS

STATUSES = ("Succeeded", "Failed", "Timeout", "ProcessDied")
OUTPUT_SEGMENT = 0xFFFF  # "rows are in the sealed append_row output"
DROPPED = 255  # status code of a record that forgets its id
SEALED = 254  # status code of the first record of a sealed index: offset = size, length = CRC

FRAME = struct.Struct("<II")  # index record: payload length, CRC-32 of the payload
BLOCK = struct.Struct("<4sII")  # segment block: magic, record length, CRC-32 of the record
MAGIC = b"MLJ2"
FIXED = struct.Struct("<qBIIIHqqIH")  # a record's fixed fields, in the order above
_HEADER_LEN = struct.Struct("<I")
NO_HEADER = _HEADER_LEN.pack(0)
MAX_RECORD = 1 << 24  # a larger length can only be damage
READ_CHUNK = 1 << 20


class Rec(NamedTuple):
    """One record: a mini-batch's outcome and where its rows are (see the module docstring)."""

    id: str
    number: int  # the mini-batch's index (its place in input order)
    code: int  # position in STATUSES, or DROPPED / SEALED
    total: int
    succeeded: int
    failed: int
    segment: int
    offset: int
    length: int
    header: str | None = None
    crc: int = 0  # CRC-32 of the rows


class JournalError(OSError):
    """The journal folder cannot be used (it is not a folder of this step, it is written by
    another process, or it cannot be written)."""

    def __str__(self) -> str:  # the message itself, even once naming() gave it a file name
        return str(self.args[0]) if self.args else "the journal cannot be used"


def encode(rec: Rec) -> bytes:
    key = rec.id.encode("utf-8", DATA_ERRORS)
    head = rec.header.encode("utf-8", DATA_ERRORS) if rec.header else b""
    return (FIXED.pack(rec.number, rec.code, rec.total, rec.succeeded, rec.failed, rec.segment,
                        rec.offset, rec.length, rec.crc, len(key))
            + key + _HEADER_LEN.pack(len(head)) + head)


def decode(payload: bytes) -> Rec:
    """The record in ``payload``; :class:`ValueError` saying why it cannot be one."""
    if len(payload) < FIXED.size + _HEADER_LEN.size:
        raise ValueError("too short")
    index, code, total, succeeded, failed, segment, offset, length, crc, key_length = \
        FIXED.unpack_from(payload)
    at = FIXED.size + key_length
    if at + _HEADER_LEN.size > len(payload):
        raise ValueError("its id runs past the record")
    (head_length,) = _HEADER_LEN.unpack_from(payload, at)
    if at + _HEADER_LEN.size + head_length != len(payload):
        raise ValueError("its length does not match its fields")
    try:
        mini_batch_id = payload[FIXED.size:at].decode("utf-8", DATA_ERRORS)
        header = payload[at + _HEADER_LEN.size:].decode("utf-8", DATA_ERRORS) or None
    except UnicodeDecodeError:
        raise ValueError("its id or header is not UTF-8") from None
    return Rec(mini_batch_id, index, code, total, succeeded, failed, segment, offset, length,
               header, crc)


def encode_pair(rec: Rec, segment: int, base: int) -> tuple[bytes, bytes, int]:
    """``rec`` as a segment holds it, written at ``base`` of ``segment`` (its block head:
    magic, length, CRC-32, then the record with segment and offset 0), as the index holds it
    (framed, pointing at its rows, right after that head), and that offset of its rows. One
    encoding of the id and header for both."""
    mini_batch_id, number, code, total, succeeded, failed, _, _, length, header, crc = rec
    key = mini_batch_id.encode("utf-8", DATA_ERRORS)
    if header:
        head = header.encode("utf-8", DATA_ERRORS)
        tail = key + _HEADER_LEN.pack(len(head)) + head
    else:
        tail = key + NO_HEADER
    size = FIXED.size + len(tail)
    offset = base + BLOCK.size + size
    block = FIXED.pack(number, code, total, succeeded, failed, 0, 0, length, crc, len(key)) + tail
    index = FIXED.pack(number, code, total, succeeded, failed, segment, offset, length, crc,
                       len(key)) + tail
    return (BLOCK.pack(MAGIC, size, zlib.crc32(block)) + block,
            FRAME.pack(size, zlib.crc32(index)) + index, offset)


_FIXED_FIELDS = ("number", "code", "total", "succeeded", "failed", "segment", "offset",
                 "length", "crc", "key_length")


def frame_uniform(columns: Mapping[str, Any], keys: bytes, key_length: int) -> bytes:
    """Index records of header-less records whose ids all have ``key_length`` bytes, framed:
    the bytes of ``frame(encode(rec))`` for each, back to back, built a column at a time
    (``columns``: the fixed fields by name, one entry per record, ``key_length`` aside;
    ``keys``: the ids back to back)."""
    import numpy as np  # noqa: PLC0415 - the journal's seal alone builds records in bulk

    count = len(columns["number"])
    fixed = np.empty(count, dtype=np.dtype([
        (name, "<" + code) for name, code in zip(_FIXED_FIELDS, ("i8", "u1", "u4", "u4", "u4",
                                                                  "u2", "i8", "i8", "u4", "u2"),
                                                 strict=True)]))
    assert fixed.itemsize == FIXED.size
    for name in _FIXED_FIELDS[:-1]:
        fixed[name] = columns[name]
    fixed["key_length"] = key_length
    width = FIXED.size + key_length + len(NO_HEADER)
    out = np.zeros((count, FRAME.size + width), dtype=np.uint8)
    out[:, FRAME.size:FRAME.size + FIXED.size] = fixed.view(np.uint8).reshape(count, FIXED.size)
    out[:, FRAME.size + FIXED.size:FRAME.size + FIXED.size + key_length] = \
        np.frombuffer(keys, dtype=np.uint8).reshape(count, key_length)  # NO_HEADER: zeros
    frames = np.empty(count, dtype=np.dtype([("length", "<u4"), ("crc", "<u4")]))
    frames["length"] = width
    record = FRAME.size + width
    payloads = map(out.reshape(-1).data.__getitem__,
                   map(slice, range(FRAME.size, count * record, record),
                       range(record, count * record + 1, record)))
    frames["crc"] = list(map(zlib.crc32, payloads))
    out[:, :FRAME.size] = frames.view(np.uint8).reshape(count, FRAME.size)
    return out.tobytes()


def frame(payload: bytes) -> bytes:
    """An index record: ``payload`` framed by its length and CRC-32."""
    return FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def block_head(payload: bytes) -> bytes:
    """What a segment block starts with: magic, ``payload`` (the record) framed; rows follow."""
    return BLOCK.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload


def invalid(rec: Rec) -> str | None:
    """Why a decoded record cannot be true, else ``None``."""
    if not rec.id:
        return "its mini-batch id is empty"
    if rec.code != DROPPED and rec.code >= len(STATUSES):
        return f"unknown status code {rec.code}"
    if rec.number < 0 or rec.offset < 0 or rec.length < 0:
        return "a negative index, offset or length"
    if rec.succeeded + rec.failed != rec.total:
        return f"{rec.succeeded} succeeded + {rec.failed} failed items is not {rec.total}"
    return None


@dataclass(frozen=True)
class Block:
    """A block found in a segment: its record (segment and offset filled in), where the
    block ends, and ``damage`` (``None``: the record and its rows pass their checks)."""

    rec: Rec | None  # None: the record itself is unreadable
    start: int
    end: int
    damage: str | None = None


def scan_segment(fd: int, number: int) -> Iterator[Block]:
    """Every block of the segment file ``fd`` in order, checked; unreadable bytes are
    reported as one damaged :class:`Block` each, and the scan goes on at the next block
    whose record passes its check. A block cut short by the file's end (a torn tail) ends
    the scan without a report."""
    size = os.fstat(fd).st_size
    pos = 0
    while pos < size:
        found = _block_at(fd, number, pos, size)
        if found is None:  # torn tail
            return
        if found.rec is not None:
            yield found
            pos = found.end
            continue
        resume = _next_block(fd, number, pos + 1, size)
        yield Block(None, pos, resume, f"bytes {pos}..{resume} are not a journal block")
        pos = resume


def _block_at(fd: int, number: int, pos: int, size: int) -> Block | None:
    """The block starting at ``pos``: ``None`` when it runs past the end of the file, a
    block with ``rec=None`` when no block starts there."""
    head = os.pread(fd, BLOCK.size, pos)
    if len(head) < BLOCK.size:
        return None if MAGIC.startswith(head[:len(MAGIC)]) else Block(None, pos, size)
    magic, length, crc = BLOCK.unpack(head)
    if magic != MAGIC or length > MAX_RECORD:
        return Block(None, pos, size)
    payload = os.pread(fd, length, pos + BLOCK.size)
    if len(payload) < length:
        return None
    if zlib.crc32(payload) != crc:
        return Block(None, pos, size)
    try:
        rec = decode(payload)
    except ValueError:
        return Block(None, pos, size)
    rows_at = pos + BLOCK.size + length
    rec = rec._replace(segment=number, offset=rows_at)
    end = rows_at + rec.length
    if end > size:
        return None
    reason = invalid(rec)
    if reason is None and crc32_of(fd, rows_at, rec.length) != rec.crc:
        reason = f"its rows (bytes {rows_at}..{end}) fail their checksum"
    return Block(rec, pos, end, reason)


def _next_block(fd: int, number: int, pos: int, size: int) -> int:
    """Where the next readable block starts at or after ``pos`` (``size``: none)."""
    while pos < size:
        window = os.pread(fd, READ_CHUNK + len(MAGIC), pos)
        at = window.find(MAGIC)
        while at >= 0:
            found = _block_at(fd, number, pos + at, size)
            if found is None or found.rec is not None:
                return pos + at
            at = window.find(MAGIC, at + 1)
        pos += READ_CHUNK
    return size


def crc32_of(fd: int, offset: int, length: int, crc: int = 0) -> int:
    """The CRC-32 of ``length`` bytes of ``fd`` at ``offset`` (-1 when the file is shorter)."""
    end = offset + length
    while offset < end:
        chunk = os.pread(fd, min(READ_CHUNK, end - offset), offset)
        if not chunk:
            return -1
        crc = zlib.crc32(chunk, crc)
        offset += len(chunk)
    return crc


def open_regular(path: Path, flags: int, *, follow: bool = False) -> int | None:
    """A descriptor of ``path`` if it is a regular file (not through a symlink unless
    ``follow``), else None."""
    # O_NONBLOCK: opening a FIFO planted in the folder must not wait for a writer
    flags |= os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def open_append(path: Path) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags, 0o644)
    except OSError as error:
        raise JournalError(f"{path}: cannot open the journal: {error.strerror or error}") from error


def append(fd: int, parts: Sequence[bytes | bytearray], path: Path | str) -> int:
    """Append ``parts`` (as one piece) to ``fd``, opened with ``O_APPEND``; return the offset
    where the first byte really landed. On an error what was written is cut off and the
    error re-raised; bytes of another writer between two pieces of a partial write raise
    :class:`JournalError`."""
    views = [memoryview(part) for part in parts if part]
    start = end = -1
    try:
        while views:
            written = os.writev(fd, views)
            landed = os.lseek(fd, 0, os.SEEK_CUR) - written
            if start < 0:
                start = landed
            elif landed != end:
                raise JournalError(f"{path}: another process appended to it while this "
                                   f"one wrote (at byte {end}); one writer per journal")
            end = landed + written
            views = _advance(views, written)
    except BaseException as error:
        if start >= 0:
            os.ftruncate(fd, start)
        if isinstance(error, OSError) and error.filename is None:
            error.filename = str(path)  # write() errors such as ENOSPC name no file
        raise
    return start if start >= 0 else os.lseek(fd, 0, os.SEEK_END)


def _advance(views: list[memoryview], written: int) -> list[memoryview]:
    while views and written >= len(views[0]):
        written -= len(views.pop(0))
    if views and written:
        views[0] = views[0][written:]
    return views


__all__ = ["BLOCK", "DROPPED", "FIXED", "FRAME", "MAGIC", "MAX_RECORD", "NO_HEADER",
           "OUTPUT_SEGMENT", "SEALED", "STATUSES", "Block", "JournalError", "Rec", "append",
           "block_head", "crc32_of", "decode", "encode", "encode_pair", "frame", "invalid",
           "open_append", "open_regular", "scan_segment"]
