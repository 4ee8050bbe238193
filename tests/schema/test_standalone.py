"""Standalone job files (``type: command``, ``sweep``, ``spark``, ``automl``; mlpipe/schema/
standalone.py) and typeless pipeline steps: small copies of published azureml-examples
files are accepted, and a single mistake in each is rejected with its message, key path and
line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlpipe.schema import load_job, load_pipeline
from mlpipe.schema.kinds import job_type

COMMAND_JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
command: python hello.py --greeting ${{inputs.greeting}}
code: src
inputs:
  greeting: hello
environment: azureml://registries/azureml/environments/sklearn-1.5/labels/latest
compute: azureml:cpu-cluster
display_name: hello-code
experiment_name: hello-world-example
"""

SWEEP_JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
trial:
  command: >-
    python hello-sweep.py --A ${{inputs.A}} --B ${{search_space.B}}
  code: src
  environment: azureml:AzureML-sklearn-1.5@latest
inputs:
  A: 0.5
sampling_algorithm: random
search_space:
  B: {type: choice, values: [hello, world]}
objective: {goal: minimize, primary_metric: random_metric}
limits: {max_total_trials: 4, max_concurrent_trials: 2, timeout: 3600}
"""

SPARK_JOB = """\
$schema: http://azureml/sdk-2-0/SparkJob.json
type: spark
code: ./src
entry:
  file: titanic.py
conf:
  spark.driver.cores: 1
  spark.driver.memory: 2g
  spark.executor.cores: 2
  spark.executor.memory: 2g
  spark.executor.instances: 2
inputs:
  titanic_data: {type: uri_file, path: azureml://datastores/workspaceblobstore/paths/t.csv, mode: direct}
args: --titanic_data ${{inputs.titanic_data}}
identity: {type: user_identity}
resources: {instance_type: standard_e4s_v3, runtime_version: "3.4"}
"""

AUTOML_JOB = """\
$schema: https://azuremlsdk2.blob.core.windows.net/preview/0.0.1/autoMLJob.schema.json
type: automl
experiment_name: dpv2-cli-automl-classifier-experiment
compute: azureml:cpu-cluster
task: classification
primary_metric: accuracy
target_column_name: "y"
training_data: {path: ./training-mltable-folder, type: mltable}
limits: {timeout_minutes: 180, max_trials: 40, enable_early_termination: true}
"""

VALID = {"command": (COMMAND_JOB, "CommandJob"), "sweep": (SWEEP_JOB, "SweepJob"),
         "spark": (SPARK_JOB, "SparkJob"), "automl": (AUTOML_JOB, "ClassificationJob")}

# (job, text replaced, replacement, key path, message part, hint part)
MISTAKES = {
    "command key": ("command", "environment:", "enviroment:", "enviroment",
                    "unknown key 'enviroment'", "did you mean 'environment'"),
    "command job name": ("command", "display_name: hello-code", "name: hello code", "name",
                         "must match", None),
    "sweep enum": ("sweep", "sampling_algorithm: random", "sampling_algorithm: randm",
                   "sampling_algorithm", "randm", "random"),
    "sweep trial key": ("sweep", "  code: src", "  cod: src", "trial.cod",
                        "unknown key 'cod'", "did you mean 'code'"),
    "sweep range": ("sweep", "max_total_trials: 4", "max_total_trials: 0",
                    "limits.max_total_trials", "must be in [1, int.max], got 0", None),
    "spark key": ("spark", "args: --titanic", "arg: --titanic", "arg", "unknown key 'arg'",
                  "did you mean 'args'"),
    "automl task": ("automl", "task: classification", "task: clasification", "task",
                    "must be one of", "did you mean 'classification'"),
    "automl metric": ("automl", "primary_metric: accuracy", "primary_metric: acuracy",
                      "primary_metric", "acuracy", "accuracy"),
}


def _write(tmp_path: Path, text: str, name: str = "job.yml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _line(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


@pytest.mark.parametrize("kind", sorted(VALID))
def test_a_published_standalone_job_of_each_type_is_accepted(tmp_path: Path, kind: str) -> None:
    text, model = VALID[kind]
    loaded = load_job(_write(tmp_path, text))
    assert loaded.errors == [] and type(loaded.model).__name__ == model
    assert job_type(loaded.data) == kind


@pytest.mark.parametrize("case", sorted(MISTAKES))
def test_a_single_mistake_in_a_standalone_job_is_rejected_at_its_line(tmp_path: Path,
                                                                       case: str) -> None:
    kind, old, new, key_path, message, hint = MISTAKES[case]
    text = VALID[kind][0]
    assert old in text
    path = _write(tmp_path, text.replace(old, new, 1))
    errors = load_job(path).errors
    found = [e for e in errors if e.key_path == key_path]
    assert found, [str(e) for e in errors]
    assert message in found[0].message
    assert found[0].location is not None
    assert found[0].location.line == _line(path, new.split(":")[0].strip() + ":")
    if hint:
        assert hint in (found[0].hint or "") + found[0].message


def test_a_command_job_without_a_command_is_rejected_once(tmp_path: Path) -> None:
    path = _write(tmp_path, COMMAND_JOB.replace("command: python", "# command: python"))
    errors = load_job(path).errors
    assert [e.key_path for e in errors] == ["command"]
    assert "required key 'command' is missing" in errors[0].message


def test_an_automl_job_needs_training_data(tmp_path: Path) -> None:
    path = _write(tmp_path, AUTOML_JOB.replace("training_data:", "# training_data:"))
    errors = load_job(path).errors
    assert [(e.key_path, e.message) for e in errors] == [
        ("training_data", "required key 'training_data' is missing")]


TYPELESS = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
jobs:
  hello_job:
    command: echo "hello" && echo ${{inputs.x}}
    environment: azureml://registries/azureml/environments/sklearn-1.5/labels/latest
    inputs:
      x: 1
"""


def test_a_pipeline_step_without_type_is_a_command_step(tmp_path: Path) -> None:
    loaded = load_pipeline(_write(tmp_path, TYPELESS, "pipeline.yml"))
    assert loaded.errors == []
    assert loaded.model is not None and loaded.model.jobs["hello_job"].type == "command"


def test_a_typeless_step_is_checked_as_a_command_step(tmp_path: Path) -> None:
    path = _write(tmp_path, TYPELESS.replace("    environment:", "    enviroment:"),
                  "pipeline.yml")
    errors = load_pipeline(path).errors
    assert [(e.key_path, e.location.line if e.location else None) for e in errors] == [
        ("jobs.hello_job.enviroment", _line(path, "enviroment:"))]
    assert "did you mean 'environment'" in (errors[0].hint or "")


def test_automl_data_given_as_text_must_be_a_binding(tmp_path: Path) -> None:
    path = _write(tmp_path, AUTOML_JOB.replace(
        "training_data: {path: ./training-mltable-folder, type: mltable}", "training_data: abc"))
    [error] = load_job(path).errors
    assert (error.key_path, error.location.line if error.location else None) == (
        "training_data", _line(path, "training_data: abc"))
    assert error.message == ("must be a binding such as ${{parent.inputs.<name>}} or a mapping, "
                             "got string 'abc'")
    bound = AUTOML_JOB.replace("training_data: {path: ./training-mltable-folder, type: mltable}",
                               "training_data: ${{parent.inputs.train}}")
    assert load_job(_write(tmp_path, bound)).errors == []


def test_a_command_jobs_cloud_only_keys_are_said_to_change_nothing_here(tmp_path: Path) -> None:
    text = COMMAND_JOB + ("distribution: {type: pytorch, process_count_per_instance: 2}\n"
                          "resources: {instance_count: 2, shm_size: 8g}\n")
    warnings = load_job(_write(tmp_path, text)).warnings
    assert [(w.key_path, w.code) for w in warnings] == [
        ("distribution", "cloud-only"), ("resources.shm_size", "cloud-only")]
    assert "rank 0 of a world of one" in warnings[0].message
