"""The journal's seal a column at a time gives the bytes of the one-by-one path: the same
append_row output and the same index, whatever the ids, rows, outcomes and damage; a small
journal's seal in plain loops (no numpy) gives them too."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mlpipe.runtime import journal as journal_module
from mlpipe.runtime import journal_format
from mlpipe.runtime.journal import JOURNAL_DIR, Finished, Journal, _segment_name
from mlpipe.runtime.journal_format import Rec


@settings(max_examples=60, deadline=None)
@given(records=st.lists(st.tuples(
    st.integers(0, 2**62), st.sampled_from((0, 1, 2, 3)), st.integers(0, 2**31),
    st.integers(0, 2**31), st.integers(0, 2**31), st.integers(0, 2**16 - 1),
    st.integers(0, 2**62), st.integers(0, 2**62), st.integers(0, 2**32 - 1)), max_size=40),
    width=st.integers(1, 24))
def test_index_records_built_in_bulk_are_those_framed_one_by_one(
        records: list[tuple[int, ...]], width: int) -> None:
    keys = [f"{at:0{width}d}"[-width:] for at in range(len(records))]
    names = ("number", "code", "total", "succeeded", "failed", "segment", "offset", "length",
             "crc")
    columns = {name: [record[at] for record in records] for at, name in enumerate(names)}
    expected = b"".join(journal_format.frame(journal_format.encode(Rec(
        key, *record[:8], None, record[8]))) for key, record in zip(keys, records, strict=True))
    bulk = journal_format.frame_uniform(columns, "".join(keys).encode(), width)
    assert bulk == expected


_line = st.text(st.characters(exclude_categories=("Cc", "Zl", "Zp", "Cs")), max_size=30)
_outcome = st.tuples(st.sampled_from(("Succeeded", "Failed")), _line,
                     st.booleans())  # status, rows, rows damaged


@settings(max_examples=40, deadline=None)
@given(first=st.lists(_outcome, min_size=1, max_size=30), again=st.data(),
       long_ids=st.booleans(), bulk=st.booleans())
def test_a_sealed_journal_holds_each_kept_mini_batchs_rows_once_in_input_order(
        tmp_path_factory, first, again, long_ids: bool,  # type: ignore[no-untyped-def]
        bulk: bool) -> None:
    """Two runs (the second resumes and reruns some mini-batches), rows damaged on disk
    between them, then the seal (with numpy, or in plain loops): the output holds the rows
    of every mini-batch whose last outcome is this run's or an earlier success, in input
    order, checksums failing rows left out; a reader of the sealed journal finds each kept
    mini-batch's rows there."""
    saved = journal_module.BULK_FROM
    journal_module.BULK_FROM = 0 if bulk else saved
    try:
        _two_runs_sealed(tmp_path_factory.mktemp("journal"), first, again, long_ids)
    finally:
        journal_module.BULK_FROM = saved


def test_the_plain_seal_writes_the_bytes_of_the_bulk_one(tmp_path: Path) -> None:
    """One journal (rows, failures, a mini-batch run twice, a rerun from a resume) sealed
    with numpy and in plain loops: the same append_row output and index, byte for byte."""
    sealed = {}
    for bulk in (True, False):
        root = tmp_path / str(bulk)
        saved = journal_module.BULK_FROM
        journal_module.BULK_FROM = 0 if bulk else 10**9
        try:
            journal = Journal(root, resume=False, rows_file=root / "out.txt")
            for index in range(300):
                status = "Failed" if index % 7 == 3 else "Succeeded"
                journal.commit(Finished(f"mb{index:04d}", (index * 37) % 300, status, 2,
                                        2 * (status == "Succeeded"), 2 * (status != "Succeeded")),
                               f"row {index} a\nrow {index} b\n" if index % 5 else None)
            journal.close()
            journal = Journal(root, resume=True, rows_file=root / "out.txt")
            for index in range(300):
                journal.reuse(f"mb{index:04d}", (index * 37) % 300)
            for index in range(0, 300, 7):
                journal.commit(Finished(f"mb{index:04d}", (index * 37) % 300, "Succeeded", 2,
                                        2, 0), f"again {index}\n")
            journal.write()
            journal.close()
        finally:
            journal_module.BULK_FROM = saved
        sealed[bulk] = {path.relative_to(root): path.read_bytes()
                        for path in sorted(root.rglob("*")) if path.is_file()}
    assert sealed[True] == sealed[False]
    assert sealed[True][Path("out.txt")].count(b"again") == 43


def _two_runs_sealed(root: Path, first, again, long_ids: bool) -> None:  # type: ignore[no-untyped-def]
    rows_file = root / "out.txt"

    def mb_id(index: int) -> str:
        return f"{index:020d}" if long_ids else f"m{index}"  # one id length, or several

    journal = Journal(root, resume=False, rows_file=rows_file)
    for index, (status, rows, _) in enumerate(first):
        journal.commit(Finished(mb_id(index), index, status, 1, int(status == "Succeeded"),
                                int(status != "Succeeded")), rows + "\n")
    journal.flush()
    journal.close()
    damaged = {mb_id(index) for index, (_, rows, bad) in enumerate(first) if bad}
    _damage(root, damaged)
    rerun = again.draw(st.lists(st.integers(0, len(first) - 1), unique=True))
    journal = Journal(root, resume=True, rows_file=rows_file)
    last: dict[int, tuple[str, str, bool]] = {}  # index -> (status, rows, this run's)
    for index, (status, rows, _) in enumerate(first):
        if journal.reuse(mb_id(index), index) is not None:
            last[index] = (status, rows, False)
    for index in rerun:
        journal.commit(Finished(mb_id(index), index, "Succeeded", 1, 1, 0), f"again {index}\n")
        last[index] = ("Succeeded", f"again {index}", True)
    journal.write()
    kept = [index for index in sorted(last)
            if (last[index][2] or mb_id(index) not in damaged)
            and (last[index][0] == "Succeeded" or last[index][2])]
    assert rows_file.read_text().splitlines() == [last[index][1] for index in kept]
    assert sorted(journal.damaged) == sorted(
        mb_id(index) for index in last if not last[index][2] and mb_id(index) in damaged)
    for index in kept:
        assert journal.rows(mb_id(index)) == last[index][1] + "\n"
    journal.close()


def _damage(root: Path, ids: set[str]) -> None:
    """Flip a byte of the rows of ``ids`` in their segment (their CRC-32 no longer holds)."""
    if not ids:
        return
    journal = Journal(root, resume=True, read_only=True)
    places = [(journal._segment[slot], journal._offset[slot])
              for slot in journal._ids.slots() if journal._ids.key(slot) in ids]
    journal.close()
    for segment, offset in places:
        path = root / JOURNAL_DIR / _segment_name(segment)
        with open(path, "r+b") as handle:
            handle.seek(offset)
            byte = handle.read(1)
            handle.seek(offset)
            handle.write(bytes([byte[0] ^ 0xFF]))
