"""v1 datastores registered as Azure ML registers them, read from a real Blob API server
(Azurite): the many-models accelerator's training notebook runs with its
``register_azure_blob_container(..., create_if_not_exists=True)`` datastore, no local copy
made by hand."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.azurite_support import KEY, Azurite
from tests.conftest import run_cli
from tests.sdk.notebook_support import MANY_MODELS_SERIES, make_many_models

ACCOUNT = "automlsamplenotebookdata"
CONTAINER = "automl-sample-notebook-data"


def test_register_get_and_the_account_names(tmp_path: Path, azurite: Azurite) -> None:
    script = tmp_path / "register.py"
    script.write_text(
        "from azureml.core import Datastore, Workspace\n"
        "ws = Workspace.from_config()\n"
        f"ds = Datastore.register_azure_blob_container(ws, 'blobs', 'made-here', "
        f"'devstoreaccount1', account_key='{KEY}', create_if_not_exists=True)\n"
        "got = Datastore.get(ws, 'blobs')\n"
        "print(got.account_name, got.container_name, got.datastore_type, got)\n")
    (tmp_path / "mlpipe.toml").write_text(f'[datastores.blobs]\naccount_url = "{azurite.url()}"\n')
    runs = tmp_path / "runs"
    proc = run_cli("run-script", str(script), cwd=tmp_path, env={"MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "devstoreaccount1 made-here AzureBlob" in proc.stdout
    assert KEY not in proc.stdout + proc.stderr
    assert azurite.service().get_container_client("made-here").exists()
    assert KEY not in (runs / "assets" / "datastores.json").read_text()


@pytest.mark.slow
def test_many_models_training_notebook_runs_on_its_registered_datastore(
        tmp_path: Path, azurite: Azurite) -> None:
    notebook, register = make_many_models(tmp_path / "Custom_Script")
    folder = notebook.parent
    blob = folder / "blob" / CONTAINER
    service = azurite.service(ACCOUNT)
    if service.get_container_client(CONTAINER).exists():
        service.delete_container(CONTAINER)
    # its data is in the account (as 01_Data_Preparation put it there), not beside the notebook
    # the data is in the account, not beside the notebook; mlpipe.toml only says where the
    # account is reached and which variable holds its key
    (folder / "mlpipe.toml").write_text(
        f'[datastores.automl_many_models]\naccount_url = "{azurite.url(ACCOUNT)}"\n'
        'account_key_env = "MANY_MODELS_KEY"\n')
    container = service.get_container_client(CONTAINER)
    container.create_container()
    for path in sorted(blob.rglob("*.csv")):
        container.upload_blob(path.relative_to(blob).as_posix(), path.read_bytes())
    shutil.rmtree(folder / "blob")
    runs = tmp_path / "runs"
    env = {"MLPIPE_RUNS_DIR": str(runs), "MANY_MODELS_KEY": KEY}
    proc = run_cli("run-script", str(register), cwd=folder, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_cli("run-script", str(notebook), cwd=folder, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Number of Models: {len(MANY_MODELS_SERIES)}" in proc.stdout
    reads = azurite.requests("GET", f"/{ACCOUNT}/{CONTAINER}/oj_data_small/")
    assert len([r for r in reads if r.endswith(".csv")]) == len(MANY_MODELS_SERIES)


def _to_account(azurite: Azurite, folder: Path, containers: tuple[str, ...]) -> None:
    """Move the notebook's blob/ stand-in data into the pipelinedata account (public
    containers, as the published ones are) and drop the local copy."""
    service = azurite.service("pipelinedata")
    for name in containers:
        container = service.get_container_client(name)
        if not container.exists():
            container.create_container(public_access="container")
        for path in sorted((folder / "blob" / name).rglob("*")):
            if path.is_file():
                container.upload_blob(path.relative_to(folder / "blob" / name).as_posix(),
                                      path.read_bytes(), overwrite=True)
    shutil.rmtree(folder / "blob" / containers[0])


@pytest.mark.slow
def test_v1_mnist_notebook_reads_its_registered_blob_container(
        tmp_path: Path, azurite: Azurite) -> None:
    from tests.sdk.notebook_support import MNIST_IMAGES, make_mnist_v1

    notebook = make_mnist_v1(tmp_path / "mnist")
    folder = notebook.parent
    _to_account(azurite, folder, ("sampledata",))
    # the datastore's account is the emulator; the model, fetched with urllib from a URL (no
    # datastore), keeps its URL stand-in
    (folder / "mlpipe.toml").write_text(
        f'[datastores.mnist_datastore]\naccount_url = "{azurite.url("pipelinedata")}"\n'
        '[assets]\n"https://pipelinedata.blob.core.windows.net/mnist-model" = '
        '"./blob/mnist-model"\n')
    runs = tmp_path / "runs"
    proc = run_cli("run-script", str(notebook), cwd=folder, env={"MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Prediction has  {MNIST_IMAGES}  rows" in proc.stdout
    reads = azurite.requests("GET", "/pipelinedata/sampledata/mnist/")
    # streamed (ro_mount) by the first pipeline, each image once; the single-image pipeline
    # after it reads mnist/0.png again (a mounted input is not cached, as in Azure)
    images = Counter(r.rsplit("/", 1)[1] for r in reads if r.endswith(".png"))
    assert len(images) == MNIST_IMAGES
    assert {name: n for name, n in images.items() if n != 1} == {"0.png": 2}


@pytest.mark.slow
@pytest.mark.parametrize("era", ["current", "contrib"])
def test_v1_iris_notebook_reads_its_registered_blob_containers(
        tmp_path: Path, azurite: Azurite, era: str) -> None:
    """The published notebook, current and as of 2019 (azureml.contrib's ParallelRunStep with
    the model as ``models=[model]``), reads both registered containers from the account."""
    from tests.sdk.notebook_support import IRIS_ROWS, make_iris_contrib, make_iris_v1

    make = make_iris_v1 if era == "current" else make_iris_contrib
    notebook = make(tmp_path / "iris")
    folder = notebook.parent
    _to_account(azurite, folder, ("sampledata", "iris-model"))
    shutil.rmtree(folder / "blob")
    (folder / "mlpipe.toml").write_text("".join(
        f'[datastores.{name}]\naccount_url = "{azurite.url("pipelinedata")}"\n'
        for name in ("iris_datastore_data", "iris_model_datastore")))
    runs = tmp_path / "runs"
    proc = run_cli("run-script", str(notebook), cwd=folder, env={"MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Prediction has  {IRIS_ROWS}  rows" in proc.stdout
    assert azurite.requests("GET", "/pipelinedata/iris-model/")


DEFINE_AND_RUN = """\
import sys
from azureml.core import Dataset, Datastore, Experiment, Workspace
from azureml.data.data_reference import DataReference
from azureml.data.datapath import DataPath, DataPathComputeBinding
from azureml.pipeline.core import Pipeline, PipelineParameter
from azureml.pipeline.steps import PythonScriptStep

ws = Workspace.from_config()
ds = Datastore.get(ws, "blobs")
folder = DataReference(ds, "docs", "in/", mode=sys.argv[1])
one = DataReference(ds, "one", "in/a.txt")
sub = (PipelineParameter("sub", default_value=DataPath(ds, "in/sub")),
       DataPathComputeBinding(mode="mount"))
Dataset.File.from_files(path=ds.path("in/sub/")).register(ws, "subs")
named = Dataset.get_by_name(ws, "subs").as_named_input("named").as_mount()
step = PythonScriptStep("read.py", arguments=[folder, one, sub, named, sys.argv[2]],
                        inputs=[folder, one, sub, named], source_directory="src",
                        compute_target="cpu")
pipeline = Pipeline(ws, steps=[step])
print("DEFINED", flush=True)
if sys.argv[3] == "run":
    Experiment(ws, "refs").submit(pipeline).wait_for_completion(show_output=False)
"""

READ = """\
import os, sys
lines = []
for arg in sys.argv[1:5]:
    paths = [arg] if os.path.isfile(arg) else sorted(
        os.path.join(d, f) for d, _, fs in os.walk(arg) for f in fs)
    lines.append(" ".join(f"{os.path.basename(p)}={open(p).read().strip()}" for p in paths))
open(sys.argv[5], "w").write("\\n".join(lines) + "\\n")
"""


@pytest.mark.parametrize("mode", ["mount", "download"])
def test_v1_data_references_move_no_data_until_the_step_runs(
        tmp_path: Path, azurite: Azurite, mode: str) -> None:
    """azureml-core moves a DataReference's, a DataPath's and a datastore dataset's data
    when the step runs (mount or download), not when the pipeline is defined (nor when the
    dataset is registered): defining one reads no blob; running it reads each blob once and the step sees the account's files."""
    container = azurite.container("refs")
    for name, text in {"a.txt": "ay", "b.txt": "bee", "sub/c.txt": "sea"}.items():
        container.upload_blob(f"in/{name}", text.encode())
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "read.py").write_text(READ)
    (tmp_path / "pipeline.py").write_text(DEFINE_AND_RUN)
    (tmp_path / "mlpipe.toml").write_text(f'[datastores.blobs]\naccount_url = "{azurite.url()}"\n')
    runs = tmp_path / "runs"
    env = {"MLPIPE_RUNS_DIR": str(runs)}
    from tests.jobs.cloud_support import register

    register(tmp_path, runs, "blobs", container.container_name)
    name = container.container_name
    out = tmp_path / "seen.txt"
    proc = run_cli("run-script", str(tmp_path / "pipeline.py"), mode, str(out), "define",
                   cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "DEFINED" in proc.stdout
    assert azurite.requests("GET", f"/{name}/in/") == []  # defined: no blob read
    assert not (runs / "datastores" / "blobs").exists()  # and no local copy made
    proc = run_cli("run-script", str(tmp_path / "pipeline.py"), mode, str(out), "run",
                   cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out.read_text().splitlines() == ["a.txt=ay b.txt=bee c.txt=sea", "a.txt=ay",
                                            "c.txt=sea", "c.txt=sea"]
    assert not (runs / "datastores" / "blobs").exists()  # read where the step reads
    reads = azurite.requests("GET", f"/{name}/in/")
    # a command step's inputs come through the etag cache: a blob two inputs name, once
    assert sorted(r.split("?")[0].split(f"/{name}/")[1] for r in reads) == [
        "in/a.txt", "in/b.txt", "in/sub/c.txt"]
