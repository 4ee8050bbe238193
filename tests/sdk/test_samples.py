"""Each sample's SDK twin (samples/<name>/pipeline.py) compiles to the plan of its YAML,
dumps to YAML that validates and loads back equal, and runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlpipe import load_job
from mlpipe.compiler import compile_pipeline
from mlpipe.sdk import compile_job
from tests.conftest import run_cli
from tests.sdk.support import SAMPLE_NAMES, SAMPLES, plan_view, sample_job

pytestmark = pytest.mark.slow  # the samples built in code run whole: CI's second stage


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_twin_compiles_to_the_yaml_plan(name: str, tmp_path: Path) -> None:
    job = sample_job(name)
    from_sdk = compile_job(job, runs_dir=tmp_path, job_name="same")
    from_yaml = compile_pipeline(SAMPLES / name / "pipeline.yml", runs_dir=tmp_path,
                                 job_name="same")
    assert plan_view(from_sdk) == plan_view(from_yaml)
    assert from_sdk.source.endswith("pipeline.py") and from_yaml.source.endswith("pipeline.yml")


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_round_trip_dump_load_equal(name: str, tmp_path: Path) -> None:
    job = sample_job(name)
    beside = SAMPLES / name / "pipeline.yml"
    if name != "command-parallel-command":
        # The same document as the YAML. (command-parallel-command's YAML spells one
        # input {type: uri_folder, path: ${{...}}} where the SDK writes the bare
        # binding; both compile to the same plan, see the test above.)
        assert job == load_job(beside)
    elsewhere = tmp_path / "sub" / "dumped.yml"
    job.dump(elsewhere)  # relative paths are rewritten for the new folder
    again = load_job(elsewhere)
    assert again == job
    assert again.to_yaml() == load_job(elsewhere).to_yaml()
    plan_a = compile_job(job, runs_dir=tmp_path, job_name="j")
    plan_b = compile_pipeline(elsewhere, runs_dir=tmp_path, job_name="j")
    # The dumped copy lives outside the samples' work tree, so its code folder (still the
    # sample's) is announced as outside its project; the rest of the plan is the same.
    view_b = plan_view(plan_b)
    assert {w["code"] for w in view_b["warnings"]} <= {"path-escape"}
    view_b["warnings"] = [w for w in view_b["warnings"] if w["code"] != "path-escape"]
    assert plan_view(plan_a) == view_b


def test_dumped_yaml_passes_cli_validate(tmp_path: Path) -> None:
    files = []
    for name in SAMPLE_NAMES:
        target = tmp_path / name / "pipeline.yml"
        sample_job(name).dump(target)
        files.append(target)
    for target in files:
        proc = run_cli("job", "validate", "--file", str(target))
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_to_yaml_is_stable_and_ordered() -> None:
    job = sample_job("file-batch")
    text = job.to_yaml()
    assert text == sample_job("file-batch").to_yaml()
    keys = [line.split(":")[0] for line in text.splitlines() if line and not line[0].isspace()]
    assert keys == ["$schema", "type", "display_name", "description", "settings", "inputs", "jobs"]
    assert "mini_batch_size: '5'" in text  # stays a string


@pytest.fixture(scope="module")
def sample_results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    runs = tmp_path_factory.mktemp("sdk-sample-runs")
    return {name: sample_job(name).run(runs_dir=runs, job_name=name.replace("-", "_"))
            for name in SAMPLE_NAMES}


def _lines(path: str) -> list[str]:
    return [line for line in Path(path).read_text().splitlines() if line.strip()]


def test_file_batch_twin_runs(sample_results: dict) -> None:
    result = sample_results["file-batch"]
    assert result.ok and result.status == "completed"
    counts = result.step_outputs["count_words"]["counts"]
    assert len(_lines(counts)) == 20
    reports = result.reports["count_words"]
    assert "job_result.txt" in reports and "sys/job_report/processed_mini-batches.csv" in reports
    assert all(Path(p).is_file() for p in reports.values())
    assert Path(result.logs["count_words"]).is_dir()


def test_tabular_scoring_twin_runs(sample_results: dict) -> None:
    result = sample_results["tabular-scoring"]
    assert result.ok
    assert len(_lines(result.outputs["scores"])) == 120


def test_many_models_twin_runs(sample_results: dict) -> None:
    result = sample_results["many-models"]
    assert result.ok
    assert len(_lines(result.outputs["fitted"])) == 240
    models = sorted(Path(result.outputs["models"]).rglob("model.json"))
    assert len(models) == 12
    assert json.loads(models[0].read_text())["tag"] == "sample"


def test_command_parallel_command_twin_runs(sample_results: dict) -> None:
    result = sample_results["command-parallel-command"]
    assert result.ok
    summary = json.loads((Path(result.outputs["summary"]) / "summary.json").read_text())
    assert summary["files"] == 12
    assert list(result.step_outputs) == ["make_numbers", "sum_numbers", "summarize"]
