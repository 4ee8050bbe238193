"""The plan and diagnostics contracts every layer relies on."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from mlpipe.diagnostics import Diagnostic, Location, ValidationError, did_you_mean
from mlpipe.frozen import freeze
from mlpipe.plan import ExecutionPlan, ParallelStep, PlanInput, PlanOutput
from tests.conftest import run_cli


def test_plan_is_immutable_and_picklable() -> None:
    step = ParallelStep(
        name="score", step_dir="/runs/j/score", input_data="data",
        inputs=freeze({"data": PlanInput(name="data", type="uri_folder", path="/data")}),
        outputs=freeze({"out": PlanOutput(name="out", type="uri_file", path="/o/rows.txt")}),
    )
    plan = ExecutionPlan(source="/p/pipeline.yml", run_dir="/runs/j", steps=(step,))
    assert pickle.loads(pickle.dumps(plan)) == plan
    with pytest.raises(TypeError):
        step.inputs["other"] = step.major_input  # type: ignore[index]
    assert step.outputs["out"].folder == "/o"
    assert plan.to_dict()["steps"][0]["logs_dir"] == "/runs/j/score/logs"


def test_diagnostic_format_names_file_line_key_and_hint() -> None:
    diag = Diagnostic(
        "must be in (0, 259200], got -5", "jobs.score.retry_settings.timeout",
        Location("pipeline.yml", 23, 7),
    )
    assert diag.format() == "pipeline.yml:23:7: jobs.score.retry_settings.timeout: must be in (0, 259200], got -5"
    warn = Diagnostic("ignored", "compute", Location("p.yml", 2, 1), severity="warning")
    assert warn.format().startswith("p.yml:2:1: warning: compute:")
    err = ValidationError([diag, warn])
    assert "1 problem found" in str(err) and err.errors == (diag,)
    assert did_you_mean("timout", ["timeout", "max_retries"]) == "did you mean 'timeout'?"


def test_cli_usage_error_exits_2() -> None:
    result = run_cli("no-such-group")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


def test_compiler_and_job_store_resolve_the_runs_folder_alike(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlpipe.compiler import compile_pipeline
    from mlpipe.jobs.store import JobStore
    from mlpipe.runs import resolve_runs_dir

    monkeypatch.setenv("HOME", str(tmp_path))
    sample = Path(__file__).resolve().parents[1] / "samples" / "file-batch" / "pipeline.yml"
    plan = compile_pipeline(sample, runs_dir="~/runs", job_name="j1")
    assert plan.run_dir == str(tmp_path / "runs" / "j1")
    assert JobStore("~/runs").runs_dir == tmp_path / "runs" == resolve_runs_dir("~/runs")
    monkeypatch.setenv("MLPIPE_RUNS_DIR", "~/from-env")
    assert compile_pipeline(sample, job_name="j2").run_dir == str(tmp_path / "from-env" / "j2")
    assert JobStore().runs_dir == tmp_path / "from-env"
