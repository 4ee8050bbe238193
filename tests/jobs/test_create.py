"""``mlpipe job create`` on YAML written here: signals, resume, continue_on_step_failure."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from tests.jobs.support import create, flaky_pipeline, write


def sleeping_pipeline(folder: Path) -> Path:
    return write(folder / "pipeline.yml", """\
        type: pipeline
        jobs:
          wait:
            type: command
            command: echo waiting; sleep 60
            environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest
            outputs:
              done:
                type: uri_folder
          after:
            type: command
            command: echo after
            environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest
            inputs:
              previous: ${{parent.jobs.wait.outputs.done}}
        """)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_cancels_the_job(runs_dir: Path, tmp_path: Path, sig: int) -> None:
    yaml = sleeping_pipeline(tmp_path / "p")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlpipe", "job", "create", "--file", str(yaml), "--name", "stopme",
         "--no-progress"],
        env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    stdout_file = runs_dir / "stopme" / "wait" / "logs" / "user" / "stdout.txt"  # $MLPIPE_RUNS_DIR
    deadline = time.monotonic() + 60
    while not (stdout_file.exists() and stdout_file.read_text()):
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1, out + err
    record = json.loads((runs_dir / "stopme" / "job.json").read_text())
    assert record["status"] == "canceled"
    assert record["steps"]["wait"]["status"] == "canceled"
    assert record["steps"]["after"]["status"] == "canceled"
    assert "Traceback" not in err


@pytest.mark.slow  # runs whole jobs: CI's second stage
def test_a_failed_job_resumes_under_the_same_name(tmp_path: Path) -> None:
    yaml = flaky_pipeline(tmp_path / "p")
    runs = tmp_path / "runs"
    first = create(yaml, runs, "flaky")
    assert first.proc.returncode == 1
    assert first.record["status"] == "failed"
    assert first.step("score")["status"] == "failed"
    assert first.step("report")["status"] == "skipped"
    seen_first = (tmp_path / "p" / "seen.log").read_text().split()
    assert "bad.txt" not in seen_first and len(seen_first) >= 1

    (tmp_path / "p" / "gate").touch()
    second = create(yaml, runs, "flaky")
    assert second.proc.returncode == 0, second.proc.stdout + second.proc.stderr
    assert second.record["status"] == "completed" and second.record["attempt"] == 2
    assert "resuming the failed job flaky" in second.proc.stdout
    seen = (tmp_path / "p" / "seen.log").read_text().split()
    assert sorted(seen) == ["a.txt", "b.txt", "bad.txt", "c.txt", "d.txt", "e.txt"]  # none twice
    rows = second.append_lines("score")
    assert sorted(rows) == sorted(seen)
    printed = Path(second.step("report")["stdout"]).read_text().split()
    assert sorted(printed) == sorted(seen)

    third = create(yaml, runs, "flaky")
    assert third.proc.returncode == 1 and "already exists and completed" in third.proc.stderr


def test_continue_on_step_failure_can_be_set_from_the_command_line(tmp_path: Path) -> None:
    yaml = write(tmp_path / "p" / "pipeline.yml", """\
        type: pipeline
        settings:
          continue_on_step_failure: false
        jobs:
          fails:
            type: command
            command: exit 7
            environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest
          independent:
            type: command
            command: sleep 0.5; echo fine
            environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest
        """)
    kept = create(yaml, tmp_path / "runs", "kept", "--set", "settings.continue_on_step_failure=true")
    assert kept.proc.returncode == 1
    assert kept.step("fails")["exit_code"] == 7
    assert kept.step("independent")["status"] == "completed"
    assert kept.record["settings"]["continue_on_step_failure"] is True


def test_invalid_yaml_exits_1_with_located_errors(tmp_path: Path) -> None:
    yaml = write(tmp_path / "pipeline.yml", """\
        type: pipeline
        jobs:
          broken:
            type: command
            comand: echo typo
        """)
    proc = run_cli("job", "create", "--file", str(yaml), "--runs-dir", str(tmp_path / "runs"))
    assert proc.returncode == 1
    assert f"{yaml}:5:" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_bad_job_name_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_cli("job", "create", "--file", str(REPO / "samples/file-batch/pipeline.yml"),
                   "--name", "has space", "--runs-dir", str(tmp_path))
    assert proc.returncode == 2 and "invalid job name" in proc.stderr
