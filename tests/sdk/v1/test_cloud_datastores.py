"""v1 datastores registered as Azure ML registers them, read from a real Blob API server
(Azurite): the many-models accelerator's training notebook runs with its
``register_azure_blob_container(..., create_if_not_exists=True)`` datastore, no local copy
made by hand."""

from __future__ import annotations

import shutil
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
    assert len([r for r in reads if r.endswith(".png")]) == MNIST_IMAGES  # each image once


@pytest.mark.slow
def test_v1_iris_notebook_reads_its_registered_blob_containers(
        tmp_path: Path, azurite: Azurite) -> None:
    from tests.sdk.notebook_support import IRIS_ROWS, make_iris_v1

    notebook = make_iris_v1(tmp_path / "iris")
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
