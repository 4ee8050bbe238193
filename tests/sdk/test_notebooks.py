"""Published notebooks run unchanged through ``mlpipe run-script``: azure-ai-ml's
(azureml-examples, sdk/python/jobs/parallel, also with ``python`` once their imports are
switched to mlpipe; the lightgbm-iris sweep notebook) and azureml v1's (MachineLearningNotebooks, parallel-run; the many-models
solution accelerator's custom-script training)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.conftest import REPO, run_cli
from tests.sdk.notebook_support import (
    IRIS_ROWS,
    MANY_MODELS_SERIES,
    MNIST_IMAGES,
    OJ_BRANDS,
    OJ_PARTITION_WEEKS,
    OJ_PARTITIONS,
    OJ_STORES,
    OJ_WEEKS,
    STYLE_FRAMES,
    make_iris_contrib,
    make_iris_v1,
    make_iris_v2,
    make_lightgbm_sweep,
    make_many_models,
    make_mnist_contrib,
    make_mnist_v1,
    make_oj_partition,
    make_oj_sales,
    make_style_transfer,
    notebook_code,
    switch_imports,
)

pytestmark = pytest.mark.slow  # published notebooks run whole: CI's second stage


def _job_folders(runs: Path) -> list[Path]:
    return sorted(p.parent for p in runs.glob("*/job.json"))


def _check_iris(runs: Path, output: str) -> None:
    assert "Status: Completed" in output
    assert "type: parallel" in output  # print(my_job) prints the job's YAML
    assert "type: amlcompute" in output  # print(ml_client.compute.get("cpu-cluster"))
    (job,) = _job_folders(runs)
    # ${{name}} in the step's output path is the step's job name: <job>_<step>
    (result,) = (runs / "datastores" / "workspaceblobstore").glob(
        f"{job.name}_*/aggregated_returns.csv")
    rows = pd.read_csv(result, sep=" ", header=None)
    assert len(rows) == IRIS_ROWS
    assert set(rows[4]) == {"Setosa", "Versicolor"}


def _check_oj(runs: Path, output: str) -> None:
    assert "Status: Completed" in output
    (job,) = _job_folders(runs)
    # azure-ai-ml names the step after parallel_run_function(name=...), not its variable
    step = job / "train_many_models_with_partition_keys"
    models = sorted(p.name for p in (step / "outputs" / "model_folder").iterdir())
    assert models == sorted(f"{s}_{b}.txt" for s in OJ_STORES for b in OJ_BRANDS)
    first = (step / "outputs" / "model_folder" / models[0]).read_text()
    assert first.split()[1] == str(OJ_WEEKS)  # one partition = one store/brand's rows


def _run_unchanged(notebook: Path, runs: Path) -> str:
    """``mlpipe run-script NOTEBOOK`` over the runs folder ``runs``; its stdout."""
    proc = run_cli("run-script", str(notebook), env={"MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


V2_NOTEBOOKS = [(make_iris_v2, _check_iris), (make_oj_sales, _check_oj)]


@pytest.mark.parametrize(("make", "check"), V2_NOTEBOOKS, ids=["2a_iris", "1a_oj_sales"])
@pytest.mark.parametrize("how", ["run-script", "python with imports switched"])
def test_azureml_examples_parallel_notebooks_run(tmp_path: Path, make: Any, check: Any,
                                                 how: str) -> None:
    notebook = make(tmp_path / "nb")
    runs = tmp_path / "runs"
    if how == "run-script":  # unchanged
        check(runs, _run_unchanged(notebook, runs))
    else:
        code = switch_imports(notebook_code(notebook))
        assert "azure" not in "".join(line for line in code.splitlines()
                                      if line.startswith(("from ", "import ")))
        script = notebook.with_suffix(".py")
        script.write_text(code)
        env = {**os.environ, "PYTHONPATH": str(REPO), "MLPIPE_RUNS_DIR": str(runs)}
        proc = subprocess.run([sys.executable, script.name], cwd=script.parent, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        check(runs, proc.stdout)


def test_v1_mnist_file_dataset_notebook_runs_unchanged(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    out = _run_unchanged(make_mnist_v1(tmp_path / "mnist"), runs)
    assert f"Prediction has  {MNIST_IMAGES}  rows" in out
    assert out.count("PipelineRun Status: Finished") == 2
    # The model came from the mnist-model container (urllib), registered, read in the workers.
    assert "0.png           9" in out
    first, second = sorted((runs / "datastores" / "workspaceblobstore").iterdir())
    assert len((first / "inferences" / "mnist_outputs.txt").read_text().splitlines()) == \
        MNIST_IMAGES
    # The second submission's pipeline_parameters: one image, mini-batches of 1.
    assert (second / "inferences" / "mnist_outputs.txt").read_text().splitlines() == ["0.png: 9"]


def test_v1_iris_tabular_dataset_notebook_runs_unchanged(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    out = _run_unchanged(make_iris_v1(tmp_path / "iris"), runs)
    assert f"Prediction has  {IRIS_ROWS}  rows" in out
    (job,) = _job_folders(runs)
    (output,) = (runs / "datastores" / "workspaceblobstore").glob(f"{job.name}_*/**/iris_outputs.txt")
    rows = pd.read_csv(output, sep=" ", header=None)
    expected = pd.read_csv(tmp_path / "iris" / "blob" / "sampledata" / "iris" / "iris.csv")
    assert sorted(rows[4]) == sorted((expected["petal.length"] >= 2.5).astype(int))


def test_v1_contrib_era_iris_notebook_runs_unchanged(tmp_path: Path) -> None:
    """The notebook as published in 2019 (MachineLearningNotebooks 2214ea8): the contrib
    ParallelRunStep, the model as a side input read through Model.get_model_path in init(),
    the result found through next(pipeline_run.get_children())."""
    runs = tmp_path / "runs"
    out = _run_unchanged(make_iris_contrib(tmp_path / "iris"), runs)
    assert f"Prediction has  {IRIS_ROWS}  rows" in out
    (result,) = (tmp_path / "iris" / "iris_results").rglob("parallel_run_step.txt")
    rows = pd.read_csv(result, sep=" ", header=None)
    expected = pd.read_csv(tmp_path / "iris" / "blob" / "sampledata" / "iris" / "iris.csv")
    assert sorted(rows[4]) == sorted((expected["petal.length"] >= 2.5).astype(int))


def test_v1_contrib_era_mnist_notebook_runs_unchanged(tmp_path: Path) -> None:
    """The 2019 file-dataset notebook (MachineLearningNotebooks 2214ea8): the contrib
    ParallelRunStep with ``models=[model]`` (a folder model read by name in init()), an
    ``output=`` PipelineData, ``next(pipeline_run.get_children()).get_output_data(...)``."""
    runs = tmp_path / "runs"
    out = _run_unchanged(make_mnist_contrib(tmp_path / "mnist"), runs)
    assert f"Prediction has  {MNIST_IMAGES}  rows" in out
    (result,) = (tmp_path / "mnist" / "mnist_results").rglob("parallel_run_step.txt")
    lines = sorted(result.read_text().splitlines())
    # each image's first byte is its index; the stand-in model maps digit d to 9 - d
    assert lines == sorted(f"{i}.png: {9 - i % 10}" for i in range(MNIST_IMAGES))


def test_v1_style_transfer_notebook_runs_unchanged(tmp_path: Path) -> None:
    """pipeline-style-transfer-parallel-run: a pipeline given only its last step (the split
    and ParallelRunStep steps come in through their OutputFileDatasetConfigs), a
    PipelineParameter as node_count and in arguments, the model found by name in init()
    (``Model.get_model_path(args.style)``) and AZUREML_BI_OUTPUT_PATH, then the video
    downloaded through ``find_step_run(...)[0].get_details()['outputDatasets'][0]['dataset']``."""
    folder = tmp_path / "style"
    out = _run_unchanged(make_style_transfer(folder), tmp_path / "runs")
    assert "Mosaic model does not exist, registering it" in out
    video = folder / "output_video_mosaic" / "video_with_audio.mp4"
    # each frame styled once (mosaic: +1) and stitched in order, with the split step's audio
    assert video.read_text().splitlines() == [
        " ".join(f"mosaic:{frame + 1}" for frame in range(1, STYLE_FRAMES + 1)),
        f"audio of {STYLE_FRAMES} frames"]


def test_many_models_accelerator_training_notebook_runs_unchanged(tmp_path: Path) -> None:
    from mlpipe.sdk.assets import AssetStore

    notebook, register = make_many_models(tmp_path / "Custom_Script")
    runs = tmp_path / "runs"
    env = {"MLPIPE_RUNS_DIR": str(runs)}
    assert run_cli("run-script", str(register), cwd=register.parent, env=env).returncode == 0
    out = _run_unchanged(notebook, runs)
    assert f"Number of Models: {len(MANY_MODELS_SERIES)}" in out
    assert "Average MAPE: " in out and "exception happened" not in out
    # Each series' model was registered by the entry script, tagged with its series.
    models = AssetStore(runs).list("model")
    assert sorted((m["tags"]["Store"], m["tags"]["Brand"]) for m in models) == \
        sorted(MANY_MODELS_SERIES)
    assert all(Path(m["path"]).is_file() for m in models)


def test_v1_tabular_partition_per_column_notebook_runs(tmp_path: Path) -> None:
    import importlib.util

    notebook = make_oj_partition(tmp_path / "partition")
    if importlib.util.find_spec("requests") is None:  # its download cell needs requests
        data = json.loads(notebook.read_text())
        (cell,) = [c for c in data["cells"] if "import requests" in "".join(c["source"])]
        cell["source"] = ['import shutil\n', 'oj_sales_path = "./oj.csv"\n',
                          'shutil.copy("stand-ins/dominicks_OJ.csv", oj_sales_path)\n']
        notebook.write_text(json.dumps(data))
    runs = tmp_path / "runs"
    out = _run_unchanged(notebook, runs)
    rows = len(OJ_PARTITIONS) * OJ_PARTITION_WEEKS
    assert f"Prediction has  {rows}  rows" in out
    (job,) = _job_folders(runs)
    (output,) = (runs / "datastores" / "workspaceblobstore").glob(
        f"{job.name}_*/**/revenue_outputs.txt")
    table = pd.read_csv(output, sep=" ", header=None)
    assert table.shape == (rows, 19)
    # One mini-batch per (Store, Brand): total_income is that partition's INCOME sum.
    incomes = {(str(s), b): t for s, b, t in zip(table[16], table[17], table[18], strict=True)}
    assert incomes == {p: sum(10 + w for w in range(OJ_PARTITION_WEEKS)) for p in OJ_PARTITIONS}


def test_lightgbm_iris_sweep_notebook_runs_unchanged(tmp_path: Path) -> None:
    """A command job, then the same command swept twice as standalone sweep jobs (the second
    from a command component, with a median-stopping policy), as the notebook submits them."""
    notebook = make_lightgbm_sweep(tmp_path / "nb")
    runs = tmp_path / "runs"
    output = _run_unchanged(notebook, runs)
    assert output.count("file://") == 3  # each returned_job.studio_url
    records = [json.loads((job / "job.json").read_text()) for job in _job_folders(runs)]
    assert sorted((r["kind"], r["status"], r["display_name"] or "") for r in records) == [
        ("command", "completed", ""), ("sweep", "completed", ""),
        ("sweep", "completed", "lightgbm-iris-sweep-example")]
    for record in (r for r in records if r["kind"] == "sweep"):
        trials = record["steps"]["sweep"]["trials"]
        assert len(trials) == 20
        done = {name: t["test-multi_logloss"] for name, t in trials.items()
                if t["status"] == "completed"}
        assert record["steps"]["sweep"]["best_trial"] == min(done, key=lambda n: done[n])
        assert all(t["status"] in ("completed", "early_terminated") for t in trials.values())
    example = next(r for r in records if r["display_name"])
    assert example["experiment_name"] == "lightgbm-iris-sweep-example"
