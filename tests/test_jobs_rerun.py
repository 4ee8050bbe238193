"""``mlpipe job rerun NAME [--failed-only] [--step STEP ...]``: the job runs again in place."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .conftest import run_cli
from .test_jobs_create import flaky_pipeline


def failed_job(tmp_path: Path) -> tuple[Path, Path]:
    yaml = flaky_pipeline(tmp_path / "p")
    runs = tmp_path / "runs"
    created = run_cli("job", "create", "--file", str(yaml), "--runs-dir", str(runs),
                      "--name", "flaky", "--no-progress")
    assert created.returncode == 1  # bad.txt failed: mini_batch_error_threshold 0
    return runs, tmp_path / "p"


def test_failed_only_runs_only_the_failed_mini_batch_and_keeps_every_row(tmp_path: Path) -> None:
    runs, project = failed_job(tmp_path)
    seen = project / "seen.log"
    seen.unlink()
    (project / "gate").touch()  # the fix
    again = run_cli("job", "rerun", "flaky", "--runs-dir", str(runs), "--failed-only",
                    "--no-progress")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "rerunning job flaky in place (attempt 2): score, report" in again.stdout
    assert seen.read_text().splitlines() == ["bad.txt"]  # run() saw only the failed one
    rows = (runs / "flaky" / "score" / "outputs" / "rows" / "parallel_run_step.txt")
    assert rows.read_text().splitlines() == ["a.txt", "b.txt", "bad.txt", "c.txt", "d.txt",
                                             "e.txt"]
    record = json.loads((runs / "flaky" / "job.json").read_text())
    assert record["status"] == "completed" and record["attempt"] == 2
    result = (runs / "flaky" / "score" / "logs" / "job_result.txt").read_text()
    assert "5 mini-batches reused" in result

    nothing = run_cli("job", "rerun", "flaky", "--runs-dir", str(runs), "--failed-only")
    assert nothing.returncode == 0 and "nothing to rerun" in nothing.stdout
    assert seen.read_text().splitlines() == ["bad.txt"]


def test_step_reruns_a_completed_command_step_alone(tmp_path: Path) -> None:
    runs, project = failed_job(tmp_path)
    (project / "gate").touch()
    assert run_cli("job", "rerun", "flaky", "--runs-dir", str(runs), "--failed-only",
                   "--no-progress").returncode == 0
    seen = project / "seen.log"
    before = seen.read_text()
    report_log = runs / "flaky" / "report"
    again = run_cli("job", "rerun", "-n", "flaky", "--runs-dir", str(runs), "--step", "report",
                    "--no-progress")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "(attempt 3): report" in again.stdout
    assert seen.read_text() == before  # the parallel step was kept
    assert report_log.is_dir()
    wrong = run_cli("job", "rerun", "flaky", "--runs-dir", str(runs), "--step", "reprot")
    assert wrong.returncode == 2 and "did you mean 'report'?" in wrong.stderr


def test_without_failed_only_every_step_runs_from_scratch(tmp_path: Path) -> None:
    runs, project = failed_job(tmp_path)
    (project / "gate").touch()
    (project / "seen.log").unlink()
    again = run_cli("job", "rerun", "flaky", "--runs-dir", str(runs), "--no-progress")
    assert again.returncode == 0, again.stdout + again.stderr
    assert sorted((project / "seen.log").read_text().split()) == [
        "a.txt", "b.txt", "bad.txt", "c.txt", "d.txt", "e.txt"]
    rows = (runs / "flaky" / "score" / "outputs" / "rows" / "parallel_run_step.txt")
    assert len(rows.read_text().splitlines()) == 6


def test_a_running_job_is_refused(tmp_path: Path) -> None:
    runs, _ = failed_job(tmp_path)
    path = runs / "flaky" / "job.json"
    record = json.loads(path.read_text())
    import psutil

    me = psutil.Process(os.getpid())  # this live process "runs" it
    record.update(status="running", pid=me.pid, pid_create_time=me.create_time())
    path.write_text(json.dumps(record))
    refused = run_cli("job", "rerun", "flaky", "--runs-dir", str(runs), "--failed-only")
    assert refused.returncode == 1 and "still running" in refused.stderr
