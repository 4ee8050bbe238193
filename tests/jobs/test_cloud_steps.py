"""job create with steps only Azure runs: the job stops before anything runs with one message
per step naming it, its type and the way out; --skip-step with the step's outputs given runs
the rest."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.jobs.support import create

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings: {default_compute: azureml:cpu-cluster}
inputs:
  train: {type: mltable, path: azureml:bank_train:1}
jobs:
  classify:
    type: automl
    task: classification
    target_column_name: y
    training_data: ${{parent.inputs.train}}
    outputs:
      best_model: {type: mlflow_model}
  wrangle:
    type: spark
    code: ./src
    entry: {file: wrangle.py}
    resources: {instance_type: standard_e4s_v3, runtime_version: "3.4"}
    conf:
      spark.driver.cores: 1
      spark.driver.memory: 1g
      spark.executor.cores: 1
      spark.executor.memory: 1g
      spark.executor.instances: 1
  register:
    type: command
    code: ./src
    environment: azureml:env:1
    inputs:
      model: ${{parent.jobs.classify.outputs.best_model}}
    outputs:
      seen: {type: uri_folder}
    command: cp ${{inputs.model}}/MLmodel ${{outputs.seen}}/
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "wrangle.py").write_text("print('spark')\n")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "MLmodel").write_text("flavors: {}\n")
    path = tmp_path / "pipeline.yml"
    path.write_text(PIPELINE)
    return path


@pytest.mark.skipif(importlib.util.find_spec("pyspark") is not None,
                    reason="with pyspark the Spark step runs")
def test_steps_only_azure_runs_stop_the_job_before_it_starts(tmp_path: Path) -> None:
    path = _project(tmp_path)
    ran = create(path, tmp_path / "runs", "cloud-job")
    assert ran.proc.returncode == 1 and ran.record is None
    lines = [line for line in ran.proc.stderr.splitlines() if "warning:" not in line]
    assert lines[0] == (
        f"{path}:7:3: jobs.classify: step 'classify' (type automl, task classification) cannot "
        "run here: AutoML trains its models in Azure ML only (run the job in Azure ML, or: "
        "--skip-step classify --set jobs.classify.outputs.best_model.path=./local/best_model)")
    assert lines[1].startswith(f"{path}:14:3: jobs.wrangle: step 'wrangle' (type spark) cannot "
                               "run here: Spark is not installed here")
    assert "The job was not started" in lines[2]
    assert not (tmp_path / "runs" / "cloud-job").exists()


def test_a_skipped_step_with_its_outputs_given_lets_the_rest_run(tmp_path: Path) -> None:
    path = _project(tmp_path)
    ran = create(path, tmp_path / "runs", "skipping", "--skip-step", "classify",
                 "--set", "jobs.classify.outputs.best_model.path=./model",
                 "--skip-step", "wrangle")
    assert ran.proc.returncode == 0, ran.proc.stderr
    classify = ran.step("classify")
    assert classify["status"] == "completed" and classify["skipped_by_user"] is True
    assert ran.output("classify", "best_model") == tmp_path / "model"
    assert (ran.output("register", "seen") / "MLmodel").read_text() == "flavors: {}\n"


def test_a_skipped_step_needs_its_outputs(tmp_path: Path) -> None:
    path = _project(tmp_path)
    ran = create(path, tmp_path / "runs", "no-outputs", "--skip-step", "classify",
                 "--skip-step", "wrangle")
    assert ran.proc.returncode == 1 and ran.record is None
    assert [line for line in ran.proc.stderr.splitlines() if "warning:" not in line][0] == (
        f"{path}:13:7: jobs.classify.outputs.best_model: --skip-step classify: output "
        "'best_model' has no local path (give it: --set "
        "jobs.classify.outputs.best_model.path=./local/path)")
    proc = run_cli("job", "create", "--file", str(path), "--runs-dir", str(tmp_path / "runs"),
                   "--skip-step", "clasify")
    assert proc.returncode == 2
    assert "--skip-step clasify: no step of that name (steps: classify, wrangle, register); " \
           "did you mean 'classify'?" in proc.stderr
