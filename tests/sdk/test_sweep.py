"""Sweeps built in code, as azure-ai-ml builds them, run here through the sweep runner: a
``type: sweep`` step of a ``@pipeline`` (its best trial's output read downstream), a
standalone sweep job submitted with ``ml_client.jobs.create_or_update`` (and the same job
dumped to YAML and run with ``mlpipe job create``), a standalone command job; the settings
objects keep azure-ai-ml's defaults; what azure-ai-ml refuses is refused at the user's line.
(What each program dumps is compared with azure-ai-ml's own in test_differential.py.)"""

from __future__ import annotations

import csv
import json
import runpy
import textwrap
from pathlib import Path
from typing import Any

import pytest

from mlpipe import ValidationError
from mlpipe.sweep import (
    BanditPolicy,
    Choice,
    MedianStoppingPolicy,
    Objective,
    QUniform,
    SweepJobLimits,
    TruncationSelectionPolicy,
    Uniform,
)
from tests.conftest import run_cli
from tests.sdk.support import write

# Each trial logs its quality as the metric, once per step; a poor trial sleeps after its
# first report, so an early-termination policy stops it long before it would end.
TRAIN = """\
import argparse, os, time
import mlflow

parser = argparse.ArgumentParser()
parser.add_argument("--quality", type=float)
parser.add_argument("--kernel")
parser.add_argument("--out")
args = parser.parse_args()
score = args.quality * (2 if args.kernel == "linear" else 1)
for step in range(2):
    mlflow.log_metric("accuracy", score, step=step)
    time.sleep(0.05 if score > 0.5 else 60)
os.makedirs(args.out, exist_ok=True)
with open(os.path.join(args.out, "model.txt"), "w") as out:
    out.write(f"{score} {args.kernel} {os.environ.get('RUN_MODE')}\\n")
"""

HEAD = """\
import json
from azure.ai.ml import Input, MLClient, Output, command, dsl
from azure.ai.ml.sweep import BanditPolicy, Choice, RandomSamplingAlgorithm, Uniform

train = command(
    command="python train.py --quality ${{inputs.quality}} --kernel ${{inputs.kernel}} "
            "--out ${{outputs.model}}",
    code="./src", environment="azureml:env:1", environment_variables={"RUN_MODE": "sweep"},
    inputs={"quality": 0.5, "kernel": "rbf"}, outputs={"model": Output(type="uri_folder")},
    compute="cpu-cluster", display_name="train",
)
ml_client = MLClient.from_config()
"""

PIPELINE = HEAD + """
show = command(command="cp ${{inputs.model}}/model.txt ${{outputs.copy}}/", code="./src",
               environment="azureml:env:1", inputs={"model": Input(type="uri_folder")},
               outputs={"copy": Output(type="uri_folder")})


@dsl.pipeline(default_compute="cpu-cluster")
def tune_pipeline():
    trial = train(quality=Choice([0.9, 0.2, 0.6]), kernel=Choice(["rbf", "linear"]))
    tune = trial.sweep(primary_metric="accuracy", goal="Maximize", sampling_algorithm="grid")
    tune.set_limits(max_total_trials=6, max_concurrent_trials=2, timeout=600)
    tune.early_termination = BanditPolicy(slack_factor=0.2, evaluation_interval=1)
    use = show(model=tune.outputs.model)
    return {"best": tune.outputs.model}


job = ml_client.jobs.create_or_update(tune_pipeline(), experiment_name="sweeps")
print(json.dumps({"status": job.status, "run_dir": job.run_dir, "outputs": job.outputs,
                  "steps": job.step_outputs}))
"""

STANDALONE = HEAD + """
trial = train(quality=Uniform(min_value=0.55, max_value=0.95), kernel=Choice(["rbf", "linear"]))
sweep_job = trial.sweep(primary_metric="accuracy", goal="Maximize",
                        sampling_algorithm=RandomSamplingAlgorithm(seed=7), max_total_trials=3)
sweep_job.set_limits(max_concurrent_trials=2)
sweep_job.dump_job("sweep_job.yml")
job = ml_client.create_or_update(sweep_job)
ml_client.jobs.stream(job.name)
fetched = ml_client.jobs.get(job.name)
check = command(command="python check.py --quality ${{inputs.quality}} --out ${{outputs.model}}",
                code="./src", environment="azureml:env:1", environment_variables={"MODE": "plain"},
                inputs={"quality": 0.5}, outputs={"model": Output(type="uri_folder")})
plain = ml_client.jobs.create_or_update(check)
print(json.dumps({"status": [job.status, fetched.status, plain.status], "run_dir": job.run_dir,
                  "steps": job.step_outputs, "plain": plain.step_outputs, "name": job.name,
                  "best": fetched.properties["best_child_run_id"], "type": fetched.type}))
"""


CHECK = """\
import os, sys
os.makedirs(sys.argv[-1], exist_ok=True)
with open(os.path.join(sys.argv[-1], "model.txt"), "w") as out:
    out.write(f"{sys.argv[2]} {os.environ.get('MODE')}\\n")
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    write(root / "src" / "train.py", TRAIN)
    write(root / "src" / "check.py", CHECK)
    monkeypatch.chdir(root)
    monkeypatch.setenv("MLPIPE_RUNS_DIR", str(root / "runs"))
    return root


def build(root: Path, body: str) -> dict[str, Any]:
    """Run a program in this process, its ``azure.ai.ml`` imports written as mlpipe's."""
    text = body.replace("from azure.ai.ml.sweep", "from mlpipe.sweep").replace(
        "from azure.ai.ml.parallel", "from mlpipe.parallel").replace("from azure.ai.ml", "from mlpipe")
    return runpy.run_path(str(write(root / "program.py", text)), run_name="__main__")


def run_unchanged(root: Path, body: str) -> dict[str, Any]:
    """Run a published-style program as written (``azure.ai.ml`` imports) with
    ``mlpipe run-script``; its last line of output is the JSON it printed."""
    write(root / "program.py", body)
    proc = run_cli("run-script", "program.py", cwd=root,
                   env={"MLPIPE_RUNS_DIR": str(root / "runs")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert isinstance(result, dict)
    return result


def trials(step_dir: Path) -> list[dict[str, str]]:
    return list(csv.DictReader((step_dir / "logs" / "sweep" / "trials.csv").read_text()
                               .splitlines()))


@pytest.mark.slow
def test_a_sweep_step_built_in_code_runs_and_its_best_output_is_read_downstream(
        project: Path) -> None:
    job = run_unchanged(project, PIPELINE)
    assert job["status"] == "completed", job
    rows = trials(Path(job["run_dir"]) / "tune")
    # grid: every combination of the choices, the first choice slowest
    assert [(r["quality"], r["kernel"]) for r in rows] == [
        ("0.9", "rbf"), ("0.9", "linear"), ("0.2", "rbf"), ("0.2", "linear"),
        ("0.6", "rbf"), ("0.6", "linear")]
    statuses = {(r["quality"], r["kernel"]): r["status"] for r in rows}
    assert statuses[("0.2", "rbf")] == statuses[("0.2", "linear")] == "early_terminated"
    (best,) = [r for r in rows if r["best"] == "yes"]
    assert (best["quality"], best["kernel"], best["accuracy"]) == ("0.9", "linear", "1.8")
    # the step's output is the best trial's; the next step read it; the pipeline returns it
    assert (Path(job["steps"]["use"]["copy"]) / "model.txt").read_text() == \
        "1.8 linear None\n"  # a command component's variables are not applied (azure drops them)
    assert (Path(job["outputs"]["best"]) / "model.txt").read_text() == "1.8 linear None\n"


@pytest.mark.slow
def test_a_standalone_sweep_job_runs_like_its_yaml_and_a_command_job_runs_too(
        project: Path) -> None:
    job = run_unchanged(project, STANDALONE)
    assert job["status"] == ["completed", "Completed", "completed"]
    rows = trials(Path(job["run_dir"]) / "sweep")
    assert len(rows) == 3 and all(r["status"] == "completed" for r in rows)
    best = max(rows, key=lambda r: float(r["accuracy"]))
    assert best["best"] == "yes"
    # ml_client.jobs.get(name) of a sweep job names its best trial as Azure ML names child jobs
    assert job["type"] == "sweep"
    assert job["best"] == f"{job['name']}_{best['trial'].removeprefix('trial_')}"
    # a standalone job's trial variables are applied (azure-ai-ml sends them with the trial)
    model = Path(job["steps"]["sweep"]["model"]) / "model.txt"
    assert model.read_text() == f"{best['accuracy']} {best['kernel']} sweep\n"
    # a command node submitted on its own is a command job (its variables applied too)
    assert (Path(job["plain"]["command"]["model"]) / "model.txt").read_text() == "0.5 plain\n"
    # the dumped job is azure-ai-ml's sweep job YAML, and mlpipe job create runs it the same way
    document = (project / "sweep_job.yml").read_text()
    assert "${{search_space.quality}}" in document and "${{inputs.quality}}" not in document
    proc = run_cli("job", "create", "--file", "sweep_job.yml", "--name", "from-yaml",
                   "--runs-dir", str(project / "runs"), cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    again = trials(project / "runs" / "from-yaml" / "sweep")
    assert [(r["quality"], r["kernel"], r["status"]) for r in again] == \
        [(r["quality"], r["kernel"], r["status"]) for r in rows]


def test_settings_keep_azure_ai_mls_defaults() -> None:
    assert Objective("Maximize", "acc").to_dict() == {"goal": "maximize", "primary_metric": "acc"}
    limits = SweepJobLimits(max_total_trials=4, timeout=30, trial_timeout=0)
    assert limits.to_dict() == {"max_total_trials": 4, "timeout": 60, "trial_timeout": 0}
    limits.trial_timeout = 61
    assert limits.trial_timeout == 61
    assert BanditPolicy(slack_factor=0.1).to_dict() == {
        "type": "bandit", "evaluation_interval": 0, "delay_evaluation": 0, "slack_factor": 0.1,
        "slack_amount": 0}
    assert MedianStoppingPolicy().to_dict() == {
        "type": "median_stopping", "evaluation_interval": 1, "delay_evaluation": 0}
    assert TruncationSelectionPolicy(truncation_percentage=10).to_dict()["evaluation_interval"] == 0
    assert Choice([1, {"a": Uniform(0, 1)}]).to_dict() == {
        "type": "choice", "values": [1, {"a": {"type": "uniform", "min_value": 0,
                                                "max_value": 1}}]}
    assert QUniform(1, 9, 2) == QUniform(min_value=1, max_value=9, q=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'step'"):
        Uniform(0, 1, step=2)


def test_an_objectives_goal_is_lower_case_however_it_is_set() -> None:
    objective = Objective("Maximize", "acc")
    objective.goal = "Minimize"
    assert objective.to_dict() == {"goal": "minimize", "primary_metric": "acc"}


def test_a_bandit_policys_zero_slack_is_none_once_a_sweep_holds_it(project: Path) -> None:
    names = build(project, HEAD + textwrap.dedent("""
        policy = BanditPolicy(slack_factor=0.1)
        tune = train(quality=Choice([0.5, 0.7])).sweep(primary_metric="accuracy", goal="maximize",
                                                       early_termination_policy=policy)
        """))
    policy = names["policy"]
    assert (policy.slack_factor, policy.slack_amount) == (0.1, None)
    assert names["tune"].early_termination is policy


def test_queue_settings_given_to_sweep_as_a_mapping_take_its_job_tier_and_priority(
        project: Path) -> None:
    names = build(project, HEAD + textwrap.dedent("""
        tune = train(quality=Choice([0.5, 0.7])).sweep(
            primary_metric="accuracy", goal="maximize", queue_settings={"job_tier": "spot"},
            priority="high")
        """))
    assert names["tune"].queue_settings.to_dict() == {"job_tier": "spot", "priority": "high"}


@pytest.mark.parametrize(("statement", "message"), [
    ('tune = trial.sweep(primary_metric="a", goal="maximize", sampling_algorithm="hyperband")',
     "unsupported sampling algorithm: 'hyperband' (azure-ai-ml refuses it)"),
    ('tune = trial.sweep(primary_metric="a", goal="maximize")\ntune.limits = {"max_total_trials": 2}',
     "limits must be SweepJobLimits, got dict (azure-ai-ml refuses it)"),
    ('tune = trial.sweep(primary_metric="a", goal="maximize")\n'
     'tune.early_termination = {"type": "bandit", "slack": 0.1}',
     "BanditPolicy takes no key 'slack' (azure-ai-ml refuses it)"),
    ('tune = trial.sweep(primary_metric="a", goal="maximize", '
     'search_space={"lr": {"type": "uniform", "min": 0, "max_value": 1}})',
     "Uniform takes no key 'min' (azure-ai-ml refuses it)"),
])
def test_what_azure_ai_ml_refuses_is_refused_at_the_users_line(project: Path, statement: str,
                                                                message: str) -> None:
    body = HEAD + "trial = train(quality=Choice([0.5, 0.7]))\n" + statement + "\n"
    with pytest.raises(ValidationError) as caught:
        build(project, body)
    (problem,) = caught.value.diagnostics
    line = len(body.splitlines())
    assert problem.message == message
    assert (Path(str(problem.location.file)).name, problem.location.line) == ("program.py", line)


def test_a_policy_named_on_a_pipeline_sweep_is_refused_by_validation(project: Path) -> None:
    # azure-ai-ml keeps the text on a pipeline's sweep node and refuses it when it dumps the job
    names = build(project, HEAD + textwrap.dedent("""
        @dsl.pipeline(default_compute="cpu-cluster")
        def p():
            trial = train(quality=Choice([0.5, 0.7]))
            tune = trial.sweep(primary_metric="a", goal="maximize", max_total_trials=2,
                               early_termination_policy="bandit")
        job = p()
        """))
    with pytest.raises(ValidationError) as caught:
        names["job"].validate()
    assert [d.message for d in caught.value.errors] == [
        "must be a mapping with a 'type', got string 'bandit'"]


def test_a_parallel_node_is_no_job_of_its_own(project: Path) -> None:
    names = build(project, HEAD + textwrap.dedent("""
        from azure.ai.ml.parallel import RunFunction, parallel_run_function
        score = parallel_run_function(inputs={"data": Input(type="uri_folder")},
                                      input_data="${{inputs.data}}",
                                      task=RunFunction(code="./src", entry_script="train.py"))
        """))
    with pytest.raises(ValidationError, match="a step runs inside a pipeline"):
        names["ml_client"].jobs.create_or_update(names["score"])
