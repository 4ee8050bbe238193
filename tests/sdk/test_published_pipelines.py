"""azureml-examples' v2 pipelines with parallel nodes run here: unchanged through
``mlpipe run-script``, and with ``python`` once their imports are switched to mlpipe.

1g (sdk/python/jobs/pipelines/1g_pipeline_with_parallel_nodes) sets
``node.inputs.x.mode = EVAL_MOUNT`` / ``DIRECT`` on inputs bound to a component's outputs and
changes ``pipeline_job.outputs.x.type``; 3a (sdk/python/jobs/parallel/3a_mnist_batch_identification)
overrides ``resources.instance_count`` and an output path on the node. Steps are named as
azure-ai-ml names them: after ``parallel_run_function(name=...)``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from tests.sdk.notebook_support import notebook_code, switch_imports
from tests.sdk.published_support import (
    IRIS_1G_ROWS,
    MNIST_1G_FILES,
    MNIST_3A_IMAGES,
    make_mnist_3a,
    make_parallel_nodes_1g,
)

pytestmark = pytest.mark.slow
HOW = ["run-script", "python with imports switched"]


def _run(notebook: Path, runs: Path, how: str) -> str:
    """The notebook run unchanged through run-script, or as a script with mlpipe imports."""
    if how == "run-script":
        proc = run_cli("run-script", str(notebook), env={"MLPIPE_RUNS_DIR": str(runs)})
    else:
        code = switch_imports(notebook_code(notebook))
        assert "azure" not in "".join(line for line in code.splitlines()
                                      if line.startswith(("from ", "import ")))
        script = notebook.with_suffix(".py")
        script.write_text(code, encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(REPO), "MLPIPE_RUNS_DIR": str(runs)}
        proc = subprocess.run([sys.executable, script.name], cwd=script.parent, env=env,
                              capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Status: Completed" in proc.stdout
    return proc.stdout


def _job(runs: Path) -> Path:
    (record,) = runs.glob("*/job.json")
    return record.parent


@pytest.mark.parametrize("how", HOW)
def test_1g_pipeline_with_parallel_nodes_runs(tmp_path: Path, how: str) -> None:
    runs = tmp_path / "runs"
    out = _run(make_parallel_nodes_1g(tmp_path / "nb"), runs, how)
    assert "mode: eval_mount" in out and "mode: direct" in out  # print(pipeline_job)
    job = _job(runs)
    # eval_mount: the MLTable the prepare step copied is evaluated: its files, not itself
    scored = job / "file_batch_score" / "outputs" / "job_output_path"
    assert sorted(p.name for p in scored.iterdir()) == [f"{i}.png" for i in range(MNIST_1G_FILES)]
    # direct: the tabular MLTable is read as a table; append_row_to collects its rows
    rows = (job / "batch_score_with_tabular_input" / "outputs" / "job_output_path"
            / "parallel_run_step.txt").read_text().splitlines()
    labels = [row.split()[-1] for row in rows]  # petal lengths 1.0, 1.5, ... 5.0
    assert len(rows) == IRIS_1G_ROWS and labels.count("Setosa") == 3


@pytest.mark.parametrize("how", HOW)
def test_3a_mnist_batch_prediction_runs(tmp_path: Path, how: str) -> None:
    runs = tmp_path / "runs"
    _run(make_mnist_3a(tmp_path / "nb"), runs, how)
    job = _job(runs)
    assert (job / "batch_inferencing_with_mini_batch_size").is_dir()
    step_run = f"{job.name}_batch_inferencing_with_mini_batch_size"  # ${{name}}: the step's job
    (returns,) = (runs / "datastores" / "workspaceblobstore" / step_run).glob("aggregated_*")
    lines = sorted(returns.read_text().splitlines())
    assert len(lines) == MNIST_3A_IMAGES and "3.png: 3" in lines
