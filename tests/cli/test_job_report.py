"""``mlpipe job report``: the one job-name rule, a damaged record and a full disk are one
clear line and exit 1 (2 for a name that is no job name), never a traceback, and no
temporary file is left behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli

RECORD = {"name": "j1", "status": "completed", "steps": {}, "run_dir": ""}


def _job(runs: Path, name: str = "j1") -> Path:
    folder = runs / name
    folder.mkdir(parents=True)
    (folder / "job.json").write_text(json.dumps({**RECORD, "name": name,
                                                 "run_dir": str(folder)}))
    return folder


@pytest.mark.parametrize("name", ["j1/../j1", "../outside", "a" * 300, "j1\n", "datastores"])
def test_a_name_that_is_no_job_name_is_refused_before_any_file_is_touched(
        tmp_path: Path, name: str) -> None:
    runs = tmp_path / "runs"
    _job(runs)
    for argv in (["job", "report", name], ["job", "report", "-n", name]):
        proc = run_cli(*argv, "--runs-dir", str(runs))
        assert proc.returncode == 2, proc
        assert proc.stderr.startswith("mlpipe: error: ") and "Traceback" not in proc.stderr
        assert proc.stderr.count("\n") == 1
    assert sorted(os.listdir(runs / "j1")) == ["job.json"]


def test_a_damaged_record_is_named(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    (_job(runs) / "job.json").write_text('{"status": 7}')
    proc = run_cli("job", "report", "j1", "--runs-dir", str(runs))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"cannot read the record of job 'j1' ({runs / 'j1' / 'job.json'})" in proc.stderr


def test_a_full_disk_is_one_line_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(runs)],
            capture_output=True, timeout=30).returncode != 0:
        pytest.skip("needs root to mount a small tmpfs as the runs folder")
    try:
        folder = _job(runs)
        filler = os.open(runs / "filler", os.O_WRONLY | os.O_CREAT)  # the rest of the disk
        try:
            while os.write(filler, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(filler)
        proc = run_cli("job", "report", "j1", "--runs-dir", str(runs))
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc
        assert proc.stderr.startswith("mlpipe: report.html of job 'j1' not written: ")
        assert "No space left on device [ENOSPC]" in proc.stderr
        assert sorted(os.listdir(folder)) == ["job.json"]  # no report.html, no temporary file
    finally:
        subprocess.run(["umount", "-l", str(runs)], capture_output=True, timeout=30)
