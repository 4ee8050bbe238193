"""``mlpipe job advise``: the table and JSON a person or a script reads, and usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.jobs.support import create
from tests.runtime.reports.support import mixed_failures_pipeline


@pytest.mark.slow
def test_advise_a_recorded_job(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    ran = create(mixed_failures_pipeline(tmp_path / "p"), runs, "mixed")
    assert ran.proc.returncode == 0, ran.proc.stderr
    table = run_cli("job", "advise", "mixed", "--runs-dir", str(runs), "--instance-type",
                    "Standard_F4s_v2", "--set", "jobs.score.mini_batch_size=5")
    assert table.returncode == 0, table.stderr
    text = table.stdout
    assert text.startswith("step score: measured ")
    assert "60 items re-cut into mini-batches of 5: 12 mini-batches" in text
    assert "cloud: 1 x Standard_F4s_v2 (4 vCPUs, 8 GiB): predicted " in text
    assert "assumed: node start 240 s; image pull 120 s; PRS scheduling 0.05 s per mini-batch" \
        in text
    for key in ("max_concurrency_per_instance", "mini_batch_size", "instance_count",
                "retry_settings.timeout"):
        assert f"    {key}: " in text
    shown = run_cli("job", "advise", "-n", "mixed", "--runs-dir", str(runs), "-o", "json",
                    "--instance-count", "3", "--assume", "node_start_s=0")
    data = json.loads(shown.stdout)
    assert list(data) == ["job", "steps"] and data["job"] == "mixed"
    step = data["steps"]["score"]
    assert step["cloud"]["instance_count"] == 3 and step["predicted_wall_s"] > 0
    assert step["low_s"] <= step["predicted_wall_s"] <= step["high_s"]
    local = run_cli("job", "advise", "mixed", "--runs-dir", str(runs), "-o", "json", "--set",
                    "jobs.score.max_concurrency_per_instance=4")
    here = json.loads(local.stdout)["steps"]["score"]
    assert "cloud" not in here and "recommendations" not in here  # a local what-if
    assumed = run_cli("job", "advise", "mixed", "--runs-dir", str(runs), "-o", "json", "--set",
                      "jobs.score.max_concurrency_per_instance=4", "--assume", "node_start_s=0")
    cloud = json.loads(assumed.stdout)["steps"]["score"]["cloud"]  # a cloud option asks for it
    assert cloud["predicted_duration_s"] > 0
    assert here["settings"]["max_concurrency_per_instance"] == 4
    assert here["memory"]["workers"] == 4 and not here["memory"]["over_limit"]
    assert here["failures"]["items_lost"] >= here["failures"]["mini_batches"] > 0
    assert here["quiet_wall_s"] <= here["measured_wall_s"]
    job_result = (Path(ran.step("score")["logs_dir"]) / "job_result.txt").read_text()
    assert "Tuning (measured in this run; mlpipe job advise mixed predicts" in job_result

    for args, words in ((["--step", "scor"], "did you mean 'score'"),
                        (["--instance-type", "Standard_Q9"], "unknown VM size"),
                        (["--set", "jobs.score.compute=x"], "predicts only"),
                        (["--assume", "nodes=3"], "expected KEY=VALUE")):
        bad = run_cli("job", "advise", "mixed", "--runs-dir", str(runs), *args)
        assert bad.returncode == 2 and words in bad.stderr, (args, bad.stderr)
    missing = run_cli("job", "advise", "nosuch", "--runs-dir", str(runs))
    assert missing.returncode == 1 and "no job named 'nosuch'" in missing.stderr


def test_a_job_without_a_parallel_step_is_told_so(tmp_path: Path) -> None:
    (tmp_path / "pipeline.yml").write_text(
        "type: pipeline\njobs:\n  c:\n    type: command\n    command: echo hi\n"
        "    environment: azureml:e:1\n")
    assert create(tmp_path / "pipeline.yml", tmp_path / "runs", "only-command").proc.returncode == 0
    advised = run_cli("job", "advise", "only-command", "--runs-dir", str(tmp_path / "runs"))
    assert advised.returncode == 1
    assert "job 'only-command' has no parallel step to advise on" in advised.stderr
