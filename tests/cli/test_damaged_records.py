"""Every ``mlpipe job ...`` command on a damaged record, a damaged lock or a read-only runs
folder: one line naming what is wrong and exit 1, never a traceback (issue #26).

The commands run in this process (``mlpipe.cli.main``, as the console script calls it), so
the whole table of damage kinds x commands stays fast; the read-only runs folder needs a
mount namespace (``unshare -m``) and runs the command as a child process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mlpipe.cli import main
from tests.conftest import REPO

PIPELINE = """\
type: pipeline
display_name: damaged
jobs:
  hello:
    type: command
    command: echo hello
"""

# Each kind of damage done to a job's record (job.json).
RECORD_DAMAGE: dict[str, Callable[[Path], None]] = {
    "empty": lambda path: path.write_text(""),
    "half-written": lambda path: path.write_text('{"name": "j1", "status": "compl'),
    "a folder": lambda path: path.mkdir(),
    "a link to /etc/passwd": lambda path: path.symlink_to("/etc/passwd"),
    "a link to a good record": lambda path: (
        path.with_name("elsewhere.json").write_text('{"status": "completed", "steps": {}}'),
        path.symlink_to(path.with_name("elsewhere.json"))),
    "a pipe": lambda path: os.mkfifo(path),
    "not JSON": lambda path: path.write_text("status: completed\n"),
    "not UTF-8": lambda path: path.write_bytes(b'{"status": "\xff\xfe"}'),
    "JSON nested too deeply": lambda path: path.write_text("[" * 100_000),
    "a JSON list": lambda path: path.write_text("[1, 2]"),
    "steps a list": lambda path: path.write_text('{"status": "failed", "steps": []}'),
    "a step a number": lambda path: path.write_text('{"status": "failed", "steps": {"a": 1}}'),
    "an unknown status": lambda path: path.write_text('{"status": "exploded", "steps": {}}'),
    "a time that is no time": lambda path: path.write_text(
        '{"status": "failed", "steps": {}, "created_at": "yesterday"}'),
    "a summary of the wrong shape": lambda path: path.write_text(json.dumps(
        {"status": "failed", "steps": {"p": {"kind": "parallel", "status": "failed",
                                             "summary": {"top_errors": "many"}}}})),
}

# Each kind of damage done to a job's lock (job.lock), the record being fine.
LOCK_DAMAGE: dict[str, Callable[[Path], None]] = {
    "lock a folder": lambda path: path.mkdir(),
    "lock a link to /etc/passwd": lambda path: path.symlink_to("/etc/passwd"),
    "lock a dangling link": lambda path: path.symlink_to(path.with_name("nowhere")),
}

# Every job command, as (label, arguments after ``mlpipe job``); J is the job's name.
COMMANDS: dict[str, list[str]] = {
    "show": ["show", "j1"],
    "show -o json": ["show", "j1", "-o", "json"],
    "show --mini-batches": ["show", "j1", "--mini-batches"],
    "list --parent-job-name": ["list", "--parent-job-name", "j1"],
    "stream": ["stream", "j1"],
    "cancel": ["cancel", "j1", "--timeout", "1"],
    "rerun": ["rerun", "j1"],
    "rerun --failed-only": ["rerun", "j1", "--failed-only"],
    "download": ["download", "j1"],
    "download --all": ["download", "j1", "--all"],
    "debug": ["debug", "j1", "--step", "p", "--mini-batch", "mb1"],
    "advise": ["advise", "j1"],
    "report": ["report", "j1"],
    "create --name": ["create", "--name", "j1", "--file", "{pipeline}", "--no-progress"],
}
# The commands that take the job's lock (they change the job, or must see it unchanged).
LOCKING = ("cancel", "rerun", "rerun --failed-only", "debug", "create --name")


def _runs(tmp_path: Path, record: dict[str, object] | None = None) -> Path:
    runs = tmp_path / "runs"
    (runs / "j1").mkdir(parents=True)
    (tmp_path / "pipeline.yml").write_text(PIPELINE)
    if record is not None:
        (runs / "j1" / "job.json").write_text(json.dumps(record))
    return runs


def _stale_record(runs: Path) -> dict[str, object]:
    """A job recorded as running whose runner is gone (no pid): cancel, rerun, debug and a
    resume all take its lock."""
    return {"name": "j1", "status": "running", "steps": {}, "run_dir": str(runs / "j1"),
            "source": str(runs.parent / "pipeline.yml"),
            "created_at": "2026-01-02T03:04:05+00:00"}


def _argv(command: str, runs: Path, tmp_path: Path) -> list[str]:
    args = [arg.format(pipeline=tmp_path / "pipeline.yml") for arg in COMMANDS[command]]
    extra = ["--download-path", str(tmp_path / "dl")] if args[0] == "download" else []
    return ["job", *args, *extra, "--runs-dir", str(runs)]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(code: int, out: str, err: str) -> str:
    assert "Traceback" not in out + err, out + err
    lines = err.splitlines()
    assert code == 1 and len(lines) == 1, (code, out, err)
    return lines[0]


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("damage", sorted(RECORD_DAMAGE))
def test_a_damaged_record_is_one_line_and_exit_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str, command: str) -> None:
    runs = _runs(tmp_path)
    record = runs / "j1" / "job.json"
    RECORD_DAMAGE[damage](record)
    before = sorted(os.listdir(runs / "j1"))
    line = _one_line(*_run(_argv(command, runs, tmp_path), capsys))
    (runs / "j1" / "job.lock").unlink(missing_ok=True)  # taken by the commands that lock
    assert str(record) in line  # the file is named
    if command == "create --name":
        assert line.startswith("mlpipe: job 'j1' exists but its record cannot be read ("), line
    else:
        assert line.startswith(f"mlpipe: cannot read the record of job 'j1' ({record}): "), line
    assert sorted(os.listdir(runs / "j1")) == before  # nothing written, nothing removed


@pytest.mark.parametrize("damage", sorted(RECORD_DAMAGE))
def test_list_names_each_damaged_record_once_and_lists_the_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str) -> None:
    runs = _runs(tmp_path)
    RECORD_DAMAGE[damage](runs / "j1" / "job.json")
    (runs / "fine").mkdir()
    (runs / "fine" / "job.json").write_text('{"status": "completed", "steps": {}}')
    code, out, err = _run(["job", "list", "--runs-dir", str(runs)], capsys)
    assert code == 0 and "fine" in out and "Traceback" not in out + err
    assert err == f"mlpipe: skipped 1 unreadable record: {runs / 'j1' / 'job.json'}\n"


@pytest.mark.parametrize("command", LOCKING)
@pytest.mark.parametrize("damage", sorted(LOCK_DAMAGE))
def test_a_damaged_lock_is_one_line_and_exit_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str, command: str) -> None:
    runs = _runs(tmp_path)
    (runs / "j1" / "job.json").write_text(json.dumps(_stale_record(runs)))
    lock = runs / "j1" / "job.lock"
    LOCK_DAMAGE[damage](lock)
    line = _one_line(*_run(_argv(command, runs, tmp_path), capsys))
    assert line.startswith(f"mlpipe: job j1: cannot lock {lock}: "), line
    assert "in its place" in line
    assert json.loads((runs / "j1" / "job.json").read_text())["status"] == "running"


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - set(LOCKING)))
@pytest.mark.parametrize("damage", sorted(LOCK_DAMAGE))
def test_commands_that_only_read_ignore_a_damaged_lock(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str, command: str) -> None:
    runs = _runs(tmp_path)
    (runs / "j1" / "job.json").write_text(json.dumps(_stale_record(runs)))
    LOCK_DAMAGE[damage](runs / "j1" / "job.lock")
    code, out, err = _run(_argv(command, runs, tmp_path), capsys)
    assert "Traceback" not in out + err and "job.lock" not in err, err
    assert len(err.splitlines()) <= 1 and code in (0, 1, 2), (code, err)


def _read_only(runs: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """``mlpipe ARGV`` with ``runs`` mounted read-only in a mount namespace of its own."""
    script = 'mount --bind -o ro "$1" "$1" && shift && exec "$@"'
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", str(runs), sys.executable, "-m", "mlpipe",
         *argv], env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
        timeout=120)


def _can_mount() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _can_mount(), reason="needs root and unshare -m for a read-only mount")
@pytest.mark.parametrize("command", [*LOCKING, "report"])
def test_a_read_only_runs_folder_is_one_line_and_exit_1(tmp_path: Path, command: str) -> None:
    runs = _runs(tmp_path)
    (runs / "j1" / "job.json").write_text(json.dumps(_stale_record(runs)))
    (runs / "j1" / "job.lock").write_text("")
    before = {path: path.read_bytes() for path in (runs / "j1").iterdir()}
    proc = _read_only(runs, _argv(command, runs, tmp_path))
    expected = 2 if command == "create --name" else 1  # an unusable --runs-dir: usage
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    assert proc.returncode == expected and len(proc.stderr.splitlines()) == 1, proc
    assert "Read-only file system" in proc.stderr or "cannot write to the runs folder" \
        in proc.stderr, proc.stderr
    assert {path: path.read_bytes() for path in (runs / "j1").iterdir()} == before


@pytest.mark.skipif(not _can_mount(), reason="needs root and unshare -m for a read-only mount")
def test_a_read_only_runs_folder_is_still_read(tmp_path: Path) -> None:
    runs = _runs(tmp_path, {"name": "j1", "status": "completed", "steps": {},
                            "created_at": "2026-01-02T03:04:05+00:00"})
    for argv in (["job", "show", "j1"], ["job", "list"]):
        proc = _read_only(runs, [*argv, "--runs-dir", str(runs)])
        assert proc.returncode == 0 and proc.stderr == "" and "j1" in proc.stdout, proc
