"""tools/sweep_published_programs.py: which files of a checkout it sweeps, how it switches
imports, why it says a run failed, and a whole sweep of a small checkout (slow)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

TOOL = REPO / "tools" / "sweep_published_programs.py"
_spec = importlib.util.spec_from_file_location("sweep_published_programs", TOOL)
assert _spec is not None and _spec.loader is not None
sweep = sys.modules.setdefault(_spec.name, importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(sweep)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def notebook(path: Path, *cells: str) -> Path:
    data = {"cells": [{"cell_type": "markdown", "source": ["ParallelRunStep in prose\n"]}]
            + [{"cell_type": "code", "source": cell.splitlines(keepends=True)} for cell in cells],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return write(path, json.dumps(data))


# A v2 program that builds and runs a one-step parallel pipeline; its entry script.
V2_PROGRAM = """\
from azure.ai.ml import Input, Output, MLClient
from azure.ai.ml.dsl import pipeline
from azure.ai.ml.parallel import parallel_run_function, RunFunction
from azure.identity import DefaultAzureCredential

ml_client = MLClient.from_config(DefaultAzureCredential())
score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(lines=Output(type="uri_file")), input_data="${{inputs.data}}",
    mini_batch_size="1", instance_count=1,
    task=RunFunction(code="./src", entry_script="score.py",
                     append_row_to="${{outputs.lines}}"))


@pipeline(default_compute="cpu-cluster")
def batch(data):
    score(data=data)


job = ml_client.jobs.create_or_update(batch(data=Input(type="uri_folder", path="./data")))
ml_client.jobs.stream(job.name)
"""
ENTRY = "def init():\n    pass\n\n\ndef run(mini_batch):\n    return list(mini_batch)\n"


def make_checkout(root: Path) -> Path:
    nb = root / "sdk" / "parallel"
    notebook(nb / "batch.ipynb", "%pip install azure-ai-ml", V2_PROGRAM)
    write(nb / "src" / "score.py", ENTRY)  # an entry script: not a program
    write(nb / "data" / "a.txt", "a\n")
    # a v1 notebook whose own code needs a framework this machine lacks
    notebook(root / "v1" / "torch-batch.ipynb",
             "from azureml.core import Workspace\nfrom azureml.pipeline.steps import "
             "ParallelRunStep\nimport torch\n")
    write(root / "v1" / "pipeline_helper.py", "from azureml.pipeline.steps import "
          "ParallelRunConfig\n")  # a module the notebook below imports: not a program
    notebook(root / "v1" / "uses-helper.ipynb", "import pipeline_helper\n")
    write(root / "other" / "train.ipynb", json.dumps({"cells": []}))  # no parallel step
    cli = root / "cli"
    write(cli / "run-job.sh", "az ml job create -f $1\n")
    write(cli / "jobs" / "p" / "pipeline.yml", "type: pipeline\njobs:\n  s:\n    type: parallel\n")
    write(cli / "jobs" / "c" / "pipeline.yml", "type: pipeline\njobs:\n  s:\n    type: command\n")
    return root


def test_picks_programs_building_parallel_steps(tmp_path: Path) -> None:
    root = make_checkout(tmp_path / "examples")
    picked = {(p.kind, p.name) for p in sweep.find_programs(root)}
    assert picked == {("notebook", "examples/sdk/parallel/batch.ipynb"),
                      ("notebook", "examples/v1/torch-batch.ipynb"),
                      ("az", "examples/cli/jobs/p/pipeline.yml")}


def test_listed_programs_are_picked_without_a_parallel_step(tmp_path: Path) -> None:
    notebook(tmp_path / "lightgbm-iris-sweep.ipynb", "print(1)\n")
    (program,) = sweep.find_programs(tmp_path)
    assert program.path.name == "lightgbm-iris-sweep.ipynb"


def test_switch_imports_follows_the_mirrors() -> None:
    code = ("from azure.ai.ml import MLClient\nfrom azure.ai.ml.dsl import pipeline\n"
            "    from azureml.core.runconfig import RunConfiguration\n"
            "from azureml.contrib.pipeline.steps import ParallelRunStep\n"
            "from azure.ai.ml.parallel import RunFunction\nfrom sklearn import svm\n"
            "import azureml.core\n")
    assert sweep.switch_imports(code) == (
        "from mlpipe import MLClient\nfrom mlpipe.dsl import pipeline\n"
        "    from mlpipe.v1 import RunConfiguration\nfrom mlpipe.v1 import ParallelRunStep\n"
        "from mlpipe.parallel import RunFunction\nfrom sklearn import svm\n"
        "import mlpipe\nimport azureml.core\n")  # resolved by the mirrors importing mlpipe installs


@pytest.mark.parametrize(("reason", "cause"), [
    ("ModuleNotFoundError: No module named 'torch.nn'", "framework (torch)"),
    ("step s: cannot load score.py: ModuleNotFoundError: No module named 'mlflow'",
     "framework (mlflow)"),
    ("ModuleNotFoundError: No module named 'azureml.train'", "mlpipe"),
    ("mlpipe.errors.NotAvailableLocally: ml_client.online_endpoints runs in Azure only",
     "cloud-only"),
    ("urllib.error.URLError: https://x.blob.core.windows.net/a.csv cannot be reached from here",
     "cloud data"),
    ("DataError: <input>: reading cloud storage needs azure-storage-blob", "cloud data"),
    ("x.py:27:21: jobs.command.inputs.iris_csv: https://a.blob.core.windows.net/d/iris.csv: "
     "cannot reach the storage account at https://a.blob.core.windows.net", "cloud data"),
    ("RemoteAssetsError: https://h/iris.csv: remote asset not available offline", "cloud data"),
    ("AssetNotFoundError: no environment asset named 'e' is registered in r/registry.json",
     "workspace asset"),
    ("timeout after 600 s", "timeout"),
    ("KeyError: 'outputDatasets'", "mlpipe"),
])
def test_classify(reason: str, cause: str) -> None:
    assert sweep.classify(reason) == cause


def test_a_threshold_failure_is_classified_by_its_error_groups() -> None:
    """A step stopped by its error threshold says why in its error groups (the console's
    ``24 x ModuleNotFoundError: ...`` lines): a library the entry script needs is a framework
    cause, not mlpipe's."""
    reason = "step train: 6 mini-batches failed, more than mini_batch_error_threshold = 5"
    output = f"{reason}\n  24 x ModuleNotFoundError: No module named 'skops'\n  details: e.txt\n"
    assert sweep.classify(reason, output) == "framework (skops)"
    assert sweep.classify(reason, reason) == "mlpipe"
    empty = f"{reason}\n  9 x run() returned 0 results for a mini-batch of 121 items: 121 items\n"
    assert sweep.classify(reason, empty) == "program returns no results"


def test_a_parallel_steps_error_groups_explain_its_threshold_failure(tmp_path: Path) -> None:
    """A step stopped by its threshold: the step's error groups (logs/user/error.txt) go with
    its error, so a program whose run() returns nothing is classified as such."""
    logs = tmp_path / "runs" / "j" / "train" / "logs"
    (logs / "user").mkdir(parents=True)
    (logs / "user" / "error.txt").write_text(
        "9 failures in 1 distinct errors.\n\n[ReturnValue] run() returned 0 results for a "
        "mini-batch of 121 items: 121 items are counted as failed.\n  failures: 9\n")
    reason = "6 mini-batches failed, more than mini_batch_error_threshold = 5"
    record = {"steps": {"train": {"status": "failed", "ended_at": "2026-01-01T00:00:02",
                                  "error": reason, "logs_dir": str(logs)}}}
    (tmp_path / "runs" / "j" / "job.json").write_text(json.dumps(record))
    found = sweep.step_failure(tmp_path / "runs")
    assert found is not None
    why, detail = found
    assert why == f"step train: {reason}"
    assert sweep.classify(why, detail) == "program returns no results"


def test_a_failed_job_is_explained_by_its_first_failed_step(tmp_path: Path) -> None:
    record = {"steps": {
        "late": {"status": "failed", "ended_at": "2026-01-01T00:00:09", "error": "upstream"},
        "first": {"status": "failed", "ended_at": "2026-01-01T00:00:02",
                  "error": "No worker could start: ModuleNotFoundError: No module named 'x'\n"
                           "Traceback (most recent call last):\n  File \"s.py\", line 1\n"
                           "ModuleNotFoundError: No module named 'x'"},
        "ok": {"status": "completed"}}}
    write(tmp_path / "job_1" / "job.json", json.dumps(record))
    write(tmp_path / "job_2" / "job.json", "{damaged")  # skipped
    why, detail = sweep.step_failure(tmp_path)
    assert why == "step first: No worker could start: ModuleNotFoundError: No module named 'x'"
    assert "Traceback" in detail
    assert sweep.step_failure(tmp_path / "none") is None
    command = {"steps": {"prep": {"status": "failed", "error": "command exited with code 1:\n"
                                  "Traceback (most recent call last):\nValueError: no rows"}}}
    write(tmp_path / "other" / "job_3" / "job.json", json.dumps(command))
    assert sweep.step_failure(tmp_path / "other")[0] == \
        "step prep: command exited with code 1: ValueError: no rows"


@pytest.mark.slow
def test_a_sweep_runs_each_program_both_ways_and_says_why_it_failed(tmp_path: Path) -> None:
    root = make_checkout(tmp_path / "examples")
    out = tmp_path / "outcomes.json"
    proc = subprocess.run([sys.executable, str(TOOL), str(root), "--only", "ipynb",
                           "--timeout", "300", "--json", str(out), "--markdown"],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {(o["program"].split("/")[-1], o["how"]): o for o in json.loads(out.read_text())}
    assert rows[("batch.ipynb", "switched")]["ok"], rows
    assert rows[("batch.ipynb", "unchanged")]["ok"], rows
    for how in ("switched", "unchanged"):
        assert rows[("torch-batch.ipynb", how)]["cause"] == "framework (torch)"
    assert "switched: 1/2 ran; unchanged: 1/2 ran (failures: framework (torch) 2)" in proc.stdout
    assert "| `examples/sdk/parallel/batch.ipynb` | ran |" in proc.stdout
    assert list(tmp_path.iterdir()) == [root, out] or sorted(tmp_path.iterdir()) == sorted(
        [root, out])  # nothing left behind in the working folder
