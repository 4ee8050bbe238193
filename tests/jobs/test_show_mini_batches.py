"""``mlpipe job show NAME --mini-batches [--step STEP] [--failed]``: the id of a failing
mini-batch is one command away."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.jobs.support import flaky_pipeline


@pytest.mark.slow  # runs whole jobs: CI's second stage
def test_mini_batches_list_ids_attempts_status_and_the_error(tmp_path: Path) -> None:
    yaml = flaky_pipeline(tmp_path / "p")
    runs = tmp_path / "runs"
    created = run_cli("job", "create", "--file", str(yaml), "--runs-dir", str(runs),
                      "--name", "flaky", "--no-progress")
    assert created.returncode == 1

    listed = run_cli("job", "show", "flaky", "--runs-dir", str(runs), "--mini-batches",
                     "-o", "json")
    assert listed.returncode == 0, listed.stderr
    outcomes = json.loads(listed.stdout)
    by_file = {Path(o["detail"]).name: o for o in outcomes}
    assert by_file["bad.txt"]["status"] == "Failed" and by_file["bad.txt"]["attempts"] == 1
    assert by_file["bad.txt"]["error"] == "RuntimeError: bad.txt is not ready"
    assert all(o["status"] == "Succeeded" for name, o in by_file.items() if name != "bad.txt")

    failed = run_cli("job", "show", "-n", "flaky", "--runs-dir", str(runs), "--mini-batches",
                     "--failed", "--step", "score")
    assert failed.returncode == 0, failed.stderr
    assert by_file["bad.txt"]["id"] in failed.stdout
    assert "RuntimeError: bad.txt is not ready" in failed.stdout
    assert "1 failed mini-batch in step score" in failed.stdout
    assert by_file["a.txt"]["id"] not in failed.stdout

    not_parallel = run_cli("job", "show", "flaky", "--runs-dir", str(runs), "--mini-batches",
                           "--step", "report")
    assert not_parallel.returncode == 2
    assert "--step 'report' is not a parallel step" in not_parallel.stderr
    alone = run_cli("job", "show", "flaky", "--runs-dir", str(runs), "--failed")
    assert alone.returncode == 2 and "go with --mini-batches" in alone.stderr
