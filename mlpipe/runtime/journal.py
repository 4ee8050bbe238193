"""The journal of finished mini-batches: append-only row segments plus an index.

A step's state folder holds ``journal/index`` and, while the step runs, a few
``journal/segment-NNNN`` files. When a mini-batch's last attempt ends, the driver
(the only writer: it holds ``journal.lock`` beside the folder, an OS lock) appends one
*block* to the current segment: the mini-batch's record (id, index, status, item counts,
the CRC-32 of its rows, the DataFrame header), framed by its length and its own CRC-32,
then its append_row rows. Then it appends the same record to the index, with the
segment number and the offset where the rows really landed (read back from the file,
never counted by the writer). The byte formats are in :mod:`mlpipe.runtime.journal_format`.

The mini-batches that end together (what the driver found at one wake-up) are written
together by :meth:`Journal.flush`: their blocks in one write, then their index records
in one write, each record's offset taken from where that one write landed. Per mini-batch
the journal keeps no Python object in memory: the ids in an
:class:`~mlpipe.runtime.id_table.IdTable`, the rest in typed arrays.

A mini-batch counts as finished once its index record is complete; rows written without
their record are cut off on the next open. Bytes are handed to the kernel at once (a
killed process loses nothing) but not fsync'ed per mini-batch: protection is against
crashes, not power loss, as documented in docs/runtime.md.

Nothing read back is trusted. Every record is checked (CRC, field ranges, counts, rows
inside an existing regular segment file of this folder, opened without following
symlinks, or inside an unchanged sealed output), and so are the rows it points to (their
CRC-32), when a resume opens the journal and again when the seal copies them: a record or
rows that fail are named in the driver's log and that mini-batch runs again; rows that
fail at the seal are left out of the output (:attr:`Journal.damaged`). An index that
cannot be read to its end (a torn or damaged record, a folder or a FIFO in its place, or
no index beside segments) is rebuilt from the blocks of the segments, each checked the
same way. Anything else in the folder is reported and removed.

At the end of the step :meth:`Journal.write` writes the append_row output in input order
and *seals* the journal: the index is rewritten so that every record points into that
output (segment ``OUTPUT_SEGMENT``, checked by the output's size and CRC-32 in the index's
first record) and the segments are deleted. The switch is two-phase (``index.next``
written, output renamed, ``index.next`` renamed), so a kill between any two steps leaves
either the old or the new state whole. A later record for the same id supersedes an
earlier one; :meth:`Journal.drop` writes a record that forgets an id (rerun).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import stat
import tempfile
import zlib
from array import array
from collections.abc import Iterable, Iterator
from itertools import chain, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from mlpipe.runtime.faults import naming
from mlpipe.runtime.file_lock import FileLock, LockBusy
from mlpipe.runtime.id_table import IdTable
from mlpipe.runtime.journal_format import (
    DROPPED,
    FIXED,
    FRAME,
    MAX_RECORD,
    NO_HEADER,
    OUTPUT_SEGMENT,
    SEALED,
    STATUSES,
    JournalError,
    Rec,
    append,
    block_head,
    crc32_of,
    decode,
    encode,
    encode_pair,
    frame,
    frame_uniform,
    invalid,
    open_append,
    open_regular,
    scan_segment,
)
from mlpipe.runtime.textio import DATA_ERRORS

JOURNAL_DIR = "journal"
INDEX_FILE = "index"
NEXT_INDEX_FILE = "index.next"  # a sealed index waiting for its output to be renamed in place
TEMPORARY_INDEX = "index.tmp"
LOCK_FILE = "journal.lock"  # in the state folder, beside the journal folder: never removed
LEGACY_DIR = "mini_batches"  # part files + finished.jsonl of earlier versions: never read
SEGMENT_BYTES = 256 << 20  # a new segment file starts past this size
_BULK = 1 << 12  # mini-batches sealed at once (bounded memory: a few hundred bytes each)
# from this many records the seal works a column at a time with numpy (journal_bulk); below,
# in plain loops (journal_plain): importing numpy would cost more than the loops
BULK_FROM = 5_000
_SEGMENT_NAME = re.compile(r"segment-(\d{4,5})")
_STATUS_CODES = {status: code for code, status in enumerate(STATUSES)}
_make_rec = Rec._make  # a Rec from a tuple of all its fields, without the keyword handling
_NUMBER, _CODE, _COUNTS, _LENGTH, _CRC = (itemgetter(1), itemgetter(2), itemgetter(3, 4, 5),
                                          itemgetter(8), itemgetter(10))  # fields of a Rec
_log = logging.getLogger("mlpipe.runtime")


class Finished(NamedTuple):
    """The outcome of a mini-batch's last attempt, as the journal records it.

    ``status`` is that attempt's status (``Succeeded``, ``Failed``, ``Timeout`` or
    ``ProcessDied``); ``header`` the DataFrame header line its rows need, if any. A named
    tuple (the driver makes one per mini-batch: a frozen dataclass costs four times as much).
    """

    id: str
    index: int  # type: ignore[assignment]  # the field hides tuple.index, as it should here
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
    it still counts sealed records, but cannot give their rows). A writer holds
    ``<state_dir>/journal.lock`` until :meth:`close`: a second one gets
    :class:`JournalError` naming the first.
    """

    def __init__(self, state_dir: str | Path, *, resume: bool, rows_file: Path | None = None,
                 read_only: bool = False, logger: logging.Logger | None = None):
        self.root = Path(state_dir) / JOURNAL_DIR
        self.rows_file = rows_file  # the append_row output :meth:`write` makes and seals
        self.log = logger or _log
        self.read_only = read_only
        self._seal: tuple[int, int] | None = None  # (size, CRC-32) of the sealed output
        self._output_ok: bool | None = None  # does rows_file match the seal (checked lazily)
        self.problems: list[str] = []  # what was ignored or repaired when reading, one line each
        self.damaged: list[str] = []  # ids whose rows failed their check when written out
        self._ids = IdTable()  # id -> slot: position in the arrays below
        self._index = array("q")
        self._status = array("B")
        self._counts = array("I")  # total, succeeded, failed per slot
        self._segment = array("H")
        self._offset = array("q")
        self._length = array("q")
        self._crc = array("I")  # CRC-32 of the rows
        self._fresh = array("B")  # 1: recorded by this run (rows written even if it failed)
        self._seen = array("B")  # 1: recorded or reused by this run (``write()`` orders them)
        self._headers: dict[int, str] = {}
        self._blocks_out = bytearray()  # blocks gathered by commit(), not written yet (flush())
        self._records_out = bytearray()  # their index records, if the blocks land as expected
        self._gathered: list[tuple[Rec, int]] = []  # (record, its rows' place in _blocks_out)
        self._expected = 0  # where the gathered blocks will land, unless another writer's do
        self._readers: dict[int, int] = {}  # segment number -> read descriptor
        self._ends: dict[int, int] = {}  # segment -> end of the last block accounted for
        self._index_fd = self._segment_fd = -1
        self._index_path = self.root / INDEX_FILE
        self._segment_path = self.root / _segment_name(0)
        self._segment_no = 0
        self._end = 0  # bytes in the current segment
        self._records_kept = 0  # records read that were taken as they are (none superseded)
        self._rebuilt = False
        self._writer: FileLock | None = None
        self._earlier = False  # holds outcomes of earlier runs (reuse() can find one)
        try:
            if not read_only:
                self._take_writer_lock(Path(state_dir))
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
            self._earlier = len(self._ids) > 0
            self._open_for_append()
        except BaseException:
            self.close()
            raise

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
        if not self._earlier:  # a new journal: this run's ids are all it holds
            return None
        slot = self._ids.find(mini_batch_id)  # what is gathered, not written yet, is not reused
        if slot < 0 or self._status[slot] != 0:
            return None
        self._seen[slot] = 1
        self._index[slot] = index
        return self._entry(mini_batch_id, slot)

    def reusable(self) -> int:
        """How many mini-batches of earlier runs succeeded (a resume reuses them, so a
        progress display counts them as done from the start)."""
        if not self._earlier:
            return 0
        status = self._status
        return sum(1 for slot in self._ids.slots() if not status[slot])

    def entries(self) -> Iterator[Finished]:
        """The last outcome of every recorded mini-batch, in the order first recorded."""
        self.flush()
        for slot in self._ids.slots():
            yield self._entry(self._ids.key(slot), slot)

    def rows(self, mini_batch_id: str) -> str | None:
        """The append_row text recorded for ``mini_batch_id`` (``None``: not recorded);
        :class:`JournalError` when the rows no longer pass their checksum."""
        self.flush()
        slot = self._ids.find(mini_batch_id)
        if slot < 0:
            return None
        if not self._length[slot]:
            return ""
        data = b"".join(self._read(self._segment[slot], self._offset[slot], self._length[slot]))
        if zlib.crc32(data) != self._crc[slot]:
            raise JournalError(f"{self._where(self._segment[slot])}: the rows of mini-batch "
                               f"{mini_batch_id!r} fail their checksum (damaged)")
        return data.decode("utf-8", DATA_ERRORS)

    # -- writing (the driver) ----------------------------------------------------------
    def commit(self, entry: Finished, rows: str | None) -> Finished:
        """Record ``entry`` as ``entry.id``'s final outcome: its block (record and rows) in the
        current segment first, then its index record.

        Commits are gathered and written together by :meth:`flush`, which every other
        method calls first; until then a killed process loses them, and their mini-batches
        run again on resume.
        """
        self._writable()
        mini_batch_id, index, status, total, succeeded, failed, header = entry
        code = _STATUS_CODES.get(status)
        if code is None:
            raise ValueError(f"status {status!r} is not one of {', '.join(STATUSES)}")
        data = rows.encode("utf-8", DATA_ERRORS) if rows else b""
        self._gather(_make_rec((mini_batch_id, index, code, total, succeeded, failed, 0, 0,
                                len(data), header, zlib.crc32(data))), data)
        return entry

    def flush(self) -> None:
        """Write the gathered commits: their blocks to the current segment in one write,
        then their index records in one write, each pointing where its rows landed. On an
        error nothing of them is recorded (what was written is cut off) and the error is
        raised."""
        if not self._gathered:
            return
        blocks, records, gathered = self._blocks_out, self._records_out, self._gathered
        self._blocks_out, self._records_out, self._gathered = bytearray(), bytearray(), []
        segment = self._segment_no
        start = append(self._segment_fd, (blocks,), self._segment_path)
        self._end = start + len(blocks)
        if start != self._expected:  # another writer's bytes came first: where ours landed
            records = bytearray(b"".join(
                frame(encode(rec._replace(segment=segment, offset=start + at)))
                for rec, at in gathered))
        try:
            append(self._index_fd, (records,), self._index_path)
        except BaseException:
            with contextlib.suppress(OSError):  # blocks without records: not finished
                os.ftruncate(self._segment_fd, start)
            self._end = start
            raise
        self._remember_all(gathered, segment, start)

    def drop(self, mini_batch_id: str) -> bool:
        """Forget ``mini_batch_id`` (a rerun will run it again); ``False`` when not recorded."""
        self._writable()
        self.flush()
        slot = self._ids.find(mini_batch_id)
        if slot < 0:
            return False
        self._gather(Rec(mini_batch_id, self._index[slot], DROPPED, 0, 0, 0, 0, 0, 0), b"")
        self.flush()
        return True

    def write(self, order: Iterable[str] | None = None) -> int:
        """Write the rows of the mini-batch ids ``order`` into ``rows_file`` (temporary file,
        then rename) and seal the journal into it; return the rows' bytes.

        Without ``order``, the mini-batches this run recorded or :meth:`reuse`\\ d are
        written, in mini-batch index order (input order). Rows of a mini-batch that failed
        in an earlier run (and was not run again by this one) are left out, as a resumed
        run always did; a succeeded mini-batch not in ``order`` is forgotten. Rows that fail
        their checksum are left out too, named in the log and in :attr:`damaged`, and
        forgotten: the next resume runs them again."""
        self._writable()
        if self.rows_file is None:
            raise JournalError(f"{self.root}: this step has no append_row output")
        self.flush()
        target = self.rows_file
        target.parent.mkdir(parents=True, exist_ok=True)
        # a name of its own: two jobs sealing into one datastore output never share it
        with naming(target):
            fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".mlpipe-tmp",
                                        dir=target.parent)
        temporary = Path(name)
        seal = self._seal_module()
        slots = self._input_order() if order is None else array(
            "i", (slot for slot in map(self._ids.find, order) if slot >= 0))
        placed = array("q", [-1]) * len(self._index)  # slot -> offset of its rows in target
        with naming(target), _removed_on_error(temporary), open(fd, "wb") as out:
            header = next((self._headers[slot] for slot in slots if slot in self._headers),
                          None) if self._headers else None
            output = _Output(out, header.encode("utf-8", DATA_ERRORS) if header else b"")
            start = output.size
            blocks = _Blocks(self)
            chosen = seal.wanted(slots, self._length, self._status, self._fresh,
                                 unique=order is None)
            columns = (self._segment, self._offset, self._length, self._crc)
            bulk = getattr(seal, "place", None)
            for at in range(0, len(chosen), _BULK):
                chunk = chosen[at:at + _BULK]
                if bulk is None:
                    self._place_each(chunk, output, blocks, placed)
                elif not bulk(chunk, columns, self._reader, output.add, placed):
                    self._place_each(chunk.tolist(), output, blocks, placed)
            size, crc = output.close()
        self._seal_into(temporary, placed, size, crc)
        return size - start

    def _place_each(self, slots: Iterable[int], output: _Output, blocks: _Blocks,
                    placed: array[int]) -> None:
        """Add the rows of ``slots`` to ``output`` one by one, streaming large ones; rows that
        fail their checksum are left out (:meth:`_damaged`)."""
        lengths, crcs, segments, offsets = self._length, self._crc, self._segment, self._offset
        for slot in slots:
            length = lengths[slot]
            rows = blocks.small(segments[slot], offsets[slot], length)
            if rows is None:  # large rows: streamed
                where = output.stream(blocks.read(segments[slot], offsets[slot], length),
                                      crcs[slot])
            elif zlib.crc32(rows) == crcs[slot]:
                where = output.add(rows)
            else:
                where = -1
            if where < 0:
                self._damaged(self._ids.key(slot), slot)
            else:
                placed[slot] = where

    def _input_order(self) -> array[int]:
        """The slots this run recorded or reused, by mini-batch index (then slot)."""
        order: array[int] = self._seal_module().input_order(
            self._index, self._ids.slots(among=self._seen))
        return order

    def _seal_module(self) -> Any:
        """:mod:`~mlpipe.runtime.journal_bulk` (numpy) from :data:`BULK_FROM` records, else
        :mod:`~mlpipe.runtime.journal_plain`: the same work."""
        if len(self._index) >= BULK_FROM:
            import mlpipe.runtime.journal_bulk as bulk  # noqa: PLC0415 - numpy: the seal

            return bulk
        import mlpipe.runtime.journal_plain as plain  # noqa: PLC0415

        return plain

    def _damaged(self, mini_batch_id: str, slot: int) -> None:
        segment, offset, length = self._segment[slot], self._offset[slot], self._length[slot]
        self.damaged.append(mini_batch_id)
        self._problem(f"{self._where(segment)}: the rows of mini-batch {mini_batch_id!r} (bytes "
                      f"{offset}..{offset + length}) fail their checksum; left out of the "
                      "append_row output (that mini-batch runs again on resume)")

    def _seal_into(self, temporary: Path, placed: array[int], size: int, crc: int) -> None:
        """Point every record at its rows in the new output, then rename both into place."""
        assert self.rows_file is not None
        # the segments are removed below: every record points into the output from now on
        self._segment = array("H", [OUTPUT_SEGMENT]) * len(self._segment)
        # succeeded, but their rows are not in the output: they run again
        forget = self._seal_module().point_at_output(self._ids.live_mask(), placed,
                                                     self._offset, self._length, self._status)
        for slot in forget:
            self._ids.remove(self._ids.key(slot))
            self._headers.pop(slot, None)
        self._seal = (size, crc)
        next_index = self.root / NEXT_INDEX_FILE
        self._write_index(next_index)
        os.chmod(temporary, 0o644)  # mkstemp's 0600: the output is read like any other file
        os.replace(temporary, self.rows_file)
        os.replace(next_index, self.root / INDEX_FILE)
        self._output_ok = True
        self._close_files()
        for entry in os.scandir(self.root):
            if entry.name != INDEX_FILE:
                _remove(Path(entry.path))
        self._segment_no = self._end = 0
        self._ends.clear()
        self._open_for_append()

    def close(self) -> None:
        """Write what is gathered (:meth:`flush`), close the files and let the writer's lock
        go (idempotent). A write that fails is logged: those mini-batches are not recorded
        and run again on resume."""
        pending = len(self._gathered)
        try:
            if self._index_fd >= 0:
                self.flush()
        except OSError as error:
            self.log.error("%s: %d finished mini-batch(es) could not be recorded: %s",
                           self.root, pending, error)
        finally:
            self._gathered.clear()
            self._blocks_out.clear()
            self._records_out.clear()
            self._close_files()
            if self._writer is not None:
                self._writer.release()

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

    def _remember(self, rec: Rec, segment: int, offset: int) -> int:
        """Keep ``rec`` (its rows at ``offset`` of ``segment``) as its id's last outcome."""
        slot, new = self._ids.find_or_add(rec.id)
        if new:
            self._fresh.append(0)
            self._seen.append(0)
            self._index.append(rec.number)
            self._status.append(rec.code)
            self._counts.extend((rec.total, rec.succeeded, rec.failed))
            self._segment.append(segment)
            self._offset.append(offset)
            self._length.append(rec.length)
            self._crc.append(rec.crc)
        else:
            self._index[slot], self._status[slot] = rec.number, rec.code
            self._counts[3 * slot:3 * slot + 3] = array("I", (rec.total, rec.succeeded,
                                                              rec.failed))
            self._segment[slot], self._offset[slot] = segment, offset
            self._length[slot], self._crc[slot] = rec.length, rec.crc
        if rec.header:
            self._headers[slot] = rec.header
        elif self._headers:
            self._headers.pop(slot, None)
        return slot

    def _remember_all(self, gathered: list[tuple[Rec, int]], segment: int, start: int) -> None:
        """:meth:`_remember` (or forget) each gathered record, in order, as recorded by this run
        (its rows at ``start`` + its place). The records of new ids without a header, nearly
        all of them, go into the arrays a column at a time."""
        find_or_add, fresh, seen = self._ids.find_or_add, self._fresh, self._seen
        new_recs: list[Rec] = []  # the next new slots, in order, not in the arrays yet
        offsets: list[int] = []
        for rec, at in gathered:
            if rec.code != DROPPED and rec.header is None and find_or_add(rec.id)[1]:
                new_recs.append(rec)
                offsets.append(start + at)
                continue
            self._extend(new_recs, segment, offsets)  # the slots before this one first
            new_recs, offsets = [], []
            if rec.code == DROPPED:
                self._forget(rec.id)
            else:
                slot = self._remember(rec, segment, start + at)
                fresh[slot] = seen[slot] = 1
        self._extend(new_recs, segment, offsets)

    def _extend(self, recs: list[Rec], segment: int, offsets: list[int]) -> None:
        """Append the slots of ``recs`` (new ids, no header; their rows at ``offsets`` of
        ``segment``) to the arrays, as recorded by this run."""
        if not recs:
            return
        count = len(recs)
        self._index.extend(map(_NUMBER, recs))
        self._status.extend(map(_CODE, recs))
        self._counts.extend(chain.from_iterable(map(_COUNTS, recs)))
        self._segment.extend(repeat(segment, count))
        self._offset.extend(offsets)
        self._length.extend(map(_LENGTH, recs))
        self._crc.extend(map(_CRC, recs))
        self._fresh.frombytes(b"\x01" * count)
        self._seen.frombytes(b"\x01" * count)

    def _forget(self, mini_batch_id: str) -> None:
        self._headers.pop(self._ids.remove(mini_batch_id), None)

    def _gather(self, rec: Rec, data: bytes) -> None:
        """Add ``rec``'s block (and ``data``, its rows) to what :meth:`flush` writes next; a
        segment past its size is flushed and the next one started first."""
        if self._segment_fd < 0:
            self._open_segment(self._segment_no)
        if not self._gathered:
            self._expected = self._end
        used = self._expected + len(self._blocks_out)
        head, record, offset = encode_pair(rec, self._segment_no, used)
        if used and used + len(head) + len(data) > SEGMENT_BYTES:
            self.flush()
            self._next_segment()
            self._expected = used = self._end
            head, record, offset = encode_pair(rec, self._segment_no, used)
        self._gathered.append((rec, offset - self._expected))
        self._blocks_out += head
        self._blocks_out += data
        self._records_out += record

    def _writable(self) -> None:
        if self.read_only or self._index_fd < 0:
            raise JournalError(f"{self.root}: the journal is not open for writing")

    def _take_writer_lock(self, state_dir: Path) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self._writer = FileLock(state_dir / LOCK_FILE, "write")
        try:
            self._writer.acquire()
        except LockBusy as busy:
            self._writer = None
            raise JournalError(f"{self.root}: {busy.holder.describe()} writes this journal; "
                               "one writer per journal (is the job run twice?)") from None

    def _where(self, segment: int) -> Path | str:
        if segment == OUTPUT_SEGMENT:
            return self.rows_file or "the append_row output (rows_file not given)"
        return self.root / _segment_name(segment)

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
                elif os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                    os.replace(pending, path)
                else:
                    os.replace(pending, path)
            else:
                self._seal = None
                self._output_ok = None
                if not self.read_only:
                    _remove(pending)
        whole, trouble = self._check_index(path)
        segments = self._segment_files()
        if trouble is None and segments and not os.path.lexists(path):
            trouble = f"{path}: missing, beside {len(segments)} segment file(s)"
        if trouble is None:
            for number, rec in self._index_records(path, whole):
                self._take(path, number, rec)
            return
        self._rebuilt = True
        self._problem(f"{trouble}; the index is rebuilt from the segments "
                      f"({len(segments)} segment file(s))")
        for number, rec in self._index_records(path, whole):  # sealed rows: in the output
            if rec.code == SEALED or rec.segment == OUTPUT_SEGMENT:
                self._take(path, number, rec)
        for segment in segments:
            self._replay(segment)

    def _check_index(self, path: Path) -> tuple[int, str | None]:
        """How many records of the index at ``path`` are whole (framed, checksum right), and
        what stopped the reading before the end (``None``: read whole). Nothing is kept:
        :meth:`_index_records` reads them again one by one."""
        fd = open_regular(path, os.O_RDONLY)
        if fd is None:
            if os.path.lexists(path):
                return 0, f"{path}: a {_kind(path)} where the index file should be"
            return 0, None
        number = 0
        with os.fdopen(fd, "rb") as handle:
            for _payload, trouble in _frames(handle, path):
                if trouble is not None:
                    return number, trouble
                number += 1
        return number, None

    def _index_records(self, path: Path, count: int) -> Iterator[tuple[int, Rec]]:
        """The first ``count`` records of the index at ``path`` that decode, numbered."""
        fd = open_regular(path, os.O_RDONLY) if count else None
        if fd is None:
            return
        with os.fdopen(fd, "rb") as handle:
            for number, (payload, _trouble) in enumerate(_frames(handle, path), 1):
                if number > count:
                    return
                try:
                    yield number, decode(payload)
                except ValueError as error:
                    self._problem(f"{path}: record {number}: {error}; ignored")

    def _take(self, path: Path, number: int, rec: Rec) -> None:
        """Keep the index record ``number`` (``rec``) if it and its rows pass their checks."""
        if rec.code == SEALED:
            if number == 1 and self._seal is None:
                self._seal = (rec.offset, rec.length)
            elif number != 1:
                self._problem(f"{path}: record {number}: a seal record after the first; ignored")
            return
        reason = invalid(rec) or self._rows_problem(rec)
        if reason is not None:
            self._problem(f"{path}: record {number} (mini-batch {rec.id!r}): {reason}; "
                          "ignored (that mini-batch runs again)")
            self._forget(rec.id)
            return
        if rec.segment != OUTPUT_SEGMENT:
            self._ends[rec.segment] = max(self._ends.get(rec.segment, 0), rec.offset + rec.length)
        if rec.code == DROPPED:
            self._forget(rec.id)
            return
        self._records_kept += 1
        self._remember(rec, rec.segment, rec.offset)

    def _rows_problem(self, rec: Rec) -> str | None:
        """Why the block or the rows ``rec`` points to cannot be taken, else ``None``."""
        if rec.segment != OUTPUT_SEGMENT:
            return self._block_problem(rec)
        if not rec.length or rec.code == DROPPED:
            return None
        size = self._output_size()
        if size is None:
            return f"its rows are in the append_row output {self.rows_file}, which is " \
                   "missing or changed since the step ended"
        if rec.offset + rec.length > size:
            return f"its rows end at byte {rec.offset + rec.length} of the append_row " \
                   f"output ({size} bytes)"
        return None

    def _block_problem(self, rec: Rec) -> str | None:
        """Why the block of ``rec`` in its segment (the same record, then its rows) is not
        whole, else ``None``."""
        fd = self._reader(rec.segment)
        where = self._where(rec.segment)
        if fd is None:
            return f"its rows are in segment {rec.segment} ({where}), which is missing or not " \
                   "a file"
        size = os.fstat(fd).st_size
        if rec.offset + rec.length > size:
            return f"its rows end at byte {rec.offset + rec.length} of {where} ({size} bytes)"
        head = block_head(encode(rec._replace(segment=0, offset=0)))
        start = rec.offset - len(head)
        if start < 0 or os.pread(fd, len(head), start) != head:
            return f"its block in {where} (bytes {max(0, start)}..{rec.offset}) is damaged"
        if crc32_of(fd, rec.offset, rec.length) != rec.crc:
            return f"its rows in {where} (bytes {rec.offset}..{rec.offset + rec.length}) fail " \
                   "their checksum (damaged)"
        return None

    def _replay(self, segment: int) -> None:
        """Take the blocks of ``segment`` in order, as the index would have."""
        fd = self._reader(segment)
        if fd is None:
            return
        where = self._where(segment)
        for block in scan_segment(fd, segment):
            rec = block.rec
            if rec is not None:  # its extent is known (bytes that are no block are cut off last)
                self._ends[segment] = max(self._ends.get(segment, 0), block.end)
            if block.damage is not None or rec is None:
                if rec is None:
                    self._problem(f"{where}: {block.damage}; skipped")
                else:
                    self._problem(f"{where}: the block of mini-batch {rec.id!r}: {block.damage}; "
                                  "ignored (that mini-batch runs again)")
                    self._forget(rec.id)
                continue
            if rec.code == DROPPED:
                self._forget(rec.id)
            else:
                self._remember(rec, rec.segment, rec.offset)

    def _segment_files(self) -> list[int]:
        """The numbers of the regular segment files in the folder; what else is in it is
        reported (and removed by :meth:`_compact`)."""
        numbers = []
        known = {INDEX_FILE, NEXT_INDEX_FILE, TEMPORARY_INDEX}
        for entry in sorted(os.scandir(self.root), key=lambda e: e.name):
            match = _SEGMENT_NAME.fullmatch(entry.name)
            if match and entry.is_file(follow_symlinks=False):
                numbers.append(int(match.group(1)))
            elif match:
                self._problem(f"{entry.path}: a {_kind(Path(entry.path))}, not a segment file; "
                              + ("ignored" if self.read_only else "removed"))
            elif entry.name not in known:
                self._problem(f"{entry.path}: not part of the journal; "
                              + ("ignored" if self.read_only else "removed"))
        return numbers

    def _seal_of(self, path: Path) -> tuple[int, int] | None:
        """The (size, CRC-32) in the first record of the index ``path``, if it is a seal."""
        fd = open_regular(path, os.O_RDONLY)
        if fd is None:
            return None
        with os.fdopen(fd, "rb") as handle:
            head = handle.read(FRAME.size)
            if len(head) < FRAME.size:
                return None
            length, crc = FRAME.unpack(head)
            payload = handle.read(min(length, MAX_RECORD))
        try:
            rec = decode(payload) if zlib.crc32(payload) == crc else None
        except ValueError:
            return None
        if rec is None or rec.code != SEALED:
            return None
        self._seal = (rec.offset, rec.length)
        return self._seal

    def _output_matches(self) -> bool:
        """Does ``rows_file`` have the sealed size and CRC-32 (computed once)?"""
        if self._output_ok is None:
            self._output_ok = False
            fd = self._output_reader()
            if fd is not None and self._seal is not None \
                    and os.fstat(fd).st_size == self._seal[0]:
                self._output_ok = crc32_of(fd, 0, self._seal[0]) == self._seal[1]
        return self._output_ok

    def _output_reader(self) -> int | None:
        # the output's path comes from the plan, not from the state folder: links are followed
        if self.rows_file is None:
            return None
        return open_regular(self.rows_file, os.O_RDONLY, follow=True)

    def _usable_folder(self) -> bool:
        try:
            mode = os.lstat(self.root).st_mode
        except FileNotFoundError:
            return False
        if not stat.S_ISDIR(mode):
            self._problem(f"{self.root}: a {_kind(self.root)}, not a folder; ignored (every "
                          "mini-batch runs again)")
            return False
        return True

    def _output_size(self) -> int | None:
        """The sealed output's size if its rows can be trusted, else ``None``."""
        if self._seal is None:
            return None
        if self.rows_file is None:  # a reader that only counts (it cannot read the rows)
            return self._seal[0] if self.read_only else None
        return self._seal[0] if self._output_matches() else None

    def _reader(self, segment: int) -> int | None:
        fd = self._readers.get(segment)
        if fd is None:
            fd = self._output_reader() if segment == OUTPUT_SEGMENT \
                else open_regular(self.root / _segment_name(segment), os.O_RDONLY)
            if fd is None:
                return None
            self._readers[segment] = fd
        return fd

    def _read(self, segment: int, offset: int, length: int) -> Iterator[bytes]:
        fd = self._reader(segment)
        where = self._where(segment)
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
        try:
            _remove(self.root)
        except OSError as error:
            raise JournalError(f"{self.root}: cannot clear the journal of an earlier run: "
                               f"{error.strerror or error}") from error
        self._ids.clear()
        self._headers.clear()

    def _compact(self) -> None:
        """Rewrite the index with the live records only, cut each segment after its last
        block accounted for and remove every other file of the folder."""
        try:
            if not self.root.is_dir() or self.root.is_symlink():
                _remove(self.root)
            self.root.mkdir(parents=True, exist_ok=True)
            index = self.root / INDEX_FILE
            if self.problems or self._rebuilt or self._records_kept != len(self._ids) \
                    or not index.is_file() or index.is_symlink():
                temporary = self.root / TEMPORARY_INDEX
                self._write_index(temporary)
                if os.path.lexists(index) and (index.is_symlink() or not index.is_file()):
                    _remove(index)
                os.replace(temporary, index)
            for fd in self._readers.values():
                os.close(fd)
            self._readers.clear()
            for entry in os.scandir(self.root):
                match = _SEGMENT_NAME.fullmatch(entry.name)
                number = int(match.group(1)) if match else -1
                if entry.name == INDEX_FILE or (number in self._ends
                                                and entry.is_file(follow_symlinks=False)
                                                and entry.name == _segment_name(number)):
                    continue
                _remove(Path(entry.path))
            for number, end in self._ends.items():
                writer = open_regular(self.root / _segment_name(number), os.O_WRONLY)
                if writer is not None:
                    try:
                        if os.fstat(writer).st_size > end:
                            os.ftruncate(writer, end)  # blocks written without their record
                    finally:
                        os.close(writer)
        except OSError as error:
            if isinstance(error, JournalError):
                raise
            raise JournalError(f"{error.filename or self.root}: cannot repair the journal: "
                               f"{error.strerror or error}") from error
        self._segment_no = max(self._ends, default=0)

    def _write_index(self, path: Path) -> None:
        """The live records (after the seal record, if any points into the output)."""
        if os.path.lexists(path):
            _remove(path)
        with open(path, "wb") as handle:
            sealed = self._seal is not None and any(
                self._segment[slot] == OUTPUT_SEGMENT and self._length[slot]
                for slot in self._ids.slots())
            if sealed:
                assert self._seal is not None
                handle.write(frame(encode(Rec("", 0, SEALED, 0, 0, 0, OUTPUT_SEGMENT,
                                              self._seal[0], self._seal[1]))))
            if not self._headers and len(self._index) >= BULK_FROM:  # a column at a time
                slots = array("q", self._ids.slots())
                for at in range(0, len(slots), _BULK):
                    if not self._write_uniform(handle, slots[at:at + _BULK]):
                        self._write_each(handle, slots[at:])
                        break
            else:
                self._write_each(handle, self._ids.slots())

    def _write_uniform(self, handle: BinaryIO, slots: array[int]) -> bool:
        """Write the index records of ``slots`` (none with a header) built in bulk; ``False``
        (nothing written) when their ids are not all of one length."""
        keys = self._ids.uniform_keys(slots)
        if keys is None:
            return False
        import numpy as np  # noqa: PLC0415 - the seal alone

        chosen = np.asarray(slots, dtype=np.int64)

        def column(values: array[int]) -> Any:  # a copy: the array may grow again
            return np.frombuffer(values, dtype=values.typecode)[chosen]

        counts = np.frombuffer(self._counts, dtype=self._counts.typecode).reshape(-1, 3)[chosen]
        handle.write(frame_uniform({
            "number": column(self._index), "code": column(self._status),
            "total": counts[:, 0], "succeeded": counts[:, 1], "failed": counts[:, 2],
            "segment": column(self._segment), "offset": column(self._offset),
            "length": column(self._length), "crc": column(self._crc),
        }, *keys))
        return True

    def _write_each(self, handle: BinaryIO, slots: Iterable[int]) -> None:
        """Write the index records of ``slots``, one by one."""
        ids, counts, headers = self._ids, self._counts, self._headers
        index, status, segment = self._index, self._status, self._segment
        offset, length, crcs = self._offset, self._length, self._crc
        pack, pack_frame, crc32 = FIXED.pack, FRAME.pack, zlib.crc32
        chunk: list[bytes] = []
        for slot in slots:
            key = ids.raw(slot)
            header = headers.get(slot)
            if header is None:  # the usual record: packed here, as encode() does
                payload = pack(index[slot], status[slot], counts[3 * slot],
                               counts[3 * slot + 1], counts[3 * slot + 2], segment[slot],
                               offset[slot], length[slot], crcs[slot], len(key)) \
                    + key + NO_HEADER
            else:
                payload = encode(self._rec(slot))
            chunk.append(pack_frame(len(payload), crc32(payload)))
            chunk.append(payload)
            if len(chunk) >= 8192:
                handle.write(b"".join(chunk))
                chunk.clear()
        handle.write(b"".join(chunk))

    def _rec(self, slot: int) -> Rec:
        total, succeeded, failed = self._counts[3 * slot:3 * slot + 3]
        return Rec(self._ids.key(slot), self._index[slot], self._status[slot], total, succeeded,
                   failed, self._segment[slot], self._offset[slot], self._length[slot],
                   self._headers.get(slot), self._crc[slot])

    def _open_for_append(self) -> None:
        """Open the index for appending; the segment opens with the first block."""
        self.root.mkdir(parents=True, exist_ok=True)
        self._index_fd = open_append(self._index_path)

    def _next_segment(self) -> None:
        os.close(self._segment_fd)
        self._segment_fd = -1
        self._open_segment(self._segment_no + 1)

    def _open_segment(self, number: int) -> None:
        if number >= OUTPUT_SEGMENT:
            raise JournalError(f"{self.root}: more than {OUTPUT_SEGMENT:,} segments")
        self._segment_no = number
        self._segment_path = self.root / _segment_name(number)
        self._segment_fd = open_append(self._segment_path)
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


def _frames(handle: BinaryIO, path: Path) -> Iterator[tuple[bytes, str | None]]:
    """The records of an index file, framed: ``(payload, None)`` for each whole one; at the
    first that is not whole, ``(b"", what is wrong with it)`` and the end."""
    number = 0
    while True:
        head = handle.read(FRAME.size)
        if not head:
            return
        number += 1
        if len(head) < FRAME.size:
            yield b"", f"{path}: record {number} is cut short (torn tail)"
            return
        length, crc = FRAME.unpack(head)
        payload = handle.read(length) if length <= MAX_RECORD else b""
        if length > MAX_RECORD or len(payload) < length:
            yield b"", f"{path}: record {number} is cut short or its length is damaged"
            return
        if zlib.crc32(payload) != crc:
            yield b"", f"{path}: record {number} fails its checksum (damaged)"
            return
        yield payload, None


def _kind(path: Path) -> str:
    """``folder``, ``symbolic link``, ``FIFO``... : what is at ``path`` (not followed)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "missing file"
    for test, name in ((stat.S_ISDIR, "folder"), (stat.S_ISLNK, "symbolic link"),
                       (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "device"), (stat.S_ISBLK, "device")):
        if test(mode):
            return name
    return "file"


def _remove(path: Path) -> None:
    """Remove whatever is at ``path`` (a folder with its content, never through a link)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


class _Blocks:
    """Rows read through a few cached 256 KB blocks: mini-batches finish nearly in input order,
    so writing the output costs one read per block, not one per mini-batch."""

    SIZE = 1 << 18
    KEEP = 2

    def __init__(self, journal: Journal):
        self._journal = journal
        self._cache: list[tuple[int, int, bytes]] = []  # (segment, start, data), newest last

    def small(self, segment: int, offset: int, length: int) -> bytes | None:
        """The rows at ``offset`` of ``segment`` from a cached block, read when needed;
        ``None`` for rows too large to cache (or that cannot be read: :meth:`read` says why)."""
        end = offset + length
        if self._cache:
            block_segment, start, data = self._cache[-1]  # nearly always the one
            if block_segment == segment and start <= offset and end <= start + len(data):
                return data[offset - start:end - start]
        for block_segment, start, data in reversed(self._cache):
            if block_segment == segment and start <= offset and end <= start + len(data):
                return data[offset - start:end - start]
        fd = self._journal._reader(segment)
        if length > self.SIZE // 2 or fd is None:
            return None
        start = max(0, offset - self.SIZE // 4)  # rows a little behind come from it too
        data = os.pread(fd, self.SIZE, start)
        if end > start + len(data):
            return None
        self._cache = [*self._cache[1 - self.KEEP:], (segment, start, data)]
        return data[offset - start:end - start]

    def read(self, segment: int, offset: int, length: int) -> Iterator[bytes]:
        """The rows at ``offset`` of ``segment``, in chunks (:class:`JournalError` when they
        cannot be read whole)."""
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


class _Output:
    """The append_row output being written: rows gathered into 256 KB writes, its size and
    CRC-32 carried on; ``header`` first."""

    CHUNK = 1 << 18

    def __init__(self, out: BinaryIO, header: bytes):
        self._out = out
        self._buffer = bytearray(header)
        self._written = 0  # bytes in the file
        self._crc = 0  # CRC-32 of those bytes

    @property
    def size(self) -> int:
        return self._written + len(self._buffer)

    def add(self, rows: bytes) -> int:
        """Append ``rows``; return where they start in the output."""
        where = self._written + len(self._buffer)
        self._buffer += rows
        if len(self._buffer) >= self.CHUNK:
            self._drain()
        return where

    def stream(self, chunks: Iterable[bytes], crc: int) -> int:
        """Append rows read in ``chunks`` if their CRC-32 is ``crc`` (they cannot be kept in
        memory whole: written first, cut off again when they fail or cannot be read); where
        they start in the output, or -1."""
        self._drain()
        where, own, carried = self._written, 0, self._crc
        try:
            for chunk in chunks:
                self._out.write(chunk)
                own = zlib.crc32(chunk, own)
                carried = zlib.crc32(chunk, carried)
                self._written += len(chunk)
        except JournalError:
            own = crc + 1  # unreadable: as damaged
        if own != crc:
            self._out.seek(where)
            self._out.truncate()
            self._written = where
            return -1
        self._crc = carried
        return where

    def close(self) -> tuple[int, int]:
        """Write what is gathered; the output's (size, CRC-32)."""
        self._drain()
        return self._written, self._crc

    def _drain(self) -> None:
        if self._buffer:
            self._out.write(self._buffer)
            self._crc = zlib.crc32(self._buffer, self._crc)
            self._written += len(self._buffer)
            self._buffer = bytearray()


@contextlib.contextmanager
def _removed_on_error(path: Path) -> Iterator[None]:
    """Delete the half-written ``path`` when the block fails (a full disk gets its space back)."""
    try:
        yield
    except BaseException:
        path.unlink(missing_ok=True)
        raise


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
