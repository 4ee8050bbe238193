"""Done-when: the complete pipeline example of seed 001 validates, given the folders it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlpipe.compiler import compile_pipeline
from tests.conftest import CORPUS, run_cli

SEED = CORPUS.parent / "seeds" / "001_597249d47598ce82.txt"
START = "$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json"
END = "Submit the pipeline job"


@pytest.fixture
def seed_pipeline(tmp_path: Path) -> Path:
    if not SEED.is_file():
        pytest.skip(f"seed document not found at {SEED}")
    text = SEED.read_text(encoding="utf-8")
    yaml_text = text[text.index(START):text.index(END)]
    (tmp_path / "neural-iris-mltable").mkdir()
    (tmp_path / "neural-iris-mltable" / "MLTable").write_text("paths:\n  - file: ./iris.csv\n")
    (tmp_path / "iris-model").mkdir()
    (tmp_path / "script").mkdir()
    (tmp_path / "script" / "iris_prediction.py").write_text("def init():\n    pass\n\ndef run(b):\n    return b\n")
    path = tmp_path / "pipeline.yml"
    path.write_text(yaml_text, encoding="utf-8")
    return path


def test_seed_pipeline_validates(seed_pipeline: Path, tmp_path: Path) -> None:
    plan = compile_pipeline(seed_pipeline, runs_dir=tmp_path / "runs")
    step = plan.step("batch_prediction")
    assert step.mini_batch_size.text == "10kb" and step.instance_count == 2
    assert step.error_threshold == 5 and step.prs.allowed_failed_percent == 30
    assert step.prs.task_overhead_timeout == 1200 and step.prs.copy_logs_to_parent is True
    assert step.append_row_to == "job_output_file"
    assert step.outputs["job_output_file"].path.endswith("parallel_run_step.txt")
    assert {w.code for w in plan.warnings} >= {"missing-conda-file", "prs-flag"}
    proc = run_cli("job", "validate", "--file", str(seed_pipeline))
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.splitlines()[-1].endswith("OK (pipeline job, 1 step, 2 warnings)")


def test_seed_pipeline_without_its_folders_is_rejected(seed_pipeline: Path) -> None:
    (seed_pipeline.parent / "script" / "iris_prediction.py").unlink()
    proc = run_cli("job", "validate", "--file", str(seed_pipeline))
    assert proc.returncode == 1
    assert "entry script 'iris_prediction.py' not found" in proc.stdout
