"""A command step that logs with mlflow runs here as in Azure ML: without mlflow installed it
imports mlpipe's stand-in, and what it logs lands in the step's folder (a sweep trial is such a
step, which is how a sweep reads its objective); a standalone command job likewise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlpipe.jobs.step_metrics import mlflow_installed
from tests.jobs.support import run_here, write

LOGGER = """\
import mlflow

with mlflow.start_run():
    mlflow.log_param("kind", "plain")
    mlflow.log_metric("loss", 0.5, step=1)
    mlflow.log_metrics({"loss": 0.25, "acc": 0.9}, step=2)
print("logged")
"""

PIPELINE = """\
type: pipeline
jobs:
  train:
    type: command
    code: ./src
    environment: azureml:env:1
    command: python log.py
"""

JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
code: ./src
environment: azureml:env:1
command: python log.py
compute: azureml:cpu
"""


@pytest.mark.skipif(mlflow_installed(), reason="the stand-in is used only without mlflow")
@pytest.mark.parametrize(("text", "step"), [(PIPELINE, "train"), (JOB, "command")],
                         ids=["pipeline step", "standalone job"])
def test_a_command_steps_mlflow_metrics_land_in_its_folder(tmp_path: Path, text: str,
                                                          step: str) -> None:
    write(tmp_path / "src" / "log.py", LOGGER)
    ran = run_here(write(tmp_path / "job.yml", text), tmp_path / "runs", "logged")
    assert ran.record is not None and ran.record["status"] == "completed", ran.record
    folder = tmp_path / "runs" / "logged" / step
    records = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
    assert [(r["key"], r["value"], r["step"]) for r in records] == [
        ("loss", 0.5, 1), ("loss", 0.25, 2), ("acc", 0.9, 2)]
    assert (folder / "logs" / "user" / "std_log.txt").read_text().strip() == "logged"


@pytest.mark.skipif(mlflow_installed(), reason="the stand-in is used only without mlflow")
def test_a_steps_own_pythonpath_keeps_the_mlflow_stand_in(tmp_path: Path) -> None:
    write(tmp_path / "src" / "log.py", "import helper\n" + LOGGER)
    write(tmp_path / "lib" / "helper.py", "")
    text = PIPELINE + f"    environment_variables:\n      PYTHONPATH: {tmp_path / 'lib'}\n"
    ran = run_here(write(tmp_path / "job.yml", text), tmp_path / "runs", "own")
    assert ran.record is not None and ran.record["status"] == "completed", ran.record
    logged = (tmp_path / "runs" / "own" / "train" / "metrics.jsonl").read_text().splitlines()
    assert len(logged) == 3
