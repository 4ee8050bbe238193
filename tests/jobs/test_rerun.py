"""``mlpipe job rerun NAME [--failed-only] [--step STEP ...]``: the job runs again in place."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.jobs.support import flaky_pipeline


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
    # the threshold stops the step at bad.txt: a and b are done, c..e may or may not be
    first = seen.read_text().splitlines()
    assert first[:2] == ["a.txt", "b.txt"] and "bad.txt" not in first
    seen.unlink()
    (project / "gate").touch()  # the fix
    again = run_cli("job", "rerun", "flaky", "--runs-dir", str(runs), "--failed-only",
                    "--no-progress")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "rerunning job flaky in place (attempt 2): score, report" in again.stdout
    everything = {"a.txt", "b.txt", "bad.txt", "c.txt", "d.txt", "e.txt"}
    rerun = seen.read_text().splitlines()  # run() saw only what had not succeeded
    assert "bad.txt" in rerun and sorted(rerun) == sorted(everything - set(first))
    rows = (runs / "flaky" / "score" / "outputs" / "rows" / "parallel_run_step.txt")
    assert rows.read_text().splitlines() == ["a.txt", "b.txt", "bad.txt", "c.txt", "d.txt",
                                             "e.txt"]
    record = json.loads((runs / "flaky" / "job.json").read_text())
    assert record["status"] == "completed" and record["attempt"] == 2
    result = (runs / "flaky" / "score" / "logs" / "job_result.txt").read_text()
    assert f"{len(first)} mini-batches reused" in result

    nothing = run_cli("job", "rerun", "flaky", "--runs-dir", str(runs), "--failed-only")
    assert nothing.returncode == 0 and "nothing to rerun" in nothing.stdout
    assert seen.read_text().splitlines() == rerun


@pytest.mark.slow  # runs whole jobs: CI's second stage
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


@pytest.mark.slow  # runs whole jobs: CI's second stage
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


@pytest.mark.slow  # runs whole jobs: CI's second stage
def test_a_rerun_killed_with_kill_9_resumes_with_every_row_once(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    from tests.jobs.support import write

    project = tmp_path / "p"
    names = [f"f{index:02d}" for index in range(40)]
    for name in names:
        write(project / "data" / f"{name}.txt", f"{name}\n")
    yaml = flaky_pipeline(tmp_path / "base")  # the same pipeline, over 40 files, run() slower
    write(project / "pipeline.yml", yaml.read_text().replace(str(tmp_path / "base"), str(project)))
    write(project / "src" / "score.py", """\
        import os, time

        def init():
            pass

        def run(mini_batch):
            if not os.path.exists(os.environ["GATE"]):
                raise RuntimeError("not ready")
            time.sleep(0.1)
            names = [os.path.basename(path) for path in mini_batch]
            with open(os.environ["SEEN_LOG"], "a") as fh:
                fh.write("".join(name + "\\n" for name in names))
            return names
        """)
    runs = tmp_path / "runs"
    first = run_cli("job", "create", "--file", str(project / "pipeline.yml"), "--runs-dir",
                    str(runs), "--name", "slow", "--no-progress")
    assert first.returncode == 1
    (project / "gate").touch()
    seen = project / "seen.log"
    rerun = subprocess.Popen(
        [sys.executable, "-m", "mlpipe", "job", "rerun", "slow", "--runs-dir", str(runs),
         "--failed-only", "--no-progress"], start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    deadline = time.monotonic() + 120
    while not (seen.exists() and len(seen.read_text().split()) >= 10):
        assert time.monotonic() < deadline and rerun.poll() is None, "the rerun never got going"
        time.sleep(0.05)
    os.killpg(rerun.pid, signal.SIGKILL)
    rerun.wait(30)
    again = run_cli("job", "rerun", "slow", "--runs-dir", str(runs), "--failed-only",
                    "--no-progress")
    assert again.returncode == 0, again.stdout + again.stderr
    rows = (runs / "slow" / "score" / "outputs" / "rows" / "parallel_run_step.txt")
    assert rows.read_text().splitlines() == [f"{name}.txt" for name in names]
