"""``mlpipe job debug NAME --step STEP --mini-batch ID [--pdb]``: one mini-batch in the
foreground, as a worker runs it, leaving the job's files exactly as they were."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.jobs.support import flaky_pipeline

pytestmark = pytest.mark.slow  # debug sessions of whole jobs: CI's second stage

REPO = Path(__file__).resolve().parents[2]


def tree_digest(folder: Path) -> dict[str, str]:
    """Every file's digest, but the job's lock (its note names whoever held it last)."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file() and path.name != "job.lock"}


def ran_job(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    yaml = flaky_pipeline(tmp_path / "p")
    runs = tmp_path / "runs"
    created = run_cli("job", "create", "--file", str(yaml), "--runs-dir", str(runs),
                      "--name", "flaky", "--no-progress")
    assert created.returncode == 1
    listed = run_cli("job", "show", "flaky", "--runs-dir", str(runs), "--mini-batches",
                     "-o", "json")
    ids = {Path(o["detail"]).name: o["id"] for o in json.loads(listed.stdout)}
    return runs, ids


def test_debug_of_a_failed_and_a_good_mini_batch_changes_nothing(tmp_path: Path) -> None:
    runs, ids = ran_job(tmp_path)
    before = tree_digest(runs)
    seen = tmp_path / "p" / "seen.log"
    seen_before = seen.read_text()

    bad = run_cli("job", "debug", "flaky", "--runs-dir", str(runs), "--step", "score",
                  "--mini-batch", ids["bad.txt"])
    assert bad.returncode == 1, bad.stderr
    scratch = re.search(r"scratch folder \(removed at the end\): (\S+)", bad.stdout)
    assert scratch is not None and not Path(scratch.group(1)).exists()
    tail = bad.stdout.rstrip().splitlines()[-3:]
    assert tail[0].strip().startswith(f'File "{tmp_path / "p" / "src" / "score.py"}"'), tail
    assert tail[-1] == "RuntimeError: bad.txt is not ready"
    assert "mlpipe/runtime" not in bad.stdout  # the user's frames only

    good = run_cli("job", "debug", "-n", "flaky", "--runs-dir", str(runs), "--step", "score",
                   "--mini-batch", ids["a.txt"])
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout.rstrip().splitlines()[-2:] == ["run() returned:", "['a.txt']"]
    assert seen.read_text() == seen_before + "a.txt\n"  # run() really ran, once

    assert tree_digest(runs) == before  # outputs, logs, journal and job.json untouched

    unknown = run_cli("job", "debug", "flaky", "--runs-dir", str(runs), "--step", "score",
                      "--mini-batch", "nope")
    assert unknown.returncode == 1 and "--mini-batches" in unknown.stderr
    not_parallel = run_cli("job", "debug", "flaky", "--runs-dir", str(runs), "--step", "report",
                           "--mini-batch", ids["a.txt"])
    assert not_parallel.returncode == 1 and "no parallel step 'report'" in not_parallel.stderr
    # the job's one parallel step needs no --step; an id's start names its mini-batch
    short = run_cli("job", "debug", "flaky", "--runs-dir", str(runs), "--mini-batch",
                    ids["a.txt"][:8])
    assert short.returncode == 0 and short.stdout.rstrip().endswith("['a.txt']"), short.stderr
    assert tree_digest(runs) == before


def test_an_id_prefix_that_names_several_mini_batches_lists_them(tmp_path: Path) -> None:
    from tests.jobs.numbers_support import project

    yaml = project(tmp_path / "p", files=40)  # 40 ids over 16 first digits: some share one
    runs = tmp_path / "runs"
    created = run_cli("job", "create", "--file", str(yaml), "--runs-dir", str(runs), "--name",
                      "many", "--no-progress")
    assert created.returncode == 0, created.stdout + created.stderr
    listed = run_cli("job", "show", "many", "--runs-dir", str(runs), "--mini-batches", "-o",
                     "json")
    ids = [o["id"] for o in json.loads(listed.stdout)]
    first = max("0123456789abcdef", key=lambda c: sum(i.startswith(c) for i in ids))
    sharing = sum(i.startswith(first) for i in ids)
    assert sharing >= 3
    several = run_cli("job", "debug", "many", "--runs-dir", str(runs), "--mini-batch", first)
    assert several.returncode == 1, several.stdout
    assert f"{sharing} mini-batches of step 'score' start with '{first}'" in several.stderr
    assert "give more of the id" in several.stderr and "Traceback" not in several.stderr


def test_pdb_opens_on_the_users_exception(tmp_path: Path) -> None:
    runs, ids = ran_job(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "mlpipe", "job", "debug", "flaky", "--runs-dir", str(runs),
         "--step", "score", "--mini-batch", ids["bad.txt"], "--pdb"],
        input="p name\nq\n", capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 1, proc.stderr
    assert "(Pdb)" in proc.stdout and "'bad.txt'" in proc.stdout  # a local of the user's run()
