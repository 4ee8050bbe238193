"""The local ``MLClient``'s operation groups, the entities' azure-ai-ml defaults, and the
``mlpipe run-script`` import mirrors."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mlpipe import Input, MLClient, pipeline
from mlpipe.constants import AssetTypes
from mlpipe.entities import AmlCompute, Data, Environment, Model
from mlpipe.parallel import RunFunction, parallel_run_function
from mlpipe.sdk.operations import NotAvailableLocally
from tests.conftest import REPO, run_cli
from tests.sdk.support import make_file_project, write

echo = parallel_run_function(
    name="echo", inputs=dict(files=Input(type="uri_folder")), input_data="${{inputs.files}}",
    mini_batch_size="2", task=RunFunction(code="./src", entry_script="echo.py"))


@pipeline()
def from_asset(files):  # type: ignore[no-untyped-def]
    echo(files=files)


def test_a_data_asset_registered_in_the_script_resolves_in_a_later_job(tmp_path: Path) -> None:
    root = make_file_project(tmp_path / "proj", files=3)
    client = MLClient(runs_dir=tmp_path / "runs")
    first = client.data.create_or_update(Data(name="files", path=str(root / "data"),
                                              type=AssetTypes.URI_FOLDER))
    second = client.data.create_or_update(Data(name="files", path=str(root / "src")))
    assert (first.version, second.version) == ("1", "2")
    assert first.id == "azureml:files:1" and first.tags == {} and first.properties == {}
    assert client.data.get("files", label="latest").path == str((root / "src").resolve())
    assert [d.version for d in client.data.list(name="files")] == ["1", "2"]

    job = from_asset(files=Input(type="uri_folder", path="azureml:files:1"))
    job.jobs["echo"].task.code = str(root / "src")
    result = client.jobs.create_or_update(job, experiment_name="assets")
    assert result.ok, result
    assert result.plan.steps[0].inputs["files"].path == str((root / "data").resolve())

    # The job is in the runs folder: get, list, download, stream.
    assert client.jobs.get(result.name).status == "Completed"
    assert result.name in [j.name for j in client.jobs.list()]
    children = client.jobs.list(parent_job_name=result.name)  # named as ${{name}} names them
    assert [(s.name, s.display_name) for s in children] == [(f"{result.name}_echo", "echo")]
    client.jobs.stream(result.name)
    assert client.jobs.begin_cancel(result.name).status() == "Succeeded"  # ended: unchanged
    assert client.jobs.get(result.name).status == "Completed"


def test_an_unregistered_asset_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    client = MLClient(runs_dir=tmp_path / "runs")
    with pytest.raises(LookupError, match="no data asset named 'iris'"):
        client.data.get("iris", "1")
    client.models.create_or_update(Model(name="m", path=str(tmp_path)))
    with pytest.raises(LookupError, match=r"no version '7' \(registered: 1\)"):
        client.models.get("m", "7")


def test_compute_workspaces_and_environments_answer_locally(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    client = MLClient.from_config(credential=None, runs_dir=tmp_path / "runs")  # no config.json
    cluster = client.compute.get("cpu-cluster")
    assert isinstance(cluster, AmlCompute) and cluster.name == "cpu-cluster"
    assert "type: amlcompute" in str(cluster)
    poller = client.compute.begin_create_or_update(AmlCompute(name="gpu", size="NC6",
                                                              max_instances=4))
    assert poller.result().size == "NC6" and "recorded only" in capsys.readouterr().err
    assert [c.name for c in client.compute.list()] == ["gpu"]
    assert client.workspaces.get().name == "local"
    env = client.environments.create_or_update(Environment(name="env", image="python:3.11"))
    assert env.version == "1" and env.image == "python:3.11" and env.tags == {}


def test_what_cannot_be_local_names_the_call_and_never_raises_attribute_error(
        tmp_path: Path) -> None:
    client = MLClient(runs_dir=tmp_path / "runs")
    with pytest.raises(NotAvailableLocally, match=r"ml_client\.batch_endpoints\."
                                                  r"begin_create_or_update\(\) needs an Azure"):
        client.batch_endpoints.begin_create_or_update(object())
    with pytest.raises(NotAvailableLocally, match=r"ml_client\.jobs\.archive\(\)"):
        client.jobs.archive("x")


def test_entities_have_azure_ai_ml_defaults() -> None:
    job = from_asset(files=Input(type="uri_folder", path="."))
    assert job.tags == {} and job.properties == {}
    job.tags.update({"team": "a"})
    assert "team: a" in job.to_yaml()
    assert Environment(image="x").tags == {}
    assert Data(name="d").type == "uri_folder" and Model(name="m").type == "custom_model"


NOTEBOOK = {"cells": [
    {"cell_type": "markdown", "source": ["# title"]},
    {"cell_type": "code", "source": ["%pip install azure-ai-ml\n", "!ls\n",
                                     "from azure.ai.ml.constants import AssetTypes\n"]},
    {"cell_type": "code", "source": ["%%writefile src/hello.py\n", "print('hi')\n"]},
    {"cell_type": "code", "source": ["folder = {'src': 'src'}\n"]},
    {"cell_type": "code", "source": ["%%writefile {folder[src]}/{folder[src]}.py\n", "# {x}\n"]},
    {"cell_type": "code", "source": ["%%bash\n", "echo no\n"]},
    {"cell_type": "code", "source": ["import azure.ai.ml, mlpipe.constants\n",
                                     "from azure.ai.ml import UserIdentityConfiguration\n",
                                     "print('SAME', AssetTypes is mlpipe.constants.AssetTypes)\n",
                                     "print(open('src/hello.py').read().strip())\n",
                                     "print(open('src/src.py').read().strip())\n",
                                     "display('shown')\n",
                                     "AssetTypes.MLTABLE"]},
]}


def test_run_script_runs_notebook_cells_in_order(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    notebook = write(tmp_path / "nb.ipynb", json.dumps(NOTEBOOK))
    proc = run_cli("run-script", str(notebook), cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    # %%writefile expands {name} from the notebook's variables, as IPython does
    assert proc.stdout.splitlines() == ["SAME True", "print('hi')", "# {x}", "'shown'",
                                        "'mltable'"]
    assert "skipped '%pip'" in proc.stderr and "skipped '!ls'" in proc.stderr
    assert "skipped cell magic %%bash" in proc.stderr


def test_run_script_mirrors_only_its_own_process(tmp_path: Path) -> None:
    script = write(tmp_path / "s.py", "import sys\nfrom azureml.core import Workspace\n"
                   "import azure.ai.ml.entities as e\nprint(Workspace.from_config().name, "
                   "e.ResourceConfiguration(instance_count=2).instance_count, sys.argv[1:])\n"
                   "import azure.ai.ml.data_transfer\n")
    proc = run_cli("run-script", str(script), "a", "--b")
    assert proc.stdout.splitlines() == ["local 2 ['a', '--b']"]
    assert proc.returncode == 1
    assert "azure.ai.ml.data_transfer has no local mirror" in proc.stderr
    if importlib.util.find_spec("azureml") is None:  # real packages stay untouched elsewhere
        plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
        assert plain.returncode == 1 and "No module named 'azureml" in plain.stderr
    assert run_cli("run-script", str(tmp_path / "missing.py")).returncode == 2
    broken = run_cli("run-script", str(write(tmp_path / "b.ipynb", "{not json")))
    assert broken.returncode == 1 and "Traceback" not in broken.stderr
    assert "b.ipynb: not a Jupyter notebook (not JSON" in broken.stderr


def test_components_made_in_code_run_and_register(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from mlpipe import Output
    from mlpipe.entities import CommandComponent, ParallelComponent, PipelineComponent

    root = make_file_project(tmp_path / "proj", files=4)
    write(root / "src" / "copy.py", "import shutil, sys\nshutil.copytree(sys.argv[1], "
                                    "sys.argv[2], dirs_exist_ok=True)\n")
    monkeypatch.setenv("MLPIPE_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.chdir(root)
    copy = CommandComponent(name="copy", version="3", code=str(root / "src"),
                            command="python copy.py ${{inputs.raw}} ${{outputs.out}}",
                            inputs={"raw": Input(type="uri_folder")},
                            outputs={"out": Output(type="uri_folder")}, environment="azureml:e:1")
    score = ParallelComponent(name="score", inputs={"files": Input(type="uri_folder")},
                              outputs={"lines": Output(type="uri_file")},
                              input_data="${{inputs.files}}", mini_batch_size="1",
                              task=RunFunction(code=str(root / "src"), entry_script="echo.py",
                                               append_row_to="${{outputs.lines}}"))

    @pipeline()
    def chain(raw):  # type: ignore[no-untyped-def]
        copied = copy(raw=raw)
        scored = score(files=copied.outputs.out)
        return {"lines": scored.outputs.lines}

    client = MLClient()
    assert client.components.create_or_update(copy).name == "copy"
    assert client.components.get("copy", "3").data["command"].startswith("python copy.py")
    result = client.jobs.create_or_update(chain(raw=Input(type="uri_folder",
                                                          path=str(root / "data"))))
    assert result.ok, result
    assert len(Path(result.outputs["lines"]).read_text().splitlines()) == 4
    with pytest.raises(TypeError, match="@pipeline function"):
        PipelineComponent(name="p")


FALLBACK_SCRIPT = """\
from azure.ai.ml import MLClient
from azure.ai.ml.entities import Data
from azure.core.exceptions import ResourceNotFoundError
from azure.identity import DefaultAzureCredential

ml_client = MLClient.from_config(DefaultAzureCredential())
try:
    data = ml_client.data.get("iris", version="1")
    print("FOUND", data.path)
except ResourceNotFoundError:
    data = ml_client.data.create_or_update(Data(name="iris", version="1", path="./data"))
    print("CREATED", data.id)
"""


def test_the_not_found_fallback_of_azure_scripts_runs(tmp_path: Path) -> None:
    script = write(tmp_path / "fallback.py", FALLBACK_SCRIPT)
    (tmp_path / "data").mkdir()
    env = {"MLPIPE_RUNS_DIR": str(tmp_path / "runs")}
    first = run_cli("run-script", str(script), cwd=tmp_path, env=env)
    assert first.stdout.splitlines() == ["CREATED azureml:iris:1"], first.stderr
    second = run_cli("run-script", str(script), cwd=tmp_path, env=env)
    assert second.stdout.splitlines()[0] == f"FOUND {tmp_path.resolve() / 'data'}"


SETTINGS_SCRIPT = """\
from azure.ai.ml import Input, MpiDistribution, command, load_data, load_online_endpoint
from azure.ai.ml.dsl import pipeline
from azure.ai.ml.entities import UserIdentityConfiguration

train = command(command="echo ${{inputs.n}}", inputs={"n": 3}, environment="azureml:e:1",
                distribution=MpiDistribution(process_count_per_instance=2),
                identity=UserIdentityConfiguration())


@pipeline()
def p():
    train()


print(p().to_yaml())
print("DATA", load_data("data.yml").path)
load_online_endpoint("endpoint.yml")
"""


def test_identity_distribution_and_asset_loaders_under_run_script(tmp_path: Path) -> None:
    script = write(tmp_path / "s.py", SETTINGS_SCRIPT)
    write(tmp_path / "data.yml", "name: d\nversion: 1\npath: ./folder\ntype: uri_folder\n")
    proc = run_cli("run-script", str(script), cwd=tmp_path)
    assert "identity:\n      type: user_identity" in proc.stdout
    assert "distribution:\n      type: mpi\n      process_count_per_instance: 2" in proc.stdout
    assert f"DATA {tmp_path.resolve() / 'folder'}" in proc.stdout
    assert proc.returncode == 1
    assert "azure.ai.ml.load_online_endpoint() needs an Azure ML workspace" in proc.stderr


def _register_model(args: tuple[str, int]) -> None:
    from mlpipe.sdk.assets import AssetStore

    runs, index = args
    AssetStore(runs).register("model", {"name": f"m{index}", "tags": {}}, f"/models/{index}")


def test_concurrent_registrations_from_worker_processes_are_all_kept(tmp_path: Path) -> None:
    import multiprocessing

    from mlpipe.sdk.assets import AssetStore

    with multiprocessing.get_context("spawn").Pool(4) as pool:
        pool.map(_register_model, [(str(tmp_path), i) for i in range(24)])
    assert sorted(m["name"] for m in AssetStore(tmp_path).list("model")) == \
        sorted(f"m{i}" for i in range(24))


def test_a_remote_data_asset_with_a_stand_in_registers_its_local_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = "https://azuremlexamples.blob.core.windows.net/datasets/iris.csv"
    write(tmp_path / "mlpipe.toml", '[assets]\n"https://azuremlexamples.blob.core.windows.net"'
                                    ' = "./blob"\n')
    write(tmp_path / "blob" / "datasets" / "iris.csv", "a,b\n1,2\n")
    monkeypatch.chdir(tmp_path)
    client = MLClient(runs_dir=tmp_path / "runs")
    data = client.data.create_or_update(Data(name="iris", path=url, type="uri_file"))
    assert data.path == str((tmp_path / "blob" / "datasets" / "iris.csv").resolve())


def test_run_script_failure_shows_the_users_frames_only(tmp_path: Path) -> None:
    script = write(tmp_path / "s.py", "def score():\n    raise ValueError('bad model')\n\n"
                   "score()\n")
    proc = run_cli("run-script", str(script))
    assert proc.returncode == 1
    frames = [line for line in proc.stderr.splitlines() if line.startswith('  File "')]
    assert frames == [f'  File "{script}", line 4, in <module>',
                      f'  File "{script}", line 2, in score'], proc.stderr
    assert proc.stderr.rstrip().endswith(f"ValueError: bad model\nmlpipe run-script: {script} failed")


def test_pipeline_job_by_hand_keeps_compute_and_identity(tmp_path: Path) -> None:
    """azure-ai-ml's ``PipelineJob(jobs=..., compute=..., identity=...)``: both are written
    to the document (and kept when a YAML is loaded), the job still runs here."""
    from mlpipe import load_job
    from mlpipe.entities import PipelineJob, UserIdentityConfiguration

    job = PipelineJob(jobs={}, compute="cpu-cluster", identity=UserIdentityConfiguration(),
                      display_name="by-hand")
    assert job.compute == "cpu-cluster"
    document = job.to_dict()
    assert document["compute"] == "cpu-cluster"
    assert document["identity"] == {"type": "user_identity"}
    yaml_file = tmp_path / "pipeline.yml"
    job.dump(yaml_file)
    loaded = load_job(yaml_file)
    assert loaded.compute == "cpu-cluster"
    assert loaded.to_dict()["identity"] == {"type": "user_identity"}


def test_stream_of_a_failed_job_says_which_step_failed_and_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A notebook's ``ml_client.jobs.stream(job.name)`` is where its user learns why the job
    failed: the failed step's error is printed and named in the exception, not only its
    folder (found by tools/sweep_published_programs.py: 'see the step logs above' with none)."""
    from mlpipe import command
    from mlpipe.sdk.operations.jobs import JobFailedError

    write(tmp_path / "src" / "prep.py", "import sys\nraise ValueError('no rows in ' + sys.argv[1])\n")

    @pipeline(default_compute="cpu-cluster")
    def two_steps() -> None:
        prep = command(command="python prep.py table.csv", code=str(tmp_path / "src"),
                       environment="env:1")
        after = command(command="echo after", environment="env:1")
        prep.name, after.name = "prep", "after"

    client = MLClient(runs_dir=tmp_path / "runs")
    result = client.jobs.create_or_update(two_steps())
    capsys.readouterr()
    with pytest.raises(JobFailedError, match=r"ended Failed: step prep: command exited with code "
                                             r"1: ValueError: no rows in table.csv$"):
        client.jobs.stream(result.name)
    out = capsys.readouterr().out
    assert "  step prep: Failed" in out
    assert "    ValueError: no rows in table.csv" in out and "Traceback" in out
