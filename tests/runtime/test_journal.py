"""The journal of finished mini-batches: exactly once across kills, bounded files, hostile state."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from mlpipe.frozen import freeze
from mlpipe.runtime import journal as journal_module
from mlpipe.runtime import journal_format, run_parallel_step
from mlpipe.runtime.journal import Finished, Journal, bookkeeping, finished_count
from tests.conftest import REPO
from tests.runtime.support import LOADER, Recorder, file_mini_batches, make_step

ECHO = "def run(mini_batch):\n    return [p.rsplit('/', 1)[-1] for p in mini_batch]\n"


def _ok(mini_batch_id: str, index: int, items: int = 1) -> Finished:
    return Finished(mini_batch_id, index, "Succeeded", items, items, 0)


def _record(mini_batch_id: str, index: int, segment: int, offset: int, length: int,
            status: int = 0, total: int = 1, succeeded: int = 1, failed: int = 0,
            crc: int = 0) -> bytes:
    """An index record with a correct frame and CRC: what a hostile user could write."""
    return journal_format.frame(journal_format.encode(journal_format.Rec(
        mini_batch_id, index, status, total, succeeded, failed, segment, offset, length, None,
        crc)))


def _rows(summary) -> list[str]:  # type: ignore[no-untyped-def]
    return Path(summary.append_row_file).read_text().splitlines()


# -- the journal alone --------------------------------------------------------------------
def test_journal_records_queries_drops_and_survives_reopening(tmp_path: Path) -> None:
    with Journal(tmp_path, resume=False) as journal:
        journal.commit(_ok("a", 0, 2), "a1\na2\n")
        journal.commit(Finished("b", 1, "Timeout", 1, 0, 1), None)
        journal.commit(Finished("c", 2, "Failed", 2, 1, 1), "c1\n")
        journal.commit(_ok("d", 3), "d1\n")
        journal.commit(Finished("b", 1, "Succeeded", 1, 1, 0, "h\n"), "b1\n")  # a retry wins
        assert journal.drop("d") and not journal.drop("nope")
    target = tmp_path / "out.txt"
    with Journal(tmp_path, resume=True, rows_file=target) as journal:
        assert [(e.id, e.status) for e in journal.entries()] == [
            ("a", "Succeeded"), ("b", "Succeeded"), ("c", "Failed")]
        assert journal.done("c") is None and journal.get("c") == Finished("c", 2, "Failed", 2, 1, 1)
        assert journal.done("b") == Finished("b", 1, "Succeeded", 1, 1, 0, "h\n")
        assert journal.get("a") == Finished("a", 0, "Succeeded", 2, 2, 0)
        assert journal.get("a").complete and not journal.get("c").complete  # type: ignore[union-attr]
        assert journal.rows("a") == "a1\na2\n" and journal.rows("d") is None
        journal.write(["c", "b", "a", "d"])
        # c failed in the earlier run and was not run again: its rows are left out
        assert target.read_text() == "h\nb1\na1\na2\n"
        assert journal.rows("a") == "a1\na2\n"  # now read from the output
    assert os.listdir(tmp_path / "journal") == ["index"]  # sealed: the segments are gone
    with Journal(tmp_path, resume=True, rows_file=target) as journal:
        assert journal.rows("b") == "b1\n"
        assert journal.get("c") == Finished("c", 2, "Failed", 2, 1, 1)
        journal.commit(_ok("e", 4), "e1\n")
        journal.write(["a", "b", "c", "e"])
    assert target.read_text() == "h\na1\na2\nb1\ne1\n"
    target.write_text("h\na1\na2\nb1\nEDITED\n")  # an output changed after the step
    with Journal(tmp_path, resume=True, rows_file=target) as journal:
        assert [e.id for e in journal.entries()] == ["c"]  # rows that cannot be trusted rerun
        assert any(str(target) in problem for problem in journal.problems)


def test_journal_starts_a_new_segment_past_its_size(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal_module, "SEGMENT_BYTES", 10)
    with Journal(tmp_path, resume=False) as journal:
        for i in range(5):
            journal.commit(_ok(f"m{i}", i), f"row-{i}\n")
    assert len(os.listdir(tmp_path / "journal")) == 6  # index + one segment per 7-byte row
    with Journal(tmp_path, resume=True, rows_file=tmp_path / "out.txt") as journal:
        journal.write([f"m{i}" for i in range(5)])
    assert (tmp_path / "out.txt").read_text() == "".join(f"row-{i}\n" for i in range(5))


def test_rows_out_of_order_and_large_rows_are_written_in_input_order(tmp_path: Path) -> None:
    rows = {i: (f"{i}-" * (300_000 if i % 7 == 3 else 2)).rstrip("-") + "\n" for i in range(40)}
    finished = sorted(rows, key=lambda i: (i % 5, i))  # far out of order, large rows between
    output = tmp_path / "out.txt"
    with Journal(tmp_path, resume=False, rows_file=output) as journal:
        for i in finished:
            journal.commit(_ok(f"m{i}", i), rows[i])
        journal.write([f"m{i}" for i in range(40)])
    assert output.read_text() == "".join(rows[i] for i in range(40))


def test_without_an_order_this_runs_mini_batches_are_written_by_index(tmp_path: Path) -> None:
    """What the driver does: no list of ids in memory, the journal orders by index; a resume
    marks what it reuses (at its index in the new listing) and forgets the rest."""
    output = tmp_path / "out.txt"
    with Journal(tmp_path, resume=False, rows_file=output) as journal:
        for i in (2, 0, 3, 1):
            journal.commit(_ok(f"m{i}", i), f"row-{i}\n")
        journal.write()
    assert output.read_text() == "row-0\nrow-1\nrow-2\nrow-3\n"
    with Journal(tmp_path, resume=True, rows_file=output) as journal:
        assert journal.reuse("m3", 0) is not None and journal.reuse("m1", 2) is not None
        assert journal.reuse("nope", 1) is None
        journal.commit(_ok("new", 1), "new\n")
        journal.write()  # m0 and m2 are not in this listing: forgotten
        assert sorted(e.id for e in journal.entries()) == ["m1", "m3", "new"]
        assert journal.get("m1") == _ok("m1", 2)  # recorded at its new index
    assert output.read_text() == "row-3\nnew\nrow-1\n"


FSIZE_CHILD = """
import resource, signal, sys
from pathlib import Path
from mlpipe.runtime.journal import Finished, Journal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
journal = Journal(Path(sys.argv[1]), resume=False)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
for i in range(3):
    journal.commit(Finished(f"m{i}", i, "Succeeded", 1, 1, 0), "x" * 1000 + "\\n")
journal.flush()
assert len(journal) == 3
for i in range(3, 8):
    journal.commit(Finished(f"m{i}", i, "Succeeded", 1, 1, 0), "x" * 1000 + "\\n")
try:
    journal.flush()
except OSError as error:
    print("flush failed:", error.errno == 27)
print("recorded", len(journal), journal.get("m3"))
"""


def test_commits_are_written_together_and_a_failed_write_records_none_of_them(
        tmp_path: Path) -> None:
    """Commits reach the disk at flush(), rows first, then the records; when the write fails
    (here: past a file-size limit) none of that batch is recorded, before or after reopening."""
    with Journal(tmp_path / "a", resume=False) as journal:
        journal.commit(_ok("m0", 0), "row\n")
        assert finished_count(tmp_path / "a") == 0  # gathered, not written yet
        assert len(journal) == 1  # a query writes what is gathered first
        assert finished_count(tmp_path / "a") == 1
        journal.commit(_ok("m1", 1), "row\n")
    assert finished_count(tmp_path / "a") == 2  # close() writes the rest
    child = subprocess.run([sys.executable, "-c", FSIZE_CHILD, str(tmp_path / "b")],
                           capture_output=True, text=True, cwd=REPO, timeout=60)
    assert child.stdout.splitlines() == ["flush failed: True", "recorded 3 None"], child.stderr
    with Journal(tmp_path / "b", resume=True) as journal:
        assert sorted(e.id for e in journal.entries()) == ["m0", "m1", "m2"]


def test_torn_tails_are_cut_and_unindexed_rows_ignored(tmp_path: Path) -> None:
    with Journal(tmp_path, resume=False) as journal:
        journal.commit(_ok("a", 0), "a\n")
        journal.commit(_ok("b", 1), "b\n")
    folder = tmp_path / "journal"
    whole = (folder / "index").stat().st_size
    blocks = (folder / "segment-0000").read_bytes()
    with open(folder / "segment-0000", "ab") as segment:
        segment.write(b"rows of a mini-batch whose record never made it\n")
    with open(folder / "index", "ab") as index:  # a record torn in the middle
        index.write(_record("c", 2, 0, 4, 48)[:-5])
    assert finished_count(tmp_path) == 2  # a reader sees the two complete records
    with Journal(tmp_path, resume=True, rows_file=tmp_path / "out.txt") as journal:
        assert [e.id for e in journal.entries()] == ["a", "b"]
        assert any("torn" in problem for problem in journal.problems)
        assert (folder / "index").stat().st_size == whole
        assert (folder / "segment-0000").read_bytes() == blocks
        journal.commit(_ok("c", 2), "c\n")
        journal.write(["a", "b", "c"])
    assert (tmp_path / "out.txt").read_text() == "a\nb\nc\n"


def test_a_hostile_index_never_reads_outside_its_folder(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    state = tmp_path / "state"
    with Journal(state, resume=False) as journal:
        journal.commit(_ok("good", 0), "good\n")
    folder = state / "journal"
    (folder / "segment-0007").symlink_to(secret)  # a segment that is a link out of the folder
    crc = zlib.crc32(b"TOP SECRET\n")
    with open(folder / "index", "ab") as index:
        index.write(_record("link", 1, 7, 0, 11, crc=crc))  # rows in the symlinked segment
        index.write(_record("past-end", 2, 0, 3, 100))  # rows beyond the segment's end
        index.write(_record("missing", 3, 42, 0, 5))  # a segment that does not exist
        index.write(_record("counts", 4, 0, 0, 5, total=1, succeeded=5))
        index.write(_record("status", 5, 0, 0, 5, status=77))
        index.write(_record("good", 0, 0, -4, 4))  # a bad record for a good id reruns it
        index.write(_record("wrong-crc", 6, 0, 0, 5, crc=12345))  # rows that fail their CRC
    with Journal(state, resume=True) as journal:
        assert len(journal) == 0
        named = [p for p in journal.problems if str(folder / "index") in p]
        assert len(named) == 7, journal.problems
        assert any("segment-0007: a symbolic link" in p for p in journal.problems)
        assert sorted(os.listdir(folder)) == ["index", "segment-0000"]  # the link is gone
    assert secret.read_text() == "TOP SECRET\n"


def test_a_fifo_in_place_of_the_index_or_a_segment_is_ignored_without_waiting(
        tmp_path: Path) -> None:
    with Journal(tmp_path, resume=False) as journal:
        journal.commit(_ok("a", 0), "a\n")
    folder = tmp_path / "journal"
    (folder / "segment-0000").unlink()
    os.mkfifo(folder / "segment-0000")
    with Journal(tmp_path, resume=True) as journal:
        assert len(journal) == 0 and any("segment 0" in p for p in journal.problems)
    (folder / "index").unlink()
    os.mkfifo(folder / "index")
    assert finished_count(tmp_path) == 0
    with Journal(tmp_path, resume=True) as journal:
        journal.commit(_ok("b", 0), "b\n")
        assert len(journal) == 1


def test_records_into_the_output_need_a_matching_seal(tmp_path: Path) -> None:
    output = tmp_path / "out.txt"
    output.write_text("not from this journal\n")
    (tmp_path / "journal").mkdir()
    with open(tmp_path / "journal" / "index", "wb") as index:  # no seal record first
        index.write(_record("a", 0, journal_module.OUTPUT_SEGMENT, 0, 4))
    with Journal(tmp_path, resume=True, rows_file=output) as journal:
        assert len(journal) == 0 and "append_row output" in journal.problems[0]


@pytest.mark.parametrize("crash_after", [1, 2])
def test_a_kill_while_sealing_keeps_the_old_or_the_new_state_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash_after: int) -> None:
    """The seal renames the output, then the index: a kill before either, or between."""
    output = tmp_path / "out.txt"
    with Journal(tmp_path, resume=False, rows_file=output) as journal:
        journal.commit(_ok("a", 0), "a\n")
        journal.write(["a"])
    with Journal(tmp_path, resume=True, rows_file=output) as journal:
        journal.commit(_ok("b", 1), "b\n")
        replace = os.replace
        calls: list[str] = []

        def crash(source: str, target: str) -> None:
            calls.append(str(target))
            if len(calls) == crash_after:
                raise KeyboardInterrupt  # the process dies here
            replace(source, target)

        monkeypatch.setattr(os, "replace", crash)
        with pytest.raises(KeyboardInterrupt):
            journal.write(["a", "b"])
        monkeypatch.setattr(os, "replace", replace)
    with Journal(tmp_path, resume=True, rows_file=output) as journal:
        assert not journal.problems and [e.id for e in journal.entries()] == ["a", "b"]
        journal.write(["a", "b"])
    assert output.read_text() == "a\nb\n"


def test_a_symlinked_journal_folder_is_replaced_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    with Journal(elsewhere, resume=False) as journal:
        journal.commit(_ok("a", 0), "outside\n")
    outside = (elsewhere / "journal" / "segment-0000").read_bytes()
    state = tmp_path / "state"
    state.mkdir()
    (state / "journal").symlink_to(elsewhere / "journal")
    with Journal(state, resume=True) as journal:
        assert len(journal) == 0 and journal.problems
        journal.commit(_ok("b", 0), "inside\n")
    assert not (state / "journal").is_symlink()
    assert (elsewhere / "journal" / "segment-0000").read_bytes() == outside


# -- through the runtime -----------------------------------------------------------------
def test_resume_ignores_a_hostile_legacy_journal_and_index(tmp_path: Path) -> None:
    """Issue 9.3: a ``part`` of ``../../../../secret.txt`` was copied into the output."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    step = make_step(tmp_path, ECHO)
    batches = file_mini_batches(tmp_path / "d", 6)
    first = run_parallel_step(step, mini_batches=batches[:3], loader=LOADER)
    assert _rows(first) == ["f0000.txt", "f0001.txt", "f0002.txt"]
    state = Path(step.state_dir)
    legacy = state / "mini_batches"
    (legacy / "parts").mkdir(parents=True)
    (legacy / "finished.jsonl").write_text(
        '{"id": "mb-0003", "index": 3, "status": "Succeeded", "total": 1, "succeeded": 1, '
        '"failed": 0, "part": "../../../../secret.txt", "header": null}\n')
    (state / "journal" / "segment-0001").symlink_to(secret)
    with open(state / "journal" / "index", "ab") as index:
        index.write(_record("mb-0004", 4, 1, 0, 11))
        index.write(_record("mb-0005", 5, 0, 0, 10 ** 9))
    recorder = Recorder()
    second = run_parallel_step(step, mini_batches=batches, loader=LOADER, resume=True,
                               observers=[recorder])
    assert second.status == "Completed", second.reason
    assert _rows(second) == [f"f{i:04d}.txt" for i in range(6)]
    assert sorted(a.mini_batch_id for a in recorder.attempts) == ["mb-0003", "mb-0004", "mb-0005"]
    assert second.mini_batches_reused == 3
    assert not legacy.exists()
    master = (Path(step.logs_dir) / "sys" / "master_role.txt").read_text()
    assert "journal" in master and "ignored" in master


BROKEN = """
import os
def run(mini_batch):
    name = mini_batch[0].rsplit('/', 1)[-1]
    if os.environ.get("BROKEN") and name == "f0001.txt":
        raise RuntimeError("broken")
    if os.environ.get("BROKEN") and name == "f0003.txt":
        os._exit(3)
    return [name + os.environ.get("SUFFIX", "")]
"""


def test_the_journal_tells_a_rerun_what_failed_and_drop_reruns_one(tmp_path: Path) -> None:
    """What ``job rerun --failed-only`` builds on: last statuses, rows, drop, resume."""
    batches = file_mini_batches(tmp_path / "d", 5)
    broken = make_step(tmp_path, BROKEN, max_retries=0,
                       environment_variables=freeze({"BROKEN": "1"}))
    first = run_parallel_step(broken, mini_batches=batches, loader=LOADER)
    assert first.mini_batches_failed == 2
    target = Path(first.append_row_file or "")
    with Journal(broken.state_dir, resume=True, read_only=True, rows_file=target) as journal:
        assert {e.id: e.status for e in journal.entries()} == {
            "mb-0000": "Succeeded", "mb-0001": "Failed", "mb-0002": "Succeeded",
            "mb-0003": "ProcessDied", "mb-0004": "Succeeded"}
        assert journal.rows("mb-0002") == "f0002.txt\n" and journal.rows("mb-0001") == ""
    with Journal(broken.state_dir, resume=True, rows_file=target) as journal:
        assert journal.drop("mb-0004")  # a succeeded mini-batch run again on purpose
    fixed = make_step(tmp_path, BROKEN, max_retries=0,
                      environment_variables=freeze({"SUFFIX": "-fixed"}))
    recorder = Recorder()
    second = run_parallel_step(fixed, mini_batches=batches, loader=LOADER, resume=True,
                               observers=[recorder])
    assert sorted(a.mini_batch_id for a in recorder.attempts) == ["mb-0001", "mb-0003",
                                                                    "mb-0004"]
    assert _rows(second) == ["f0000.txt", "f0001.txt-fixed", "f0002.txt", "f0003.txt-fixed",
                             "f0004.txt-fixed"]
    assert (second.mini_batches_succeeded, second.mini_batches_reused) == (5, 2)


def test_6000_one_file_mini_batches_leave_bounded_bookkeeping(tmp_path: Path) -> None:
    step = make_step(tmp_path, ECHO)
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 6000),
                                loader=LOADER)
    assert summary.status == "Completed" and summary.mini_batches_succeeded == 6000
    assert _rows(summary) == [f"f{i:04d}.txt" for i in range(6000)]
    files, size = bookkeeping(step.step_dir)
    assert files < 500, files
    assert size < 3_000_000, size


KILLED_DRIVER = """
import sys
sys.path[:0] = {paths!r}
from pathlib import Path
from mlpipe.runtime import run_parallel_step
from tests.runtime.support import LOADER, file_mini_batches, make_step
from tests.runtime.test_journal import ECHO
tmp = Path({tmp!r})
step = make_step(tmp, ECHO, max_retries=0)
run_parallel_step(step, mini_batches=file_mini_batches(tmp / "d", {count}), loader=LOADER,
                  resume={resume})
"""


def _driver(tmp_path: Path, count: int, resume: bool) -> subprocess.Popen[bytes]:
    code = KILLED_DRIVER.format(paths=[str(REPO)], tmp=str(tmp_path), count=count, resume=resume)
    return subprocess.Popen([sys.executable, "-c", code], cwd=REPO)


@pytest.mark.slow  # runs whole jobs: CI's second stage
def test_driver_killed_at_random_points_then_resumed_writes_every_row_once(
        tmp_path: Path) -> None:
    count = 1500
    rng = random.Random(os.environ.get("PYTEST_SEED", "journal"))
    state = tmp_path / "run" / "step" / ".mlpipe"
    kills = 0
    for round_ in range(3):
        before = finished_count(state)
        driver = _driver(tmp_path, count, resume=round_ > 0)
        goal = before + rng.randint(50, 300)
        deadline = time.monotonic() + 120
        while driver.poll() is None and time.monotonic() < deadline \
                and finished_count(state) < goal:
            time.sleep(rng.uniform(0.0, 0.02))
        if driver.poll() is None:
            driver.kill()  # SIGKILL, wherever the driver is in its per-mini-batch path
            kills += 1
        driver.wait()
        assert finished_count(state) >= before  # nothing recorded is ever lost
    assert kills
    recorded = finished_count(state)
    step = make_step(tmp_path, ECHO, max_retries=0)
    recorder = Recorder()
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", count),
                                loader=LOADER, resume=True, observers=[recorder])
    assert summary.status == "Completed", summary.reason
    assert _rows(summary) == [f"f{i:04d}.txt" for i in range(count)]
    assert summary.mini_batches_succeeded == count
    assert summary.mini_batches_reused == recorded  # every recorded mini-batch is reused
    assert len(recorder.attempts) == count - recorded
