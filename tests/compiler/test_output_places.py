"""Outputs stay where they belong: one rule (compiler/outputs.py place_problem) for job
validate and job create; outside the runs folder only with the job's consent, never into
another job's folder, never through '~', never over a file without saying so first."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlpipe.compiler import check_pipeline
from mlpipe.runs import check_job_name
from tests.conftest import REPO


def _project(tmp_path: Path, declared: str, toml: str | None = None) -> Path:
    project = tmp_path / "proj"
    shutil.copytree(REPO / "samples" / "tabular-scoring", project)
    text = (project / "pipeline.yml").read_text().replace(
        "  scores:\n    type: uri_file\n", f"  scores:\n    type: uri_file\n    path: {declared}\n")
    (project / "out.yml").write_text(text)
    if toml is not None:
        (project / "mlpipe.toml").write_text(toml)
    return project / "out.yml"


def _problems(yaml: Path, runs: Path, **options: bool) -> list[tuple[str, str]]:
    result = check_pipeline(yaml, runs_dir=runs, job_name="mine", **options)
    return [(d.severity, d.message) for d in result.diagnostics
            if d.code in ("output-outside-runs", "output-place")]


def _create(yaml: Path, runs: Path, *extra: str,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mlpipe", "job", "create", "-f", str(yaml),
                           "--runs-dir", str(runs), "-n", "mine", "--no-progress", *extra],
                          capture_output=True, text=True, timeout=300, cwd=yaml.parent,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


@pytest.mark.parametrize("declared", ["~/.bashrc", "~root/x.csv", " ~/x.csv"])
def test_a_path_starting_with_a_tilde_is_refused_even_when_external_outputs_are_allowed(
        tmp_path: Path, declared: str) -> None:
    yaml = _project(tmp_path, repr(declared) if declared.startswith(" ") else declared)
    for allow in (False, True):
        [(severity, message)] = _problems(yaml, tmp_path / "runs", allow_external_outputs=allow)
        assert severity == "error" and "starts with '~', which mlpipe does not expand" in message


def test_home_is_never_written_through_a_tilde(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# mine\n")
    yaml = _project(tmp_path, "~/.bashrc")
    proc = _create(yaml, tmp_path / "runs", "--allow-external-outputs", env={"HOME": str(home)})
    assert proc.returncode == 1 and "nothing was run" in proc.stderr
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert not (yaml.parent / "~").exists()


@pytest.mark.parametrize("declared", [
    "azureml://datastores/ds/paths/../../other/score/outputs/x.csv",  # another job's folder
    "azureml://datastores/ds/paths/../../assets/registry.json",  # the runs folder's own files
    "azureml://datastores/ds/paths/../../mine/job.json",  # this job's record
    "azureml://datastores/ds/paths/../../mine/score/.mlpipe/journal/index",  # its state
    "RUNS/other/x.csv",
])
def test_other_jobs_and_the_jobs_own_files_are_never_outputs(tmp_path: Path,
                                                             declared: str) -> None:
    runs = tmp_path / "runs"
    yaml = _project(tmp_path, declared.replace("RUNS", str(runs)))
    for allow in (False, True):
        [(severity, message)] = _problems(yaml, runs, allow_external_outputs=allow)
        assert severity == "error" and "would be written" in message, message


def test_a_link_into_another_jobs_folder_is_seen_through(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    (runs / "other").mkdir(parents=True)
    (tmp_path / "proj_out").symlink_to(runs / "other")
    yaml = _project(tmp_path, str(tmp_path / "proj_out" / "x.csv"))
    [(severity, message)] = _problems(yaml, runs, allow_external_outputs=True)
    assert severity == "error" and "job other's folder" in message


def test_outside_the_runs_folder_is_an_error_unless_the_job_allows_it(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    yaml = _project(tmp_path, "../elsewhere/scores.csv")
    [(severity, message)] = _problems(yaml, runs)
    assert severity == "error" and "outside the runs folder" in message
    [(severity, _)] = _problems(yaml, runs, allow_external_outputs=True)
    assert severity == "warning"
    inside = _project(tmp_path / "b", "azureml://datastores/ds/paths/${{name}}/s.csv")
    assert _problems(inside, runs) == []


def test_mlpipe_toml_allows_external_outputs_for_the_pipelines_beside_it(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    yaml = _project(tmp_path, "../elsewhere/scores.csv", "[outputs]\nallow_external = true\n")
    [(severity, _)] = _problems(yaml, runs)
    assert severity == "warning"
    (yaml.parent / "mlpipe.toml").write_text("[outputs]\nallow_external = 'yes'\nother = 1\n")
    result = check_pipeline(yaml, runs_dir=runs, job_name="mine")
    messages = [d.message for d in result.diagnostics if d.severity == "error"]
    assert any("must be true or false" in m for m in messages)
    assert any("unknown key 'other'" in m for m in messages)


def test_an_existing_file_is_never_overwritten_by_the_append_row_file(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    target = tmp_path / "elsewhere" / "scores.csv"
    target.parent.mkdir()
    target.write_text("someone else's\n")
    yaml = _project(tmp_path, str(target))
    refused = _create(yaml, runs)
    assert refused.returncode == 1 and target.read_text() == "someone else's\n"
    proc = _create(yaml, runs, "--allow-external-outputs")
    assert proc.returncode == 1, proc.stdout
    assert f"writes its append_row file to {target}, which exists and was not written by " \
           "this job" in proc.stderr and "the job was not started" in proc.stderr
    assert target.read_text() == "someone else's\n" and ": started" not in proc.stdout
    target.unlink()
    assert _create(yaml, runs, "--allow-external-outputs").returncode == 0
    assert len(target.read_text().splitlines()) == 120


def test_the_runs_folders_own_names_are_not_job_names() -> None:
    for name in ("datastores", "assets", "Datastores"):
        assert "reserved" in (check_job_name(name) or "")
    assert check_job_name("j1\n") is not None  # a trailing newline is no part of a name


def test_two_outputs_on_one_path_or_an_output_over_an_input_are_refused(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    twice = tmp_path / "twice" / "p.yml"
    twice.parent.mkdir()
    step = ("    type: command\n    command: echo\n    environment: azureml:env@latest\n"
            "    outputs:\n      out:\n        type: uri_folder\n"
            "        path: azureml://datastores/ds/paths/{}\n")
    twice.write_text("type: pipeline\njobs:\n  a:\n" + step.format("same")
                     + "  b:\n" + step.format("same/inner"))
    result = check_pipeline(twice, runs_dir=runs, job_name="mine")
    messages = [d.message for d in result.diagnostics if d.code == "output-place"]
    assert any("output a.out would be written over output b.out" in m for m in messages), \
        result.diagnostics
    over_input = _project(tmp_path / "in", "./data", toml="[outputs]\nallow_external = true\n")
    result = check_pipeline(over_input, runs_dir=runs, job_name="mine")
    messages = [d.message for d in result.diagnostics if d.code == "output-place"]
    assert any("would be written over the data of input" in m for m in messages), \
        result.diagnostics
