"""``validate_job``: a standalone command or Spark job compiled as its one step (bindings,
code folder, entry script) plus what Azure ML rejects when it is submitted."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlpipe.compiler import validate_job
from tests.compiler.support import line_of, make_project, write

JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
command: python prep.py --data ${{inputs.data}} --out ${{outputs.model}} --n ${{inputs.n}}
code: src
inputs:
  data: {type: uri_folder, path: ./data}
  n: 3
outputs:
  model: {type: uri_folder}
environment: azureml:env:1
compute: azureml:cpu-cluster
"""

SPARK = """\
type: spark
code: ./src
entry: {file: prep.py}
inputs:
  data: {type: uri_file, path: azureml://datastores/workspaceblobstore/paths/t.csv, mode: direct}
args: --data ${{inputs.data}}
resources: {instance_type: standard_e4s_v3, runtime_version: "3.4"}
conf: {spark.driver.cores: 1, spark.driver.memory: 2g, spark.executor.cores: 2,
       spark.executor.memory: 2g, spark.executor.instances: 2}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


@pytest.mark.parametrize("text", [JOB, SPARK], ids=["command", "spark"])
def test_a_valid_standalone_job_has_no_problem(project: Path, text: str) -> None:
    assert validate_job(write(project, "job.yml", text)) == []


# (text replaced, replacement, line needle, key path, message part)
MISTAKES = {
    "binding": ("--n ${{inputs.n}}", "--n ${{inputs.nn}}", "command:", "command",
                "${{inputs.nn}} names no input of this step (declared inputs: data, n)"),
    "code folder": ("code: src", "code: srcs", "code:", "code", "code folder 'srcs' not found"),
    "data path": ("path: ./data", "path: ./dta", "path: ./dta", "inputs.data.path",
                  "input path './dta' not found"),
    "environment": ("environment: azureml:env:1", "", "$schema:", "environment",
                    "a command needs an 'environment': Azure ML rejects this at submission"),
    "parent binding": ("n: 3", "n: ${{parent.inputs.n}}", "n: ${{parent", "inputs.n",
                       "${{parent.inputs.n}} binds nothing: a standalone job has no pipeline"),
}


@pytest.mark.parametrize("case", sorted(MISTAKES))
def test_a_single_mistake_in_a_command_job_is_reported_at_its_line(project: Path,
                                                                   case: str) -> None:
    old, new, needle, key_path, message = MISTAKES[case]
    path = write(project, "job.yml", JOB.replace(old, new, 1))
    errors = [d for d in validate_job(path) if d.severity == "error" and d.key_path == key_path]
    assert len(errors) == 1, [d.format() for d in validate_job(path)]
    assert message in errors[0].message
    assert errors[0].location is not None and errors[0].location.line == line_of(path, needle)


def test_a_spark_job_entry_file_must_exist(project: Path) -> None:
    path = write(project, "job.yml", SPARK.replace("file: prep.py", "file: prepp.py"))
    errors = [d for d in validate_job(path) if d.severity == "error"]
    assert [e.key_path for e in errors] == ["entry.file"], [d.format() for d in errors]
    assert "prepp.py" in errors[0].message and "did you mean 'prep.py'" in (errors[0].hint or "")


def test_a_spark_job_reads_its_data_in_direct_mode(project: Path) -> None:
    path = write(project, "job.yml", SPARK.replace(", mode: direct}", "}"))
    [error] = [d for d in validate_job(path) if d.severity == "error"]
    assert (error.key_path, error.message) == (
        "inputs.data", "Input 'data' is using 'None' mode, only 'direct' is supported for Spark job")
    assert error.location is not None and error.location.line == line_of(path, "  data:")


SWEEP = """\
type: sweep
trial:
  command: python prep.py --a ${{inputs.a}} --b ${{search_space.b}}
  code: src
  environment: azureml:env:1
inputs: {a: 1}
search_space:
  b: {type: choice, values: [1, 2]}
objective: {goal: minimize, primary_metric: loss}
limits: {max_total_trials: 2}
"""


def test_a_sweep_job_trial_code_folder_must_exist(project: Path) -> None:
    assert validate_job(write(project, "job.yml", SWEEP)) == []
    path = write(project, "job.yml", SWEEP.replace("code: src", "code: srcs"))
    [error] = validate_job(path)
    assert (error.key_path, error.location.line if error.location else None) == (
        "trial.code", line_of(path, "code: srcs"))
    assert error.message.startswith("code folder 'srcs' not found")


def test_a_missing_build_context_is_a_warning(project: Path) -> None:
    text = JOB.replace("environment: azureml:env:1", "environment:\n  build: {path: docker-ctx}")
    [warning] = validate_job(write(project, "job.yml", text))
    assert (warning.severity, warning.key_path) == ("warning", "environment.build.path")
    assert warning.message.startswith("build context 'docker-ctx' not found")


SWEEP_JOB = """\
$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
trial:
  command: python prep.py --data ${{inputs.data}} --lr ${{search_space.lr}} --k ${{search_space.k}} --out ${{outputs.model}}
  code: src
  environment: azureml:env:1
  environment_variables: {MODE: "${{inputs.mode}}"}
inputs:
  data: {type: uri_folder, path: ./data}
  mode: fast
outputs:
  model: {type: uri_folder}
search_space:
  lr: {type: loguniform, min_value: -6, max_value: -1}
  k: {type: choice, values: [1, 2]}
objective: {goal: maximize, primary_metric: acc}
limits: {max_total_trials: 2, trial_timeout: 30}
early_termination: {type: bandit, slack_factor: 0, slack_amount: 0, evaluation_interval: 0}
"""


def test_a_sweep_job_compiles_as_a_sweep_step_whose_trial_binds_the_search_space(
        project: Path) -> None:
    from mlpipe.compiler import compile_pipeline
    from mlpipe.plan import SweepStep

    path = write(project, "sweep.yml", SWEEP_JOB)
    assert validate_job(path) == []
    plan = compile_pipeline(path, runs_dir=project / "runs", job_name="tune")
    (step,) = plan.steps
    assert isinstance(step, SweepStep) and step.name == "sweep"
    # the swept values are the trial's inputs, the job's inputs and outputs its own
    assert "--lr ${{inputs.lr}} --k ${{inputs.k}}" in step.trial_command
    assert [(p.name, p.kind) for p in step.search_space] == [("lr", "loguniform"), ("k", "choice")]
    assert step.inputs["data"].path == str(project / "data")
    assert step.outputs["model"].path == str(project / "runs" / "tune" / "sweep" / "outputs"
                                              / "model")
    # the trial's variables are the job's (azure-ai-ml sends them with the trial)
    assert dict(step.environment_variables) == {"MODE": "fast"}
    # 0 slack is no slack, as azure-ai-ml writes it; an interval of 0 evaluates every report
    assert (step.early_termination.slack_factor, step.early_termination.slack_amount,
            step.early_termination.evaluation_interval) == (None, None, 1)


@pytest.mark.parametrize(("old", "new", "message"), [
    ("--k ${{search_space.k}}", "--k ${{search_space.kk}} --seed ${{inputs.seed}}",
     "${{inputs.seed}} names no input of this step (declared inputs: data, mode, lr, k)"),
    ("k: {type: choice", "kk: {type: choice", "unknown binding ${{search_space.k}}"),
    ("--out ${{outputs.model}}", "--out ${{outputs.modle}}",
     "${{outputs.modle}} names no output of this step (declared outputs: model)"),
])
def test_a_sweep_jobs_command_binds_only_its_inputs_swept_values_and_outputs(
        project: Path, old: str, new: str, message: str) -> None:
    path = write(project, "sweep.yml", SWEEP_JOB.replace(old, new))
    errors = [d for d in validate_job(path) if d.severity == "error"]
    assert any(message in e.message for e in errors), [e.format() for e in errors]
    assert {(e.key_path, e.location.line if e.location else None) for e in errors
            if message in e.message} == {("trial.command", line_of(path, "  command:"))}


@pytest.mark.parametrize(("old", "new", "message"), [
    ("trial:\n  command:", "trial: [a]\nx:\n  command:", "trial: must be a mapping, got a list"),
    ("trial:\n  command:", "x:\n  command:", "trial: required key 'trial' is missing"),
])
def test_a_sweep_job_without_a_trial_mapping_gets_one_error(project: Path, old: str, new: str,
                                                            message: str) -> None:
    text = SWEEP_JOB.replace(old, new).replace("\n  command:", "\n  command:", 1)
    path = write(project, "sweep.yml", text)
    errors = [d for d in validate_job(path) if d.severity == "error"]
    trial = [e for e in errors if e.key_path.startswith(("trial", "command"))]
    assert [e.format() for e in trial] == [e.format() for e in errors
                                           if message in e.format()], [e.format() for e in errors]


def test_a_conditional_search_space_declares_its_nested_entries_as_optional_trial_inputs(
        project: Path) -> None:
    from mlpipe.compiler import compile_pipeline
    from mlpipe.plan import SweepStep

    text = SWEEP_JOB.replace("--k ${{search_space.k}}", "$[[--depth ${{search_space.depth}}]]") \
        .replace("k: {type: choice, values: [1, 2]}",
                 "k: {type: choice, values: [{depth: {type: randint, upper: 5}}, {width: 3}]}")
    path = write(project, "sweep.yml", text)
    assert validate_job(path) == []
    (step,) = compile_pipeline(path, runs_dir=project / "runs", job_name="tune").steps
    assert isinstance(step, SweepStep)
    assert "$[[--depth ${{inputs.depth}}]]" in step.trial_command
