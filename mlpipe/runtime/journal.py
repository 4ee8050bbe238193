"""The journal of finished mini-batches: append-only row segments plus an index.

A step's state folder holds ``journal/index`` and, while the step runs, a few
``journal/segment-NNNN`` files. When a mini-batch's last attempt ends, the driver
(the only writer) appends its append_row text to the current segment, then one
binary record to the index: ``(id, index, status, item counts, segment number,
offset, length, header)``, framed by its length and a CRC-32. A mini-batch counts
as finished only once its index record is complete, so a process killed at any
instant loses no finished mini-batch and duplicates none: rows written without
their record are cut off on the next open, and a torn last record is dropped
(that mini-batch runs again). Bytes are handed to the kernel at once (a killed
process loses nothing) but not fsync'ed per mini-batch: protection is against
crashes, not power loss, as documented in docs/runtime.md.

At the end of the step :meth:`Journal.write` writes the append_row output in
input order and *seals* the journal: the index is rewritten so that every
record points into that output (segment ``OUTPUT_SEGMENT``, checked by the
output's size and CRC-32 in the index's first record) and the segments are
deleted. What stays is one index record per mini-batch. The switch is two-phase
(``index.next`` written, output renamed, ``index.next`` renamed), so a kill
between any two steps leaves either the old or the new state whole.

Nothing read back is trusted: the index holds segment *numbers*, never paths
(the output's path comes from the plan); every record is checked (CRC, field
ranges, counts, rows inside an existing regular segment file of this folder,
opened without following symlinks, or inside an unchanged sealed output), and a
record that fails is ignored with a warning naming the file, so its mini-batch
runs again. A later record for the same id supersedes an earlier one;
:meth:`Journal.drop` writes a record that forgets an id (rerun).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
import struct
import zlib
from array import array
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from mlpipe.runtime.faults import naming
from mlpipe.runtime.id_table import IdTable
from mlpipe.runtime.textio import DATA_ERRORS

JOURNAL_DIR = "journal"
INDEX_FILE = "index"
NEXT_INDEX_FILE = "index.next"  # a sealed index waiting for its output to be renamed in place
LEGACY_DIR = "mini_batches"  # part files + finished.jsonl of earlier versions: never read
SEGMENT_BYTES = 256 << 20  # a new segment file starts past this size
STATUSES = ("Succeeded", "Failed", "Timeout", "ProcessDied")
OUTPUT_SEGMENT = 0xFFFF  # "rows are in the sealed append_row output"
_DROPPED = 255  # status code of a record that forgets its id
_SEALED = 254  # status code of the first record of a sealed index: offset = size, length = CRC

_FRAME = struct.Struct("<II")  # payload length, CRC-32 of the payload
# mini-batch index, status, total, succeeded, failed, segment, offset, length, id length
_FIXED = struct.Struct("<qBIIIHqqH")
_HEADER_LEN = struct.Struct("<I")
_NO_HEADER = _HEADER_LEN.pack(0)
_MAX_RECORD = 1 << 24  # a larger length can only be damage
_SEGMENT_NAME = re.compile(r"segment-(\d{4,5})")
_log = logging.getLogger("mlpipe.runtime")


class JournalError(OSError):
    """The journal folder cannot be used (it is not a folder of this step, or unwritable)."""


@dataclass(frozen=True)
class Finished:
    """The outcome of a mini-batch's last attempt, as the journal records it.

    ``status`` is that attempt's status (``Succeeded``, ``Failed``, ``Timeout`` or
    ``ProcessDied``); ``header`` the DataFrame header line its rows need, if any.
    """

    id: str
    index: int
    status: str
    total: int
    succeeded: int
    failed: int
    header: str | None = None

    @property
    def complete(self) -> bool:
        """Succeeded with every item: a ``--failed-only`` rerun keeps it."""
        return self.status == "Succeeded" and self.failed == 0


class Journal:
    """One step's finished mini-batches (``<state_dir>/journal``); the driver writes it.

    ``resume=False`` starts afresh (the folder is cleared); ``resume=True`` keeps the
    valid records of an earlier run, compacts the index and cuts torn tails.
    ``rows_file`` is the step's append_row output (``None``: summary-only step).
    ``read_only=True`` (implies resume) only reads: for ``job show``, ``job debug`` and
    tests looking at a journal another process may be writing (without ``rows_file``
    it still counts sealed records, but cannot give their rows).
    """

    def __init__(self, state_dir: str | Path, *, resume: bool, rows_file: Path | None = None,
                 read_only: bool = False, logger: logging.Logger | None = None):
        self.root = Path(state_dir) / JOURNAL_DIR
        self.rows_file = rows_file  # the append_row output :meth:`write` makes and seals
        self.log = logger or _log
        self.read_only = read_only
        self._seal: tuple[int, int] | None = None  # (size, CRC-32) of the sealed output
        self._output_ok: bool | None = None  # does rows_file match the seal (checked lazily)
        self.problems: list[str] = []  # what was ignored when reading, one line each
        self._ids = IdTable()  # id -> slot: position in the arrays below
        self._index = array("q")
        self._status = array("B")
        self._counts = array("I")  # total, succeeded, failed per slot
        self._segment = array("H")
        self._offset = array("q")
        self._length = array("q")
        self._fresh = array("B")  # 1: recorded by this run (rows written even if it failed)
        self._seen = array("B")  # 1: recorded or reused by this run (``write()`` orders them)
        self._headers: dict[int, str] = {}
        self._rows_out = bytearray()  # rows committed, not yet written (:meth:`flush`)
        self._records_out = bytearray()  # their index records
        self._committed: list[tuple[Finished, int, int]] = []  # (entry, offset, length) of those
        self._readers: dict[int, int] = {}  # segment number -> read descriptor
        self._index_fd = self._segment_fd = -1
        self._segment_no = 0
        self._end = 0  # bytes in the current segment
        self._index_end = 0
        self._records_kept = 0  # records read that were taken as they are (none superseded)
        if read_only or resume:
            self._load()
        if read_only:
            return
        legacy = Path(state_dir) / LEGACY_DIR
        if legacy.is_symlink() or legacy.is_file():
            legacy.unlink()
        else:
            shutil.rmtree(legacy, ignore_errors=True)
        if resume:
            self._compact()
        else:
            self._clear()
        self._open_for_append()

    # -- queries -----------------------------------------------------------------------
    def __len__(self) -> int:
        self.flush()
        return len(self._ids)

    def __contains__(self, mini_batch_id: object) -> bool:
        self.flush()
        return mini_batch_id in self._ids

    def get(self, mini_batch_id: str) -> Finished | None:
        """The last recorded outcome of ``mini_batch_id`` (any status), else ``None``."""
        self.flush()
        slot = self._ids.find(mini_batch_id)
        return None if slot < 0 else self._entry(mini_batch_id, slot)

    def done(self, mini_batch_id: str) -> Finished | None:
        """The recorded outcome of ``mini_batch_id`` if it succeeded (a resume skips it)."""
        self.flush()
        slot = self._ids.find(mini_batch_id)
        if slot < 0 or self._status[slot] != 0:
            return None
        return self._entry(mini_batch_id, slot)

    def reuse(self, mini_batch_id: str, index: int) -> Finished | None:
        """Like :meth:`done`, and a success found counts as this run's mini-batch ``index``
        (:meth:`write` without an order places its rows there)."""
        slot = self._ids.find(mini_batch_id)  # what is gathered, not written yet, is not reused
        if slot < 0 or self._status[slot] != 0:
            return None
        self._seen[slot] = 1
        self._index[slot] = index
        return self._entry(mini_batch_id, slot)

    def entries(self) -> Iterator[Finished]:
        """The last outcome of every recorded mini-batch, in the order first recorded."""
        self.flush()
        for slot in self._ids.slots():
            yield self._entry(self._ids.key(slot), slot)

    def rows(self, mini_batch_id: str) -> str | None:
        """The append_row text recorded for ``mini_batch_id`` (``None``: not recorded)."""
        self.flush()
        slot = self._ids.find(mini_batch_id)
        if slot < 0:
            return None
        if not self._length[slot]:
            return ""
        chunks = self._read(self._segment[slot], self._offset[slot], self._length[slot])
        return b"".join(chunks).decode("utf-8", DATA_ERRORS)

    # -- writing (the driver) ----------------------------------------------------------
    def commit(self, entry: Finished, rows: str | None) -> Finished:
        """Record ``entry`` as ``entry.id``'s final outcome: its rows, then its index record.

        Commits are gathered and written together by :meth:`flush` (rows first, then the
        records: one write each), which every other method calls first; until then a
        killed process loses them, and their mini-batches run again on resume.
        """
        self._writable()
        if entry.status not in STATUSES:
            raise ValueError(f"status {entry.status!r} is not one of {', '.join(STATUSES)}")
        data = rows.encode("utf-8", DATA_ERRORS) if rows else b""
        if data and self._segment_fd < 0:
            self._open_segment(self._segment_no)
        if data and self._end + len(self._rows_out) + len(data) > SEGMENT_BYTES \
                and self._end + len(self._rows_out):
            self.flush()
            self._next_segment()
        offset = self._end + len(self._rows_out)
        self._rows_out += data
        self._records_out += _frame(_encode(
            entry.id, entry.index, STATUSES.index(entry.status), entry.total, entry.succeeded,
            entry.failed, self._segment_no, offset, len(data), entry.header))
        self._committed.append((entry, offset, len(data)))
        return entry

    def flush(self) -> None:
        """Write the gathered commits: their rows to the current segment, then their index
        records. On an error nothing of them is recorded (what was written is cut off)
        and the error is raised."""
        if not self._committed:
            return
        rows, records, committed = self._rows_out, self._records_out, self._committed
        self._rows_out, self._records_out, self._committed = bytearray(), bytearray(), []
        if rows:
            with naming(self.root / _segment_name(self._segment_no)):
                _append(self._segment_fd, rows, self._end)
            self._end += len(rows)
        with naming(self.root / INDEX_FILE):
            _append(self._index_fd, records, self._index_end)
        self._index_end += len(records)
        segment = self._segment_no
        for entry, offset, length in committed:
            slot = self._remember(entry.id, entry.index, STATUSES.index(entry.status),
                                  entry.total, entry.succeeded, entry.failed, segment, offset,
                                  length, entry.header)
            self._fresh[slot] = self._seen[slot] = 1

    def drop(self, mini_batch_id: str) -> bool:
        """Forget ``mini_batch_id`` (a rerun will run it again); ``False`` when not recorded."""
        self._writable()
        self.flush()
        slot = self._ids.remove(mini_batch_id)
        if slot < 0:
            return False
        self._headers.pop(slot, None)
        self._append_record(mini_batch_id, self._index[slot], _DROPPED, 0, 0, 0, 0, 0, 0, None)
        return True

    def write(self, order: Iterable[str] | None = None) -> int:
        """Write the rows of the mini-batch ids ``order`` into ``rows_file`` (temporary file,
        then rename) and seal the journal into it; return the rows' bytes.

        Without ``order``, the mini-batches this run recorded or :meth:`reuse`\\ d are
        written, in mini-batch index order (input order). Adjacent rows are copied in
        one piece. Rows of a mini-batch that failed in an earlier run (and was not run
        again by this one) are left out, as a resumed run always did; a succeeded
        mini-batch not in ``order`` is forgotten."""
        self._writable()
        if self.rows_file is None:
            raise JournalError(f"{self.root}: this step has no append_row output")
        self.flush()
        target = self.rows_file
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(target.name + ".mlpipe-tmp")
        slots = self._input_order() if order is None else array(
            "i", (slot for slot in map(self._ids.find, order) if slot >= 0))
        placed = array("q", [-1]) * len(self._index)  # slot -> offset of its rows in target
        with naming(target), _removed_on_error(temporary), open(temporary, "wb") as out:
            size = crc = 0
            header = next((self._headers[slot] for slot in slots if slot in self._headers),
                          None) if self._headers else None
            if header:
                data = header.encode("utf-8", DATA_ERRORS)
                out.write(data)
                size, crc = len(data), zlib.crc32(data)
            start = size
            blocks = _Blocks(self)
            run: list[int] = []  # [segment, start, end] of the rows being gathered
            lengths, status, fresh = self._length, self._status, self._fresh
            segments, offsets = self._segment, self._offset
            for slot in slots:
                if slot < 0 or not lengths[slot] or placed[slot] >= 0 or \
                        (status[slot] and not fresh[slot]):
                    continue
                segment, offset, length = segments[slot], offsets[slot], lengths[slot]
                placed[slot] = size
                size += length
                if run and run[0] == segment and run[2] == offset:
                    run[2] += length
                    continue
                if run:
                    crc = _copy(blocks.read(run[0], run[1], run[2] - run[1]), out, crc)
                run = [segment, offset, offset + length]
            if run:
                crc = _copy(blocks.read(run[0], run[1], run[2] - run[1]), out, crc)
        self._seal_into(temporary, placed, size, crc)
        return size - start

    def _input_order(self) -> array[int]:
        """The slots this run recorded or reused, by mini-batch index (then slot); -1 where
        an index has none."""
        index = self._index
        slots = array("i", self._ids.slots(among=self._seen))
        top = max(map(index.__getitem__, slots), default=-1) + 1
        if top <= 4 * len(slots):  # dense: each slot placed at its index, no sort
            by_index = array("i", [-1]) * top
            for slot in slots:
                if by_index[index[slot]] >= 0:
                    break  # two at one index (a caller's own mini-batches): sort instead
                by_index[index[slot]] = slot
            else:
                return by_index
        return array("i", sorted(slots, key=index.__getitem__))

    def _seal_into(self, temporary: Path, placed: array[int], size: int, crc: int) -> None:
        """Point every record at its rows in the new output, then rename both into place."""
        assert self.rows_file is not None
        forget = []  # succeeded, but their rows are not in the output: they run again
        segments, offsets, lengths, status = self._segment, self._offset, self._length, \
            self._status
        for slot in self._ids.slots(among=bytes(map(bool, lengths))):
            where = placed[slot]
            if where >= 0:
                segments[slot], offsets[slot] = OUTPUT_SEGMENT, where
            elif status[slot] == 0:
                forget.append(slot)
            else:  # failed in an earlier run: keep its status, its rows were left out
                lengths[slot] = 0
        for slot in forget:
            self._ids.remove(self._ids.key(slot))
            self._headers.pop(slot, None)
        self._seal = (size, crc)
        next_index = self.root / NEXT_INDEX_FILE
        self._write_index(next_index)
        os.replace(temporary, self.rows_file)
        os.replace(next_index, self.root / INDEX_FILE)
        self._output_ok = True
        self._close_files()
        for entry in os.scandir(self.root):
            if entry.name != INDEX_FILE:
                os.unlink(entry.path)
        self._segment_no = self._end = 0
        self._open_for_append()

    def close(self) -> None:
        """Write what is gathered (:meth:`flush`) and close the files (idempotent). A write
        that fails is logged: those mini-batches are not recorded and run again on resume."""
        pending = len(self._committed)
        try:
            self.flush()
        except OSError as error:
            self.log.error("%s: %d finished mini-batch(es) could not be recorded: %s",
                           self.root, pending, error)
        finally:
            self._close_files()

    def _close_files(self) -> None:
        for fd in (self._segment_fd, self._index_fd, *self._readers.values()):
            if fd >= 0:
                os.close(fd)
        self._segment_fd = self._index_fd = -1
        self._readers.clear()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------------
    def _entry(self, mini_batch_id: str, slot: int) -> Finished:
        total, succeeded, failed = self._counts[3 * slot:3 * slot + 3]
        return Finished(mini_batch_id, self._index[slot], STATUSES[self._status[slot]], total,
                        succeeded, failed, self._headers.get(slot))

    def _remember(self, mini_batch_id: str, index: int, code: int, total: int, succeeded: int,
                  failed: int, segment: int, offset: int, length: int,
                  header: str | None) -> int:
        slot, new = self._ids.find_or_add(mini_batch_id)
        if new:
            self._fresh.append(0)
            self._seen.append(0)
            self._index.append(index)
            self._status.append(code)
            self._counts.extend((total, succeeded, failed))
            self._segment.append(segment)
            self._offset.append(offset)
            self._length.append(length)
        else:
            self._index[slot], self._status[slot] = index, code
            self._counts[3 * slot:3 * slot + 3] = array("I", (total, succeeded, failed))
            self._segment[slot], self._offset[slot], self._length[slot] = segment, offset, length
        if header:
            self._headers[slot] = header
        else:
            self._headers.pop(slot, None)
        return slot

    def _append_record(self, mini_batch_id: str, index: int, code: int, total: int,
                       succeeded: int, failed: int, segment: int, offset: int, length: int,
                       header: str | None) -> None:
        record = _frame(_encode(mini_batch_id, index, code, total, succeeded, failed, segment,
                                offset, length, header))
        with naming(self.root / INDEX_FILE):
            _append(self._index_fd, record, self._index_end)
        self._index_end += len(record)

    def _writable(self) -> None:
        if self.read_only or self._index_fd < 0:
            raise JournalError(f"{self.root}: the journal is not open for writing")

    # reading back --------------------------------------------------------------------
    def _load(self) -> None:
        if not self._usable_folder():
            return
        path = self.root / INDEX_FILE
        pending = self.root / NEXT_INDEX_FILE
        if os.path.lexists(pending):  # killed while sealing: was the output renamed in place?
            if self._seal_of(pending) is not None and self._output_matches():
                if self.read_only:
                    path = pending
                else:
                    os.replace(pending, path)
            else:
                self._seal = None
                self._output_ok = None
                if not self.read_only:
                    pending.unlink()
        fd = _open_regular(path, os.O_RDONLY)
        if fd is None:
            if os.path.lexists(path):
                self._problem(f"{path}: not a regular file; ignored (every mini-batch runs again)")
            return
        sizes: dict[int, int | None] = {}
        with os.fdopen(fd, "rb") as handle:
            number = 0
            while True:
                frame = handle.read(_FRAME.size)
                if not frame:
                    break
                number += 1
                if len(frame) < _FRAME.size:
                    self._problem(f"{path}: record {number} is cut short (torn tail); ignored")
                    break
                length, crc = _FRAME.unpack(frame)
                payload = handle.read(length) if length <= _MAX_RECORD else b""
                if length > _MAX_RECORD or len(payload) < length or zlib.crc32(payload) != crc:
                    self._problem(f"{path}: record {number} is damaged or torn; it and the "
                                  "records after it are ignored (their mini-batches run again)")
                    break
                self._load_record(path, number, payload, sizes)

    def _seal_of(self, path: Path) -> tuple[int, int] | None:
        """The (size, CRC-32) in the first record of the index ``path``, if it is a seal."""
        fd = _open_regular(path, os.O_RDONLY)
        if fd is None:
            return None
        with os.fdopen(fd, "rb") as handle:
            frame = handle.read(_FRAME.size)
            if len(frame) < _FRAME.size:
                return None
            length, crc = _FRAME.unpack(frame)
            payload = handle.read(min(length, _MAX_RECORD))
        try:
            fields = _decode(payload) if zlib.crc32(payload) == crc else None
        except ValueError:
            return None
        if fields is None or fields[2] != _SEALED:
            return None
        self._seal = (fields[7], fields[8])
        return self._seal

    def _output_matches(self) -> bool:
        """Does ``rows_file`` have the sealed size and CRC-32 (computed once)?"""
        if self._output_ok is None:
            self._output_ok = False
            fd = self._output_reader()
            if fd is not None and self._seal is not None \
                    and os.fstat(fd).st_size == self._seal[0]:
                crc = 0
                while chunk := os.read(fd, 1 << 20):
                    crc = zlib.crc32(chunk, crc)
                self._output_ok = crc == self._seal[1]
        return self._output_ok

    def _output_reader(self) -> int | None:
        # the output's path comes from the plan, not from the state folder: links are followed
        if self.rows_file is None:
            return None
        return _open_regular(self.rows_file, os.O_RDONLY, follow=True)

    def _load_record(self, path: Path, number: int, payload: bytes,
                     sizes: dict[int, int | None]) -> None:
        try:
            fields = _decode(payload)
        except ValueError as error:
            self._problem(f"{path}: record {number}: {error}; ignored")
            return
        mini_batch_id, index, code, total, succeeded, failed, segment, offset, length, header = \
            fields
        if code == _SEALED:
            if number == 1 and self._seal is None:
                self._seal = (offset, length)
            elif number != 1:
                self._problem(f"{path}: record {number}: a seal record after the first; ignored")
            return
        reason = _invalid(fields)
        if reason is None and length and segment == OUTPUT_SEGMENT:
            size = self._output_size()
            if size is None:
                reason = f"its rows are in the append_row output {self.rows_file}, which is " \
                         "missing or changed since the step ended"
            elif offset + length > size:
                reason = f"its rows end at byte {offset + length} of the append_row output " \
                         f"({size} bytes)"
        elif reason is None and length:
            if segment not in sizes:
                sizes[segment] = self._segment_size(segment)
            size = sizes[segment]
            if size is None:
                reason = f"its rows are in segment {segment}, which is missing or not a file"
            elif offset + length > size:
                reason = f"its rows end at byte {offset + length} of segment {segment} " \
                         f"({size} bytes)"
        if reason is not None:
            self._problem(f"{path}: record {number} (mini-batch {mini_batch_id!r}): {reason}; "
                          "ignored (that mini-batch runs again)")
            self._headers.pop(self._ids.remove(mini_batch_id), None)
            return
        if code == _DROPPED:
            self._headers.pop(self._ids.remove(mini_batch_id), None)
            return
        self._records_kept += 1
        self._remember(mini_batch_id, index, code, total, succeeded, failed, segment, offset,
                       length, header)

    def _usable_folder(self) -> bool:
        try:
            mode = os.lstat(self.root).st_mode
        except FileNotFoundError:
            return False
        if not stat.S_ISDIR(mode):
            self._problem(f"{self.root}: not a folder; ignored (every mini-batch runs again)")
            return False
        return True

    def _output_size(self) -> int | None:
        """The sealed output's size if its rows can be trusted, else ``None``."""
        if self._seal is None:
            return None
        if self.rows_file is None:  # a reader that only counts (it cannot read the rows)
            return self._seal[0] if self.read_only else None
        return self._seal[0] if self._output_matches() else None

    def _segment_size(self, segment: int) -> int | None:
        fd = self._reader(segment)
        return None if fd is None else os.fstat(fd).st_size

    def _reader(self, segment: int) -> int | None:
        fd = self._readers.get(segment)
        if fd is None:
            fd = self._output_reader() if segment == OUTPUT_SEGMENT \
                else _open_regular(self.root / _segment_name(segment), os.O_RDONLY)
            if fd is None:
                return None
            self._readers[segment] = fd
        return fd

    def _read(self, segment: int, offset: int, length: int) -> Iterator[bytes]:
        fd = self._reader(segment)
        where = (self.rows_file or "the append_row output (rows_file not given)") \
            if segment == OUTPUT_SEGMENT else self.root / _segment_name(segment)
        if fd is None:
            raise JournalError(f"{where}: missing; the journal changed under the running step")
        end = offset + length
        while offset < end:
            chunk = os.pread(fd, min(1 << 20, end - offset), offset)
            if not chunk:
                raise JournalError(f"{where}: shorter than the journal says; it changed under "
                                   "the running step")
            offset += len(chunk)
            yield chunk

    def _problem(self, message: str) -> None:
        self.problems.append(message)
        self.log.warning("%s", message)

    # opening for writing -------------------------------------------------------------
    def _clear(self) -> None:
        if self.root.is_symlink() or (self.root.exists() and not self.root.is_dir()):
            self.root.unlink()
        shutil.rmtree(self.root, ignore_errors=True)
        self._ids.clear()
        self._headers.clear()

    def _compact(self) -> None:
        """Rewrite the index with the live records only, cut each segment after its last
        recorded rows and remove every other file of the folder."""
        if self.root.is_symlink() or (self.root.exists() and not self.root.is_dir()):
            self.root.unlink()
        self.root.mkdir(parents=True, exist_ok=True)
        if self.problems or self._records_kept != len(self._ids) \
                or not os.path.isfile(self.root / INDEX_FILE):
            temporary = self.root / (INDEX_FILE + ".tmp")
            self._write_index(temporary)
            os.replace(temporary, self.root / INDEX_FILE)
        ends: dict[int, int] = {}
        for slot in self._ids.slots():
            segment, length = self._segment[slot], self._length[slot]
            if length and segment != OUTPUT_SEGMENT:
                ends[segment] = max(ends.get(segment, 0), self._offset[slot] + length)
        for fd in self._readers.values():
            os.close(fd)
        self._readers.clear()
        for entry in os.scandir(self.root):
            match = _SEGMENT_NAME.fullmatch(entry.name)
            number = int(match.group(1)) if match else -1
            if entry.name == INDEX_FILE or (number in ends and not entry.is_symlink()
                                            and entry.name == _segment_name(number)):
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        for number, end in ends.items():
            writer = _open_regular(self.root / _segment_name(number), os.O_WRONLY)
            if writer is not None:
                try:
                    if os.fstat(writer).st_size > end:
                        os.ftruncate(writer, end)  # rows written without their record
                finally:
                    os.close(writer)
        self._segment_no = max(ends, default=0)

    def _write_index(self, path: Path) -> None:
        """The live records (after the seal record, if any points into the output)."""
        if os.path.lexists(path):
            path.unlink()
        with open(path, "wb") as handle:
            sealed = self._seal is not None and any(
                self._segment[slot] == OUTPUT_SEGMENT and self._length[slot]
                for slot in self._ids.slots())
            if sealed:
                assert self._seal is not None
                handle.write(_frame(_encode("", 0, _SEALED, 0, 0, 0, OUTPUT_SEGMENT,
                                            self._seal[0], self._seal[1], None)))
            ids, counts, headers = self._ids, self._counts, self._headers
            index, status, segment = self._index, self._status, self._segment
            offset, length = self._offset, self._length
            pack, frame, crc32 = _FIXED.pack, _FRAME.pack, zlib.crc32
            chunk: list[bytes] = []
            for slot in ids.slots():
                key = ids.raw(slot)
                header = headers.get(slot)
                if header is None:  # the usual record: packed here, as _encode_raw does
                    payload = pack(index[slot], status[slot], counts[3 * slot],
                                   counts[3 * slot + 1], counts[3 * slot + 2], segment[slot],
                                   offset[slot], length[slot], len(key)) + key + _NO_HEADER
                else:
                    payload = _encode_raw(key, index[slot], status[slot], counts[3 * slot],
                                          counts[3 * slot + 1], counts[3 * slot + 2],
                                          segment[slot], offset[slot], length[slot], header)
                chunk.append(frame(len(payload), crc32(payload)))
                chunk.append(payload)
                if len(chunk) >= 8192:
                    handle.write(b"".join(chunk))
                    chunk.clear()
            handle.write(b"".join(chunk))

    def _open_for_append(self) -> None:
        """Open the index for appending; the segment opens with the first rows."""
        self.root.mkdir(parents=True, exist_ok=True)
        self._index_fd = _open_append(self.root / INDEX_FILE)
        self._index_end = os.fstat(self._index_fd).st_size

    def _next_segment(self) -> None:
        os.close(self._segment_fd)
        self._segment_fd = -1
        self._open_segment(self._segment_no + 1)

    def _open_segment(self, number: int) -> None:
        if number >= OUTPUT_SEGMENT:
            raise JournalError(f"{self.root}: more than {OUTPUT_SEGMENT:,} segments")
        self._segment_no = number
        self._segment_fd = _open_append(self.root / _segment_name(number))
        self._end = os.fstat(self._segment_fd).st_size


def finished_count(state_dir: str | Path) -> int:
    """How many mini-batches the journal under ``state_dir`` records now (read only)."""
    journal = Journal(state_dir, resume=True, read_only=True, logger=logging.getLogger("null"))
    try:
        return len(journal)
    finally:
        journal.close()


def _segment_name(number: int) -> str:
    return f"segment-{number:04d}"


class _Blocks:
    """Rows read through a few cached 1 MB blocks: mini-batches finish nearly in input order,
    so writing the output costs one read per block, not one per mini-batch."""

    SIZE = 1 << 20
    KEEP = 4

    def __init__(self, journal: Journal):
        self._journal = journal
        self._cache: list[tuple[int, int, bytes]] = []  # (segment, start, data), newest last

    def read(self, segment: int, offset: int, length: int) -> Iterator[bytes]:
        end = offset + length
        for block_segment, start, data in reversed(self._cache):
            if block_segment == segment and start <= offset and end <= start + len(data):
                return iter((data[offset - start:end - start],))
        fd = self._journal._reader(segment)
        if length <= self.SIZE // 2 and fd is not None:
            start = max(0, offset - self.SIZE // 4)  # rows a little behind come from it too
            data = os.pread(fd, self.SIZE, start)
            if end <= start + len(data):
                self._cache = [*self._cache[1 - self.KEEP:], (segment, start, data)]
                return iter((data[offset - start:end - start],))
        return self._journal._read(segment, offset, length)  # large rows, or an error to raise


@contextmanager
def _removed_on_error(path: Path) -> Iterator[None]:
    """Delete the half-written ``path`` when the block fails (a full disk gets its space back)."""
    try:
        yield
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def _frame(payload: bytes) -> bytes:
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def _encode(mini_batch_id: str, index: int, code: int, total: int, succeeded: int, failed: int,
            segment: int, offset: int, length: int, header: str | None) -> bytes:
    return _encode_raw(mini_batch_id.encode("utf-8", DATA_ERRORS), index, code, total,
                       succeeded, failed, segment, offset, length, header)


def _encode_raw(key: bytes, index: int, code: int, total: int, succeeded: int, failed: int,
                segment: int, offset: int, length: int, header: str | None) -> bytes:
    if not header:
        return (_FIXED.pack(index, code, total, succeeded, failed, segment, offset, length,
                            len(key)) + key + _NO_HEADER)
    head = header.encode("utf-8", DATA_ERRORS)
    return (_FIXED.pack(index, code, total, succeeded, failed, segment, offset, length, len(key))
            + key + _HEADER_LEN.pack(len(head)) + head)


def _decode(payload: bytes) -> tuple[str, int, int, int, int, int, int, int, int, str | None]:
    if len(payload) < _FIXED.size + _HEADER_LEN.size:
        raise ValueError("too short")
    index, code, total, succeeded, failed, segment, offset, length, key_length = \
        _FIXED.unpack_from(payload)
    at = _FIXED.size + key_length
    if at + _HEADER_LEN.size > len(payload):
        raise ValueError("its id runs past the record")
    (head_length,) = _HEADER_LEN.unpack_from(payload, at)
    if at + _HEADER_LEN.size + head_length != len(payload):
        raise ValueError("its length does not match its fields")
    try:
        mini_batch_id = payload[_FIXED.size:at].decode("utf-8", DATA_ERRORS)
        header = payload[at + _HEADER_LEN.size:].decode("utf-8", DATA_ERRORS) or None
    except UnicodeDecodeError:
        raise ValueError("its id or header is not UTF-8") from None
    return mini_batch_id, index, code, total, succeeded, failed, segment, offset, length, header


def _invalid(fields: tuple[str, int, int, int, int, int, int, int, int, str | None]) -> str | None:
    """Why a decoded record cannot be true, else ``None``."""
    mini_batch_id, index, code, total, succeeded, failed, _segment, offset, length, _header = \
        fields
    if not mini_batch_id:
        return "its mini-batch id is empty"
    if code != _DROPPED and code >= len(STATUSES):
        return f"unknown status code {code}"
    if index < 0 or offset < 0 or length < 0:
        return "a negative index, offset or length"
    if succeeded + failed != total:
        return f"{succeeded} succeeded + {failed} failed items is not {total}"
    return None


def _open_regular(path: Path, flags: int, *, follow: bool = False) -> int | None:
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


def _open_append(path: Path) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags, 0o644)
    except OSError as error:
        raise JournalError(f"{path}: cannot open the journal: {error.strerror or error}") from error


def _append(fd: int, data: bytes | bytearray, end: int) -> None:
    """Append all of ``data`` at ``end``; on an error cut what was written and re-raise."""
    view = memoryview(data)
    try:
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except BaseException:
        os.ftruncate(fd, end)
        raise


def _copy(chunks: Iterable[bytes], out: BinaryIO, crc: int) -> int:
    """Write ``chunks`` to ``out``; return the CRC-32 carried on over them."""
    for chunk in chunks:
        out.write(chunk)
        crc = zlib.crc32(chunk, crc)
    return crc


def bookkeeping(step_dir: str | Path) -> tuple[int, int]:
    """(files and folders, bytes on disk) a step folder holds outside ``outputs/`` and ``logs/``."""
    count = size = 0
    for root, dirs, files in os.walk(step_dir):
        if Path(root) == Path(step_dir):
            dirs[:] = [d for d in dirs if d not in ("outputs", "logs")]
        for name in dirs + files:
            info = os.lstat(os.path.join(root, name))
            count += 1
            size += max(info.st_size, info.st_blocks * 512)
    return count, size


__all__ = ["Finished", "Journal", "JournalError", "STATUSES", "bookkeeping", "finished_count"]
