"""One job, one writer: two processes started on one job at the same instant never both run
it; the second says who runs it, exits 1 and changes nothing."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from mlpipe.jobs import JobStore
from mlpipe.jobs.ownership import JobBusyError, own_job, request_cancel
from tests.conftest import run_cli
from tests.jobs.support import flaky_pipeline, start_together

TRIALS = 5
BUSY = re.compile(r"mlpipe: job j1 is being run by process (\d+) \(started \d\d:\d\d:\d\d\); "
                  r"wait for it, or mlpipe job cancel j1\n")
ROWS = ["a.txt", "b.txt", "bad.txt", "c.txt", "d.txt", "e.txt"]


def _create(yaml: Path, runs: Path) -> list[str]:
    return ["job", "create", "--file", str(yaml), "--runs-dir", str(runs), "--name", "j1",
            "--no-progress"]


def _rerun(runs: Path) -> list[str]:
    return ["job", "rerun", "j1", "--failed-only", "--runs-dir", str(runs), "--no-progress"]


def _one_ran(procs: list[subprocess.Popen[str]], hold: Path) -> subprocess.Popen[str]:
    """Exactly one of ``procs`` ran the job (exit 0), the other was told who did (exit 1,
    that single line, nothing on stdout); the winner. The job's run() calls wait (``hold``)
    until the first of them ended, so both were there at once."""
    deadline = time.monotonic() + 120
    while all(proc.poll() is None for proc in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    hold.touch()
    outputs = [proc.communicate(timeout=300) for proc in procs]
    hold.unlink()
    codes = sorted(proc.returncode for proc in procs)
    assert codes == [0, 1], outputs
    winner, loser = sorted(zip(procs, outputs, strict=True), key=lambda pair: pair[0].returncode)
    busy = BUSY.fullmatch(loser[1][1])
    assert busy, loser[1]
    assert int(busy.group(1)) == winner[0].pid and loser[1][0] == ""
    return winner[0]


def _rows(runs: Path) -> list[str]:
    record = json.loads((runs / "j1" / "job.json").read_text())
    path = record["steps"]["score"]["append_row_file"]
    return Path(path).read_text().splitlines()


def _dead_job(tmp_path: Path) -> tuple[Path, Path]:
    """A job j1 that failed (bad.txt failed), its input then fixed."""
    yaml = flaky_pipeline(tmp_path / "p")
    runs = tmp_path / "runs"
    first = run_cli(*_create(yaml, runs))
    assert first.returncode == 1, first.stderr
    (tmp_path / "p" / "gate").touch()
    (tmp_path / "p" / "hold.on").touch()  # from here on run() waits for p/hold
    return yaml, runs


@pytest.mark.slow
def test_two_creates_of_a_fresh_job_at_once_run_it_once(tmp_path: Path) -> None:
    yaml = flaky_pipeline(tmp_path / "p")
    (tmp_path / "p" / "gate").touch()
    (tmp_path / "p" / "hold.on").touch()
    seen = tmp_path / "p" / "seen.log"
    for trial in range(TRIALS):
        runs = tmp_path / f"runs{trial}"
        seen.unlink(missing_ok=True)
        winner = _one_ran(start_together(tmp_path / f"t{trial}", _create(yaml, runs),
                                         _create(yaml, runs)), tmp_path / "p" / "hold")
        record = json.loads((runs / "j1" / "job.json").read_text())
        assert (record["status"], record["attempt"], record["pid"]) == ("completed", 1,
                                                                         winner.pid)
        assert _rows(runs) == ROWS
        assert sorted(seen.read_text().split()) == sorted(ROWS)  # no item ran twice


@pytest.mark.slow
@pytest.mark.parametrize("second", ["create", "rerun"])
def test_a_rerun_and_another_start_of_a_dead_job_run_it_once(tmp_path: Path,
                                                             second: str) -> None:
    for trial in range(2):
        yaml, runs = _dead_job(tmp_path / f"trial{trial}")
        other = _create(yaml, runs) if second == "create" else _rerun(runs)
        _one_ran(start_together(tmp_path / f"t{trial}", _rerun(runs), other),
                 tmp_path / f"trial{trial}" / "p" / "hold")
        record = json.loads((runs / "j1" / "job.json").read_text())
        assert (record["status"], record["attempt"]) == ("completed", 2)
        assert _rows(runs) == ROWS
        assert (tmp_path / f"trial{trial}" / "p" / "seen.log").read_text().split().count(
            "bad.txt") == 1  # the fixed mini-batch ran once, by one of them


@pytest.mark.slow  # runs whole jobs: CI's second stage
def test_a_job_owned_elsewhere_is_not_resumed_rerun_debugged_or_marked(tmp_path: Path) -> None:
    """A job whose record says it died, held by another owner: every verb that changes it
    refuses in one line, cancel only leaves its request, readers read."""
    yaml, runs = _dead_job(tmp_path)
    store = JobStore(runs)
    before = (runs / "j1" / "job.json").read_bytes()
    with own_job(store, "j1"):
        for argv in (_create(yaml, runs), _rerun(runs),
                     ["job", "debug", "j1", "--step", "score", "--mini-batch", "x",
                      "--runs-dir", str(runs)]):
            refused = run_cli(*argv)
            assert refused.returncode == 1 and refused.stdout == "", refused
            assert "job j1 is being run by process" in refused.stderr
            assert refused.stderr.count("\n") == 1
        with pytest.raises(JobBusyError):
            own_job(store, "j1", doing="debug")
        assert run_cli("job", "show", "j1", "--runs-dir", str(runs)).returncode == 0
        assert request_cancel(store, "j1").status == "failed"  # terminal: unchanged
    assert (runs / "j1" / "job.json").read_bytes() == before


def test_a_debug_session_holds_the_job(tmp_path: Path) -> None:
    yaml, runs = _dead_job(tmp_path)
    with own_job(JobStore(runs), "j1", doing="debug"):
        refused = run_cli(*_create(yaml, runs))
    assert refused.returncode == 1
    assert re.fullmatch(r"mlpipe: job j1 is being debugged by process \d+ \(started "
                        r"[0-9:]+\); wait for the debug session to end\n", refused.stderr)


def test_a_name_that_fails_before_running_leaves_no_folder(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    bad = tmp_path / "bad.yml"
    bad.write_text("type: pipeline\njobs:\n  x:\n    type: nonsense\n")
    assert run_cli("job", "create", "-f", str(bad), "--runs-dir", str(runs), "-n",
                   "nothing").returncode == 1
    assert not (runs / "nothing").exists()
    missing = run_cli("job", "rerun", "nope", "--runs-dir", str(runs))
    assert missing.returncode == 1 and not (runs / "nope").exists()
