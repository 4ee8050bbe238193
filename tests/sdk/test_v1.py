"""v1 ParallelRunConfig / ParallelRunStep / Pipeline: v1 rules, YAML save/load, conversion, runs."""

from __future__ import annotations

import runpy
import textwrap
from pathlib import Path

import pytest

from mlpipe import ValidationError
from mlpipe.v1 import (
    Dataset,
    Experiment,
    ParallelRunConfig,
    ParallelRunStep,
    Pipeline,
    PipelineData,
)
from tests.sdk.support import make_file_project, write

V1_SCRIPT = """\
from mlpipe.v1 import Dataset, ParallelRunConfig, ParallelRunStep, Pipeline, PipelineData

config = ParallelRunConfig(
    source_directory="src",
    entry_script="echo.py",
    mini_batch_size="2",
    error_threshold=5,
    allowed_failed_count=3,
    allowed_failed_percent=50,
    run_max_try=2,
    run_invocation_timeout=30,
    output_action="append_row",
    append_row_file_name="echoes.txt",
    environment="batch-env",
    compute_target="cpu-cluster",
    node_count=1,
    process_count_per_node=2,
    environment_variables={"FOO": "v1"},
)
output = PipelineData("echoes")
step = ParallelRunStep(
    name="echo",
    parallel_run_config=config,
    inputs=[Dataset.File.from_files("data").as_named_input("files")],
    output=output,
    arguments=["--tag", "old"],
    allow_reuse=True,
)
pipeline = Pipeline(workspace=None, steps=[step])
"""


@pytest.fixture
def v1(tmp_path: Path) -> dict:
    root = make_file_project(tmp_path / "proj", files=5)
    return runpy.run_path(str(write(root / "v1_pipeline.py", V1_SCRIPT)))


def test_v1_step_converts_with_the_documented_mapping(v1: dict, tmp_path: Path) -> None:
    job = v1["pipeline"].to_job()
    plan = job.compile(runs_dir=tmp_path / "runs", job_name="v1")
    step = plan.step("echo")
    root = tmp_path / "proj"
    assert step.instance_count == 1  # node_count
    assert step.max_concurrency_per_instance == 2  # process_count_per_node
    assert step.retry.max_retries == 1 and step.retry.timeout == 30  # run_max_try - 1, timeout
    assert step.mini_batch_error_threshold == 3  # allowed_failed_count
    assert step.error_threshold == 5
    assert step.prs.allowed_failed_percent == 50
    assert step.program_arguments == ("--tag", "old", "--append_row_file_name", "echoes.txt",
                                      "--allowed_failed_percent", "50")
    assert step.mini_batch_size.text == "2" and step.code_dir == str(root / "src")
    assert step.entry_script == "echo.py" and step.major_input.path == str(root / "data")
    env = dict(step.environment_variables)  # the config's, and the named input for the run context
    assert env["FOO"] == "v1" and env["AZUREML_DATAREFERENCE_files"] == str(root / "data")
    assert step.append_row_to == "echoes" and step.prs.append_row_file_name == "echoes.txt"
    node = job.to_dict()["jobs"]["echo"]
    assert node["task"]["environment"] == "azureml:batch-env"
    assert node["compute"] == "cpu-cluster"


def test_v1_pipeline_built_in_code_runs(v1: dict, tmp_path: Path) -> None:
    result = v1["pipeline"].run(runs_dir=tmp_path / "runs", job_name="v1_code")
    assert result.ok, result
    lines = (Path(result.step_outputs["echo"]["echoes"]) / "echoes.txt").read_text().splitlines()
    assert sorted(lines) == [f"f{i:02d}.txt v1 old" for i in range(5)]
    assert "job_result.txt" in result.reports["echo"]


def test_v1_yaml_save_load_and_run(v1: dict, tmp_path: Path) -> None:
    config: ParallelRunConfig = v1["config"]
    saved = tmp_path / "proj" / "configs" / "prc.yml"
    config.save_to_yaml(saved)
    text = saved.read_text()
    assert text.startswith("parallel_run_config:\n")
    assert "source_directory: ../src" in text and "compute_target_name: cpu-cluster" in text
    loaded = ParallelRunConfig.load_yaml(None, saved)  # v1 form: load_yaml(workspace, path)
    assert loaded == config and ParallelRunConfig.load_yaml(saved) == config
    step = ParallelRunStep(name="echo", parallel_run_config=loaded,
                           inputs=[Dataset.File.from_files(str(tmp_path / "proj" / "data"))],
                           output="echoes", arguments=["--tag", "yaml"])
    result = Experiment(None, "v1-exp").submit(Pipeline(steps=[step]), runs_dir=tmp_path / "r",
                                               job_name="v1_yaml")
    assert result.ok
    assert result.plan.experiment_name == "v1-exp"
    lines = (Path(result.step_outputs["echo"]["echoes"]) / "echoes.txt").read_text().splitlines()
    assert len(lines) == 5 and lines[0].endswith("v1 yaml")


def test_handwritten_v1_yaml_with_summary_only_runs(tmp_path: Path) -> None:
    root = make_file_project(tmp_path / "proj", files=3)
    path = write(root / "prc.yml", """\
parallel_run_config:
  entry_script: echo.py
  source_directory: src
  mini_batch_size: 1
  error_threshold: -1
  output_action: summary_only
  compute_target_name: cpu-cluster
  node_count: 1
  process_count_per_node: 1
  environment: {name: batch-env, version: "2"}
""")
    config = ParallelRunConfig.load_yaml(path)
    assert (config.run_max_try, config.run_invocation_timeout, config.logging_level) == (3, 60,
                                                                                        "INFO")
    step = ParallelRunStep(name="summary", parallel_run_config=config,
                           inputs=[str(root / "data")])
    result = Pipeline(steps=[step]).run(runs_dir=tmp_path / "runs", job_name="summary")
    assert result.ok
    step_plan = result.plan.step("summary")
    assert step_plan.append_row_to is None and step_plan.retry.max_retries == 2


def test_load_yaml_reports_unknown_keys_with_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "prc.yml", "parallel_run_config:\n  entry_scrip: a.py\n")
    with pytest.raises(ValidationError) as err:
        ParallelRunConfig.load_yaml(path)
    (problem,) = err.value.errors
    assert problem.location.line == 2 and problem.key_path == "parallel_run_config.entry_scrip"


def test_load_yaml_refuses_what_is_not_a_yaml_path(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="expected the path of a YAML file"):
        ParallelRunConfig.load_yaml(None, 5)  # was a TypeError from os.fspath
    with pytest.raises(ValidationError, match="file not found"):
        ParallelRunConfig.load_yaml(tmp_path / "missing.yml")


GOOD = dict(environment="env", entry_script="echo.py", error_threshold=10,
            output_action="append_row", compute_target="cpu", node_count=2)


@pytest.mark.parametrize("change, param", [
    (dict(partition_keys=["store"], mini_batch_size="5"), "partition_keys"),
    (dict(output_action="append_rows"), "output_action"),
    (dict(error_threshold=-2), "error_threshold"),
    (dict(node_count=0), "node_count"),
    (dict(process_count_per_node=0), "process_count_per_node"),
    (dict(mini_batch_size="10 MB"), "mini_batch_size"),
    (dict(mini_batch_size=1.5), "mini_batch_size"),
    (dict(logging_level="LOUD"), "logging_level"),
    (dict(run_invocation_timeout=0), "run_invocation_timeout"),
    (dict(run_max_try=0), "run_max_try"),
    (dict(allowed_failed_count=-2), "allowed_failed_count"),
    (dict(allowed_failed_percent=101), "allowed_failed_percent"),
    (dict(append_row_file_name="out/put.txt"), "append_row_file_name"),
    (dict(partition_keys="not json"), "partition_keys"),
    (dict(environment=None), "environment"),
])
def test_v1_rules_reject(change: dict, param: str) -> None:
    with pytest.raises(ValidationError) as err:
        ParallelRunConfig(**{**GOOD, **change})
    assert [d.key_path for d in err.value.errors] == [f"parallel_run_config.{param}"]
    assert err.value.errors[0].location.file == __file__


@pytest.mark.parametrize("change", [
    dict(partition_keys=["store", "brand"]),
    dict(partition_keys='["store", "brand"]'),
    dict(mini_batch_size="10MB"),
    dict(mini_batch_size=5),
    dict(error_threshold=-1, allowed_failed_count=-1, allowed_failed_percent=100),
    dict(output_action="summary_only", append_row_file_name="x/y"),
    dict(logging_level="DEBUG", run_invocation_timeout=1, run_max_try=1),
])
def test_v1_rules_accept(change: dict) -> None:
    config = ParallelRunConfig(**{**GOOD, **change})
    assert config.problems() == []


def test_v1_defaults_and_mini_batch_units() -> None:
    config = ParallelRunConfig(**GOOD, mini_batch_size="10KB")
    assert config.mini_batch_size == 10240  # v1: 1 KB = 1024 bytes
    assert (config.logging_level, config.run_invocation_timeout, config.run_max_try) == (
        "INFO", 60, 3)
    assert ParallelRunConfig(**GOOD, partition_keys='["a"]').partition_keys == ["a"]


def test_many_problems_are_reported_together() -> None:
    with pytest.raises(ValidationError) as err:
        ParallelRunConfig(**{**GOOD, "node_count": 0, "run_max_try": 0, "output_action": "x"})
    assert len(err.value.errors) == 3


def test_chained_steps_and_step_input_rules(tmp_path: Path) -> None:
    root = make_file_project(tmp_path / "proj", files=2)
    config = ParallelRunConfig(**{**GOOD, "source_directory": str(root / "src"),
                                  "node_count": 1, "mini_batch_size": "1"})
    first_out = PipelineData("first_out")
    first = ParallelRunStep("first", config, inputs=[str(root / "data")], output=first_out)
    second = ParallelRunStep("second", config, inputs=[first_out], output=PipelineData("o2"))
    job = Pipeline(steps=[first, second]).to_job()
    assert job.to_dict()["jobs"]["second"]["inputs"]["first_out"]["path"] == \
        "${{parent.jobs.first.outputs.first_out}}"
    plan = job.compile(runs_dir=tmp_path / "runs", job_name="chain")
    assert plan.step("second").depends_on == ("first",)
    with pytest.raises(ValidationError, match="exactly one input_data"):
        ParallelRunStep("two", config, inputs=[str(root / "data"), str(root / "data")])
    orphan = ParallelRunStep("orphan", config, inputs=[PipelineData("nobody")])
    with pytest.raises(ValidationError, match="no step of this pipeline writes"):
        Pipeline(steps=[orphan]).to_job()


def test_side_inputs_and_arguments_become_v2_inputs(tmp_path: Path) -> None:
    root = make_file_project(tmp_path / "proj", files=2)
    write(root / "model" / "weights.txt", "1\n")
    config = ParallelRunConfig(**{**GOOD, "source_directory": str(root / "src"), "node_count": 1,
                                  "output_action": "summary_only"})
    model = Dataset.File.from_files(str(root / "model")).as_named_input("model").as_download()
    out = PipelineData("out")
    step = ParallelRunStep("score", config, inputs=[str(root / "data")], output=out,
                           side_inputs=[model], arguments=["--model", model, "--out", out,
                                                            "--label", "two words"],
                           allow_reuse=False)
    node = Pipeline(steps=[step]).to_job().to_dict()["jobs"]["score"]
    model_input = node["inputs"]["model"]
    assert {k: v for k, v in model_input.items() if k != "path"} == {"type": "uri_folder",
                                                                     "mode": "download"}
    # written relative to this file, or absolute when far from it: the model folder either way
    assert (Path(__file__).parent / model_input["path"]).resolve() == (root / "model").resolve()
    assert node["task"]["program_arguments"] == (
        "--model ${{inputs.model}} --out ${{outputs.out}} --label 'two words'")
    assert node["is_deterministic"] is False and "append_row_to" not in node["task"]
    plan = Pipeline(steps=[step]).to_job().compile(runs_dir=tmp_path / "runs", job_name="side")
    args = plan.step("score").program_arguments
    assert args[1] == str(root / "model") and args[-1] == "two words"


def test_experiment_submit_refuses_what_is_not_a_v1_pipeline() -> None:
    with pytest.raises(ValidationError, match="takes a v1 Pipeline, got str") as err:
        Experiment(None, "exp").submit("pipeline.yml")  # was an AttributeError
    assert err.value.diagnostics[0].location.file == __file__


def test_file_dataset_partitioned_by_folder_runs_one_mini_batch_per_key(tmp_path: Path) -> None:
    """The published v1 notebook: files whose folders are their keys, partitioned by two of
    them; run(mini_batch, mini_batch_context) sees the files and the key values."""
    from tests.conftest import REPO, run_cli

    script = tmp_path / "nb.py"
    script.write_text((REPO / "tests/sdk/notebooks/mlnotebooks_file_dataset_partition_per_folder.py").read_text())
    write(tmp_path / "Code" / "total_file_size.py", textwrap.dedent("""\
        import os

        def init():
            print("Init")

        def run(mini_batch, mini_batch_context):
            print(f"dataset = {mini_batch_context.dataset}")
            sizes = [os.path.getsize(p) for p in mini_batch]
            key = mini_batch_context.partition_key_value
            return [",".join(str(x) for x in (os.path.basename(p), s, s / sum(sizes),
                                               key["user"], key["genres"], sum(sizes)))
                    for p, s in zip(mini_batch, sizes)]
        """))
    for genre, size in (("disco", 10), ("orchestra", 20), ("piano", 30), ("spirituality", 40)):
        write(tmp_path / "test_files" / genre / f"{genre}.wav", "x" * size)
    proc = run_cli("run-script", str(script), cwd=tmp_path,
                   env={"MLPIPE_RUNS_DIR": str(tmp_path / "runs")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "['user', 'season', 'genres']" in proc.stdout
    assert "Prediction has 6 rows" in proc.stdout
    rows = sorted(p.read_text() for p in (tmp_path / "runs").rglob("file_size_outputs.txt"))
    assert len(rows) == 1
    lines = sorted(rows[0].splitlines())
    assert lines == sorted(["disco.wav,10,1.0,user1,disco,10",
                            "orchestra.wav,20,1.0,user1,orchestra,20",
                            "piano.wav,30,1.0,user2,piano,30",
                            "spirituality.wav,40,1.0,user3,spirituality,40",
                            "piano.wav,30,0.5,user4,piano,60", "piano.wav,30,0.5,user4,piano,60"])
