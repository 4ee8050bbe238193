"""``mlpipe job validate`` / ``mlpipe component validate`` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.compiler.support import PARALLEL_STEP, line_of, make_project, pipeline, write
from tests.conftest import run_cli


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


def test_valid_file_prints_one_ok_line(project: Path) -> None:
    pipeline(project, PARALLEL_STEP)
    proc = run_cli("job", "validate", "--file", "pipeline.yml", cwd=project)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "pipeline.yml: OK (pipeline job, 1 step)\n", "")


def test_invalid_file_lists_every_problem_then_a_summary(project: Path) -> None:
    bad = pipeline(project, PARALLEL_STEP + "    retry_settings:\n      timeout: -5\n")
    bad.write_text(bad.read_text().replace("${{inputs.label}}", "${{inputs.lable}}"))
    proc = run_cli("job", "validate", "--file", "pipeline.yml", cwd=project)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    line = line_of(bad, "timeout: -5")
    assert f"pipeline.yml:{line}:7: jobs.score.retry_settings.timeout: must be in (0, 259200], got -5" in lines
    assert any(x.startswith(f"pipeline.yml:{line_of(bad, 'program_arguments')}:7: "
                            "jobs.score.task.program_arguments: ${{inputs.lable}} names no input") for x in lines)
    assert lines[-1] == "pipeline.yml: invalid: 2 errors"


def test_usage_errors_exit_2(project: Path) -> None:
    proc = run_cli("job", "validate", "--file", "missing.yml", cwd=project)
    assert proc.returncode == 2 and proc.stderr == "mlpipe: error: missing.yml: file not found\n"
    proc = run_cli("job", "validate", cwd=project)
    assert proc.returncode == 2 and "give at least one file" in proc.stderr
    pipeline(project, PARALLEL_STEP)
    proc = run_cli("job", "validate", "pipeline.yml", "--set", "jobs.score", cwd=project)
    assert proc.returncode == 2 and "expected KEY.PATH=VALUE" in proc.stderr
    proc = run_cli("job", "validate", "pipeline.yml", "--output", "xml", cwd=project)
    assert proc.returncode == 2


def test_json_output(project: Path) -> None:
    pipeline(project, PARALLEL_STEP.replace("entry_script: score.py", "entry_script: nope.py"))
    proc = run_cli("job", "validate", "--file", "pipeline.yml", "--output", "json", cwd=project)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["valid"] is False
    [item] = report["files"]
    assert item["file"] == "pipeline.yml" and item["errors"] == 1
    [diag] = item["diagnostics"]
    assert diag["key_path"] == "jobs.score.task.entry_script" and diag["code"] == "missing-path"
    assert diag["line"] == line_of(project / "pipeline.yml", "entry_script") and diag["severity"] == "error"


def test_many_files_and_unknown_yaml(project: Path) -> None:
    pipeline(project, PARALLEL_STEP)
    write(project, "conda.yml", "name: env\ndependencies:\n  - pandas\n")
    write(project, "broken.yml", "type: pipeline\njobs: [\n")
    write(project, "job.yml", "type: finetuning\nmodel: azureml://registries/azureml-meta/models/Llama-2-7b\n")
    write(project, "schema.yml", "type: object\nproperties: {}\n")
    proc = run_cli("job", "validate", "pipeline.yml", "conda.yml", "job.yml", "schema.yml", "--skip-unknown",
                   cwd=project)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.splitlines()[-4:] == ["conda.yml: skipped: not an Azure ML job or component",
                                             "job.yml: skipped: a standalone (non-pipeline) Azure ML job",
                                             "schema.yml: skipped: not an Azure ML job or component",
                                             "1 file checked: 1 valid, 0 invalid, 3 skipped (0 errors, 0 warnings)"]
    proc = run_cli("job", "validate", "pipeline.yml", "broken.yml", "--file", "conda.yml", cwd=project)
    assert proc.returncode == 1
    assert "conda.yml:1:1: not an Azure ML pipeline job or component" in proc.stdout
    assert "broken.yml: invalid: 1 error" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "3 files checked: 1 valid, 2 invalid (2 errors, 0 warnings)"


def test_set_show_plan_and_no_path_checks(project: Path) -> None:
    pipeline(project, PARALLEL_STEP.replace("path: ./data", "path: ./not-checked-in"))
    proc = run_cli("job", "validate", "pipeline.yml", cwd=project)
    assert proc.returncode == 1 and "input path './not-checked-in' not found" in proc.stdout
    proc = run_cli("job", "validate", "pipeline.yml", "--no-path-checks", "--show-plan",
                   "--set", "jobs.score.mini_batch_size=7", "--set", "name=renamed", cwd=project)
    assert proc.returncode == 0, proc.stdout
    head, _, plan_text = proc.stdout.partition("\n")
    assert head == "pipeline.yml: OK (pipeline job, 1 step)"
    plan = json.loads(plan_text)
    assert plan["steps"][0]["mini_batch_size"] == "7" and plan["name"] == "renamed"
    assert plan["run_dir"].endswith("renamed")


def test_component_validate(project: Path) -> None:
    pipeline(project, PARALLEL_STEP)
    write(project, "comp.yml", "type: command\nname: c\ncode: ./src\ncommand: python prep.py ${{inputs.x}}\n"
                               "environment: azureml:env:1\n")
    proc = run_cli("component", "validate", "--file", "comp.yml", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.startswith("comp.yml:4:1: command: ${{inputs.x}} names no input of this step")
    write(project, "comp.yml", "type: command\nname: c\ncode: ./src\ncommand: python prep.py\n"
                               "environment: azureml:env:1\n")
    proc = run_cli("component", "validate", "comp.yml", cwd=project)
    assert (proc.returncode, proc.stdout) == (0, "comp.yml: OK (command component)\n")
    proc = run_cli("component", "validate", "pipeline.yml", cwd=project)
    assert proc.returncode == 1 and "use 'mlpipe job validate'" in proc.stdout


def test_set_keeps_problems_found_while_reading(project: Path) -> None:
    write(project, "dup.yml", "type: pipeline\njobs:\n  b:\n    type: command\n    command: echo hi\n"
                              "    command: echo ho\n    compute: azureml:cpu\n    environment: azureml:env:1\n")
    proc = run_cli("job", "validate", "dup.yml", "--set", "jobs.b.command=x", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.startswith("dup.yml:6:5: jobs.b.command: duplicate key 'command'")


def test_standalone_jobs(project: Path) -> None:
    write(project, "job.yml", "$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json\n"
                              "command: python prep.py --n ${{inputs.count}}\ncode: src\ninputs:\n  count: 3\n"
                              "environment: azureml:env:1\ncompute: azureml:cpu\n")
    write(project, "tune.yml", "type: finetuning\nmodel: azureml://registries/azureml-meta/models/Llama-2-7b\n")
    proc = run_cli("job", "validate", "job.yml", cwd=project)
    assert (proc.returncode, proc.stdout) == (0, "job.yml: OK (command job)\n")
    bad = project / "job.yml"
    bad.write_text(bad.read_text().replace("${{inputs.count}}", "${{inputs.cuont}}"))
    proc = run_cli("job", "validate", "job.yml", "tune.yml", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        "job.yml:2:1: command: ${{inputs.cuont}} names no input of this step (declared inputs: "
        "count) (did you mean 'count'?)",
        "job.yml: invalid: 1 error",
        "tune.yml:1:1: a standalone finetuning job: mlpipe validates pipeline jobs, components and "
        "standalone command, sweep, spark, automl jobs (pass --skip-unknown to skip such files)",
        "tune.yml: invalid: 1 error",
        "2 files checked: 0 valid, 2 invalid (2 errors, 0 warnings)"]
    # job create runs a standalone command job (as its one step): the same problem stops it
    proc = run_cli("job", "create", "--file", "job.yml", cwd=project)
    assert proc.returncode == 1 and "job.yml:2:1: command: ${{inputs.cuont}} names no input of " \
        "this step (declared inputs: count)" in proc.stderr
    proc = run_cli("job", "create", "--file", "tune.yml", cwd=project)
    assert proc.returncode == 1 and "this is a standalone finetuning job: mlpipe runs pipeline " \
        "jobs (type: pipeline) and standalone command and sweep jobs" in proc.stderr


def test_command_and_parallel_files_without_schema_that_are_jobs(project: Path) -> None:
    write(project, "job.yml", "type: command\ncommand: python prep.py --n ${{inputs.n}}\ncode: src\n"
                              "inputs:\n  n: 3\nenvironment: azureml:env:1\ncompute: azureml:cpu\n")
    write(project, "pjob.yml", "type: parallel\ninput_data: ${{inputs.data}}\n"
                               "inputs:\n  data: {type: uri_folder, path: ./data}\n"
                               "task: {type: run_function, code: src, entry_script: score.py}\n")
    proc = run_cli("job", "validate", "job.yml", "pjob.yml", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[:3] == [
        "job.yml: OK (command job)",
        "pjob.yml:1:1: a standalone parallel job: Azure ML runs parallel steps only inside a "
        "pipeline job (azure-ai-ml: 'Unsupported job type: parallel'); make it a step of a "
        "pipeline job, or a parallel component (no compute, inputs declared) (pass "
        "--skip-unknown to skip such files)",
        "pjob.yml: invalid: 1 error"]
