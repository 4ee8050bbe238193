"""Nothing of the user's is destroyed: mlpipe writes beside the user's files in an output
place, never over them; an output never holds the runs folder, the pipeline's folder or a
datastore's root; a link planted in a job's folder is never written through; the runs
folder is never read as input data."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.jobs.support import create
from tests.jobs.user_files_support import HEADER, parallel_project, sweep_project, tree_hashes


def test_a_sweep_copies_its_best_trial_beside_the_users_files(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    yaml = sweep_project(project, "./victim")
    (project / "victim").mkdir()
    (project / "victim" / "keep.txt").write_text("mine\n")
    ran = create(yaml, tmp_path / "runs", "s1", "--allow-external-outputs")
    assert ran.proc.returncode == 0, ran.proc.stdout + ran.proc.stderr
    assert (project / "victim" / "keep.txt").read_text() == "mine\n"
    assert (project / "victim" / "model.txt").read_text() == "trained\n"


def test_a_sweep_never_copies_over_a_file_it_did_not_write(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    yaml = sweep_project(project, "./victim")
    (project / "victim").mkdir()
    (project / "victim" / "model.txt").write_text("the user's model\n")
    ran = create(yaml, tmp_path / "runs", "s1", "--allow-external-outputs")
    assert ran.proc.returncode == 1
    error = ran.step("tune")["error"]
    assert f"{project / 'victim' / 'model.txt'} exists and was not written by this job" in error
    assert (project / "victim" / "model.txt").read_text() == "the user's model\n"


def test_what_one_job_copied_is_not_another_jobs_to_replace(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    yaml = sweep_project(project, "./victim")
    assert create(yaml, tmp_path / "runs", "s1", "--allow-external-outputs").proc.returncode == 0
    other = create(yaml, tmp_path / "runs", "s2", "--allow-external-outputs")
    assert other.proc.returncode == 1  # s1 wrote model.txt, not s2
    assert "was not written by this job" in other.step("tune")["error"]


def test_an_output_over_the_pipelines_folder_is_refused_and_nothing_is_deleted(
        tmp_path: Path) -> None:
    project = tmp_path / "proj"
    yaml = sweep_project(project, ".")
    (project / "notes.txt").write_text("my notes\n")
    before = tree_hashes(project)
    ran = create(yaml, tmp_path / "runs", "s1", "--allow-external-outputs", cwd=project)
    assert ran.proc.returncode == 1 and ran.record is None
    assert "would be written over the pipeline's own folder" in ran.proc.stderr
    ran = create(yaml, project / "mlpipe-runs", "s1", "--allow-external-outputs", cwd=project)
    assert ran.proc.returncode == 1 and "would be written over the runs folder" in ran.proc.stderr
    assert tree_hashes(project, skip=project / "mlpipe-runs") == before


def test_an_output_holding_the_runs_folder_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    yaml = sweep_project(project, "../outer")
    runs = tmp_path / "outer" / "runs"
    ran = create(yaml, runs, "s1", "--allow-external-outputs")
    assert ran.proc.returncode == 1
    assert "would be written over the runs folder" in ran.proc.stderr


def test_an_output_at_a_datastores_root_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    yaml = sweep_project(project, "azureml://datastores/workspaceblobstore/paths/")
    runs = tmp_path / "runs"
    other = runs / "datastores" / "workspaceblobstore" / "other-job" / "out.txt"
    other.parent.mkdir(parents=True)
    other.write_text("another job's output\n")
    ran = create(yaml, runs, "s1")
    assert ran.proc.returncode == 1
    assert "root of datastore 'workspaceblobstore'" in ran.proc.stderr
    assert other.read_text() == "another job's output\n"


def test_the_runs_folder_inside_an_input_is_never_read_as_data(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    yaml = parallel_project(project, data_path=".", files=5)
    user_files = sorted(p.name for p in project.rglob("*") if p.is_file())
    for name in ("first", "second"):  # the second finds the first's records and logs
        ran = create(yaml, project / "mlpipe-runs", name, cwd=project)
        assert ran.proc.returncode == 0, ran.proc.stdout + ran.proc.stderr
        rows = sorted(ran.append_lines("score"))
        assert rows == user_files, rows


def _failed_job(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A job that failed (resumable): its yaml, runs folder and the folder outside."""
    project = tmp_path / "proj"
    yaml = parallel_project(project, files=2)
    (project / "fail").write_text("")
    runs = tmp_path / "runs"
    ran = create(yaml, runs, "j1")
    assert ran.proc.returncode == 1 and ran.record is not None
    (project / "fail").unlink()
    outside = tmp_path / "outside"
    outside.mkdir()
    return yaml, runs, outside


def test_a_resume_never_writes_through_a_link_planted_over_an_output(tmp_path: Path) -> None:
    yaml, runs, outside = _failed_job(tmp_path)
    rows = runs / "j1" / "score" / "outputs" / "rows"
    shutil.rmtree(rows)
    rows.symlink_to(outside, target_is_directory=True)
    ran = create(yaml, runs, "j1")
    assert ran.proc.returncode == 1
    assert "would be written through a link" in ran.proc.stderr and str(rows) in ran.proc.stderr
    assert list(outside.iterdir()) == []


def test_a_resume_never_writes_through_a_link_planted_over_the_outputs_folder(
        tmp_path: Path) -> None:
    yaml, runs, outside = _failed_job(tmp_path)
    outputs = runs / "j1" / "score" / "outputs"
    shutil.rmtree(outputs)
    outputs.symlink_to(outside, target_is_directory=True)
    ran = create(yaml, runs, "j1")
    assert ran.proc.returncode == 1 and "written through a link" in ran.proc.stderr
    assert list(outside.iterdir()) == []


def test_a_resume_never_writes_through_a_link_planted_over_a_steps_logs(tmp_path: Path) -> None:
    yaml, runs, outside = _failed_job(tmp_path)
    logs = runs / "j1" / "score" / "logs"
    shutil.rmtree(logs)
    os.symlink(outside, logs)
    ran = create(yaml, runs, "j1")
    assert ran.proc.returncode == 1
    assert f"{logs} is a link to {outside}" in ran.proc.stderr
    assert list(outside.iterdir()) == []


SLOW_WRITER = HEADER + """\
jobs:
  write:
    type: command
    environment: azureml:env:1
    outputs:
      out:
        type: uri_folder
        path: PATH
    command: echo started > ${{outputs.out}}/started.txt; sleep WAIT; echo done > ${{outputs.out}}/rows.txt
"""


def _writer(root: Path, path: str, wait: float) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    yaml = root / "pipeline.yml"
    yaml.write_text(SLOW_WRITER.replace("PATH", path).replace("WAIT", str(wait)))
    (root / "mlpipe.toml").write_text("[outputs]\nallow_external = true\n")
    return yaml


@pytest.mark.slow
def test_two_jobs_never_write_one_output_place_at_once(tmp_path: Path) -> None:
    shared = tmp_path / "shared" / "out"
    first = subprocess.Popen(
        [sys.executable, "-m", "mlpipe", "job", "create", "-f",
         str(_writer(tmp_path / "a", str(shared), 120)), "--runs-dir", str(tmp_path / "runs"),
         "-n", "first", "--no-progress"], env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (shared / "started.txt").exists():
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.1)
        for name, path, runs in (("same", str(shared), tmp_path / "runs"),
                                 ("inside", str(shared / "sub"), tmp_path / "runs"),
                                 ("around", str(shared.parent), tmp_path / "other-runs"),
                                 ("elsewhere", str(shared), tmp_path / "other-runs")):
            second = create(_writer(tmp_path / name, path, 0), runs, name)
            assert second.proc.returncode == 1 and second.record is None, second.proc.stdout
            assert "is being written by job first" in second.proc.stderr, second.proc.stderr
        assert first.poll() is None  # it was running all along
    finally:
        first.kill()  # kill -9: the kernel lets its locks go
        first.wait()
    again = create(_writer(tmp_path / "same", str(shared), 0), tmp_path / "runs", "later")
    assert again.proc.returncode == 0, again.proc.stdout + again.proc.stderr
