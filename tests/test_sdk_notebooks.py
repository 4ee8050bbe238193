"""Published notebooks run unchanged through ``mlpipe run-script``: azure-ai-ml's
(azureml-examples, sdk/python/jobs/parallel; also with ``python`` once their imports are
switched to mlpipe) and azureml v1's (MachineLearningNotebooks, parallel-run; the many-models
solution accelerator's custom-script training)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from tests.conftest import REPO, run_cli
from tests.notebook_support import (
    IRIS_ROWS,
    MANY_MODELS_SERIES,
    MNIST_IMAGES,
    OJ_BRANDS,
    OJ_STORES,
    OJ_WEEKS,
    make_iris_v1,
    make_iris_v2,
    make_many_models,
    make_mnist_v1,
    make_oj_sales,
    notebook_code,
    switch_imports,
)


def _job_folders(runs: Path) -> list[Path]:
    return sorted(p.parent for p in runs.glob("*/job.json"))


def _check_iris(runs: Path, output: str) -> None:
    assert "Status: Completed" in output
    assert "type: parallel" in output  # print(my_job) prints the job's YAML
    assert "type: amlcompute" in output  # print(ml_client.compute.get("cpu-cluster"))
    (job,) = _job_folders(runs)
    result = runs / "datastores" / "workspaceblobstore" / job.name / "aggregated_returns.csv"
    rows = pd.read_csv(result, sep=" ", header=None)
    assert len(rows) == IRIS_ROWS
    assert set(rows[4]) == {"Setosa", "Versicolor"}


def _check_oj(runs: Path, output: str) -> None:
    assert "Status: Completed" in output
    (job,) = _job_folders(runs)
    models = sorted(p.name for p in (job / "parallel_train" / "outputs" / "model_folder").iterdir())
    assert models == sorted(f"{s}_{b}.txt" for s in OJ_STORES for b in OJ_BRANDS)
    first = (job / "parallel_train" / "outputs" / "model_folder" / models[0]).read_text()
    assert first.split()[1] == str(OJ_WEEKS)  # one partition = one store/brand's rows


def test_iris_batch_prediction_notebook_runs_unchanged(tmp_path: Path) -> None:
    notebook = make_iris_v2(tmp_path / "2a")
    runs = tmp_path / "runs"
    proc = run_cli("run-script", str(notebook), env={"MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _check_iris(runs, proc.stdout)


def test_oj_sales_many_models_notebook_runs_unchanged(tmp_path: Path) -> None:
    notebook = make_oj_sales(tmp_path / "1a")
    runs = tmp_path / "runs"
    proc = run_cli("run-script", str(notebook), env={"MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _check_oj(runs, proc.stdout)


def _run_python(script: Path, runs: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "MLPIPE_RUNS_DIR": str(runs)}
    return subprocess.run([sys.executable, script.name], cwd=script.parent, env=env,
                          capture_output=True, text=True, timeout=300)


def test_both_notebooks_run_with_python_once_their_imports_are_switched(tmp_path: Path) -> None:
    for make, check in ((make_iris_v2, _check_iris), (make_oj_sales, _check_oj)):
        notebook = make(tmp_path / make.__name__)
        code = switch_imports(notebook_code(notebook))
        assert "azure" not in "".join(line for line in code.splitlines()
                                      if line.startswith(("from ", "import ")))
        script = notebook.with_suffix(".py")
        script.write_text(code)
        runs = tmp_path / f"runs_{make.__name__}"
        proc = _run_python(script, runs)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        check(runs, proc.stdout)


def test_v1_mnist_file_dataset_notebook_runs_unchanged(tmp_path: Path) -> None:
    notebook = make_mnist_v1(tmp_path / "mnist")
    runs = tmp_path / "runs"
    proc = run_cli("run-script", str(notebook), env={"MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Prediction has  {MNIST_IMAGES}  rows" in proc.stdout
    assert proc.stdout.count("PipelineRun Status: Finished") == 2
    # The model came from the mnist-model container (urllib), registered, read in the workers.
    assert "0.png           9" in proc.stdout
    first, second = sorted((runs / "datastores" / "workspaceblobstore").iterdir())
    assert len((first / "inferences" / "mnist_outputs.txt").read_text().splitlines()) == \
        MNIST_IMAGES
    # The second submission's pipeline_parameters: one image, mini-batches of 1.
    assert (second / "inferences" / "mnist_outputs.txt").read_text().splitlines() == ["0.png: 9"]


def test_v1_iris_tabular_dataset_notebook_runs_unchanged(tmp_path: Path) -> None:
    notebook = make_iris_v1(tmp_path / "iris")
    runs = tmp_path / "runs"
    proc = run_cli("run-script", str(notebook), env={"MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Prediction has  {IRIS_ROWS}  rows" in proc.stdout
    (job,) = _job_folders(runs)
    (output,) = (runs / "datastores" / "workspaceblobstore" / job.name).rglob("iris_outputs.txt")
    rows = pd.read_csv(output, sep=" ", header=None)
    expected = pd.read_csv(tmp_path / "iris" / "blob" / "sampledata" / "iris" / "iris.csv")
    assert sorted(rows[4]) == sorted((expected["petal.length"] >= 2.5).astype(int))


def test_many_models_accelerator_training_notebook_runs_unchanged(tmp_path: Path) -> None:
    from mlpipe.sdk.assets import AssetStore

    notebook, register = make_many_models(tmp_path / "Custom_Script")
    runs = tmp_path / "runs"
    env = {"MLPIPE_RUNS_DIR": str(runs)}
    assert run_cli("run-script", str(register), cwd=register.parent, env=env).returncode == 0
    proc = run_cli("run-script", str(notebook), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Number of Models: {len(MANY_MODELS_SERIES)}" in proc.stdout
    assert "Average MAPE: " in proc.stdout and "exception happened" not in proc.stdout
    # Each series' model was registered by the entry script, tagged with its series.
    models = AssetStore(runs).list("model")
    assert sorted((m["tags"]["Store"], m["tags"]["Brand"]) for m in models) == \
        sorted(MANY_MODELS_SERIES)
    assert all(Path(m["path"]).is_file() for m in models)
