"""The journal defends itself: one writer, offsets where the bytes landed, checksummed row
blocks, and a damaged folder repaired or named, never copied into the output."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mlpipe.runtime import journal as journal_module
from mlpipe.runtime import run_parallel_step
from mlpipe.runtime.faults import describe_fault, naming
from mlpipe.runtime.file_lock import FileLock
from mlpipe.runtime.journal import Finished, Journal, JournalError, finished_count
from tests.conftest import REPO
from tests.runtime.support import LOADER, Recorder, file_mini_batches, make_step

ECHO = "def run(mini_batch):\n    return [p.rsplit('/', 1)[-1] for p in mini_batch]\n"
SMALL_SEGMENTS = 1500  # a few dozen blocks per segment: a killed run leaves several


def _ok(mini_batch_id: str, index: int) -> Finished:
    return Finished(mini_batch_id, index, "Succeeded", 1, 1, 0)


def _master_log(step_logs: str) -> str:
    return (Path(step_logs) / "sys" / "master_role.txt").read_text()


# -- the journal alone --------------------------------------------------------------------
def test_a_second_writer_is_refused_naming_the_first(tmp_path: Path) -> None:
    with Journal(tmp_path, resume=False) as first:
        first.commit(_ok("a", 0), "a\n")
        first.flush()  # commits are written in batches
        with pytest.raises(JournalError, match=f"process {os.getpid()} .*writes this journal"):
            Journal(tmp_path, resume=True)
        assert finished_count(tmp_path) == 1  # readers never need the lock
    with Journal(tmp_path, resume=True) as second:  # released on close
        assert len(second) == 1


def test_a_journal_error_keeps_its_reason_once_named() -> None:
    with pytest.raises(JournalError) as caught, naming("/runs/j/step/.mlpipe/journal/index"):
        raise JournalError("/runs/j/step/.mlpipe/journal: the journal is not open for writing")
    assert str(caught.value) == "/runs/j/step/.mlpipe/journal: the journal is not open for writing"
    assert "None" not in describe_fault(caught.value)


def test_each_record_points_where_its_bytes_landed(tmp_path: Path) -> None:
    """Bytes another writer slipped into the segment never shift the rows a record gives."""
    output = tmp_path / "out.txt"
    with Journal(tmp_path, resume=False, rows_file=output) as journal:
        journal.commit(_ok("a", 0), "a\n")
        journal.flush()
        with open(tmp_path / "journal" / "segment-0000", "ab") as intruder:
            intruder.write(b"bytes of another writer\n")
        journal.commit(_ok("b", 1), "b\n")
        assert journal.rows("b") == "b\n"
    with Journal(tmp_path, resume=True, rows_file=output) as journal:
        assert [e.id for e in journal.entries()] == ["a", "b"] and not journal.problems
        journal.write(["a", "b"])
    assert output.read_text() == "a\nb\n"


def test_rows_damaged_before_the_seal_are_left_out_and_run_again(tmp_path: Path) -> None:
    output = tmp_path / "out.txt"
    with Journal(tmp_path, resume=False, rows_file=output) as journal:
        for i, name in enumerate("abc"):
            journal.commit(_ok(name, i), f"{name}-row\n")
        journal.flush()
        segment = tmp_path / "journal" / "segment-0000"
        data = bytearray(segment.read_bytes())
        data[data.index(b"b-row")] ^= 0x20  # "B-row": the disk changed it under the step
        segment.write_bytes(bytes(data))
        journal.write(["a", "b", "c"])
        assert journal.damaged == ["b"]
        assert any("'b'" in p and "fail their checksum" in p for p in journal.problems)
    assert output.read_text() == "a-row\nc-row\n"
    with Journal(tmp_path, resume=True, rows_file=output) as journal:
        assert journal.done("b") is None and journal.done("c") is not None  # b runs again


def test_an_index_that_cannot_be_read_is_rebuilt_from_the_segments(tmp_path: Path) -> None:
    with Journal(tmp_path, resume=False) as journal:
        for i, name in enumerate("abcd"):
            journal.commit(_ok(name, i), f"{name}\n")
        journal.drop("c")
    index = tmp_path / "journal" / "index"
    data = bytearray(index.read_bytes())
    data[len(data) // 3] ^= 0xFF  # a flipped byte in the middle of the index
    index.write_bytes(bytes(data))
    with Journal(tmp_path, resume=True, rows_file=tmp_path / "out.txt") as journal:
        assert [e.id for e in journal.entries()] == ["a", "b", "d"]  # c stays dropped
        assert any(str(index) in p and "rebuilt from the segments" in p for p in journal.problems)
        journal.commit(_ok("c", 2), "c2\n")
        journal.write(["a", "b", "c", "d"])
    assert (tmp_path / "out.txt").read_text() == "a\nb\nc2\nd\n"


def test_unexpected_entries_in_the_journal_folder_are_named_and_removed(tmp_path: Path) -> None:
    with Journal(tmp_path, resume=False) as journal:
        journal.commit(_ok("a", 0), "a\n")
    folder = tmp_path / "journal"
    (folder / "segment-0003").mkdir()
    (folder / "stray.txt").write_text("?")
    with Journal(tmp_path, resume=True) as journal:
        assert [e.id for e in journal.entries()] == ["a"]
        assert any("segment-0003: a folder, not a segment file; removed" in p
                   for p in journal.problems)
        assert any("stray.txt: not part of the journal; removed" in p for p in journal.problems)
    assert sorted(os.listdir(folder)) == ["index", "segment-0000"]


# -- through the runtime: damage after a kill -9, then resume ------------------------------
KILLED_DRIVER = """
import sys
sys.path[:0] = {paths!r}
from pathlib import Path
from mlpipe.runtime import journal, run_parallel_step
from tests.runtime.support import LOADER, file_mini_batches, make_step
journal.SEGMENT_BYTES = {segment_bytes}
tmp = Path({tmp!r})
step = make_step(tmp, {script!r}, max_retries=0)
run_parallel_step(step, mini_batches=file_mini_batches(tmp / "d", {count}), loader=LOADER)
"""


def _flip_bytes(folder: Path) -> str:
    segment = folder / "segment-0000"
    data = bytearray(segment.read_bytes())
    for at in range(len(data) // 2, len(data) // 2 + 3):
        data[at] ^= 0x5A
    segment.write_bytes(bytes(data))
    return str(segment)


def _truncate_segment(folder: Path) -> str:
    segment = folder / "segment-0000"
    os.truncate(segment, segment.stat().st_size // 2)
    return str(segment)


def _tear_index(folder: Path) -> str:
    index = folder / "index"
    os.truncate(index, index.stat().st_size - 7)
    return f"{index}: record"


def _index_to_folder(folder: Path) -> str:
    index = folder / "index"
    index.unlink()
    index.mkdir()
    return f"{index}: a folder where the index file should be"


def _remove_segment(folder: Path) -> str:
    segment = folder / "segment-0001"
    segment.unlink()
    return str(segment)


DAMAGE: dict[str, Callable[[Path], str]] = {
    "flipped-bytes": _flip_bytes, "truncated-segment": _truncate_segment,
    "torn-index": _tear_index, "index-folder": _index_to_folder,
    "missing-segment": _remove_segment,
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damage_after_a_kill_is_named_and_the_output_stays_exact(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    count = 150
    code = KILLED_DRIVER.format(paths=[str(REPO)], tmp=str(tmp_path), script=ECHO, count=count,
                                segment_bytes=SMALL_SEGMENTS)
    driver = subprocess.Popen([sys.executable, "-c", code], cwd=REPO)
    state = tmp_path / "run" / "step" / ".mlpipe"
    deadline = time.monotonic() + 120
    while driver.poll() is None and finished_count(state) < 80:
        assert time.monotonic() < deadline, "the driver recorded too little"
        time.sleep(0.01)
    driver.kill()  # SIGKILL: no clean-up of any kind
    driver.wait()
    folder = state / "journal"
    if driver.returncode == 0:  # it finished first (a very fast machine): nothing to damage
        pytest.skip("the step ended before the kill")
    named = DAMAGE[damage](folder)
    monkeypatch.setattr(journal_module, "SEGMENT_BYTES", SMALL_SEGMENTS)
    step = make_step(tmp_path, ECHO, max_retries=0)
    recorder = Recorder()
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", count),
                                loader=LOADER, resume=True, observers=[recorder])
    assert summary.status == "Completed", summary.reason
    rows = Path(summary.append_row_file or "").read_text().splitlines()
    assert rows == [f"f{i:04d}.txt" for i in range(count)]  # each once, in order, none garbled
    assert named in _master_log(step.logs_dir)
    assert summary.mini_batches_reused + len(recorder.attempts) == count


def test_a_journal_that_cannot_be_opened_fails_the_step_with_job_result(tmp_path: Path) -> None:
    """Here: another process writes it (its lock is held); nothing of it is touched."""
    step = make_step(tmp_path, ECHO)
    state = Path(step.state_dir)
    state.mkdir(parents=True)
    (state / "journal").mkdir()
    (state / "journal" / "index").write_bytes(b"kept as it is")
    with FileLock(state / journal_module.LOCK_FILE, "write"):
        summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 3),
                                    loader=LOADER, resume=True)
    assert summary.status == "Failed"
    assert "writes this journal" in (summary.reason or "")
    result = (Path(step.logs_dir) / "job_result.txt").read_text()
    assert "writes this journal" in result
    assert (state / "journal" / "index").read_bytes() == b"kept as it is"
