"""``ml_client.datastores`` and the datastore entities as azure-ai-ml has them; a data asset
of cloud data runs through its datastore (Azurite)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlpipe import MLClient
from mlpipe.azure_ai_ml import load_datastore
from mlpipe.entities import (
    AccountKeyConfiguration,
    AzureBlobDatastore,
    AzureDataLakeGen2Datastore,
    Data,
    SasTokenConfiguration,
)
from mlpipe.sdk.datastores import DatastoreNotFoundError
from tests.azurite_support import KEY, Azurite
from tests.conftest import run_cli
from tests.jobs.cloud_support import upload

SECRET = "c2VjcmV0LWtleS1mb3ItdGhlLXNkay10ZXN0cw=="


def test_create_or_update_keeps_the_secret_apart_and_get_gives_none_back(
        tmp_path: Path) -> None:
    client = MLClient(runs_dir=tmp_path)
    made = client.create_or_update(AzureBlobDatastore(
        name="blobs", account_name="acct", container_name="data",
        credentials=AccountKeyConfiguration(account_key=SECRET)))
    assert isinstance(made, AzureBlobDatastore)
    got = client.datastores.get("blobs")
    assert (got.account_name, got.container_name, got.type) == ("acct", "data", "azure_blob")
    assert isinstance(got.credentials, AccountKeyConfiguration)
    assert got.credentials.account_key is None
    assert SECRET not in repr(made) + str(made) + repr(got)
    client.datastores.create_or_update(AzureDataLakeGen2Datastore(
        name="lake", account_name="acct", filesystem="fs",
        credentials=SasTokenConfiguration(sas_token="sv=2024&sig=abc")))
    assert [d.name for d in client.datastores.list()] == ["blobs", "lake"]
    assert client.datastores.get("lake").filesystem == "fs"
    with pytest.raises(DatastoreNotFoundError, match="did you mean 'blobs'"):
        client.datastores.get("blob")


def test_load_datastore_reads_azures_yaml(tmp_path: Path) -> None:
    path = tmp_path / "lake.yml"
    path.write_text("$schema: https://azuremlschemas.azureedge.net/latest/"
                    "azureDataLakeGen2.schema.json\nname: lake\ntype: azure_data_lake_gen2\n"
                    "account_name: acct\nfilesystem: fs\n")
    datastore = load_datastore(path)
    assert isinstance(datastore, AzureDataLakeGen2Datastore)
    assert (datastore.name, datastore.filesystem, datastore.credentials) == ("lake", "fs", None)


def test_a_data_asset_of_cloud_data_runs_through_its_datastore(
        tmp_path: Path, azurite: Azurite) -> None:
    container = azurite.container("asset")
    upload(container, {"x.txt": "x\n"})
    runs = tmp_path / "runs"
    client = MLClient(runs_dir=runs)
    client.datastores.create_or_update(AzureBlobDatastore(
        name="assets", account_name="devstoreaccount1", container_name=container.container_name,
        credentials=AccountKeyConfiguration(account_key=KEY)))
    client.data.create_or_update(Data(name="docs", version="1", type="uri_folder",
                                      path="azureml://datastores/assets/paths/in/"))
    (tmp_path / "mlpipe.toml").write_text(
        f'[datastores.assets]\naccount_url = "{azurite.url()}"\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "score.py").write_text(
        "def run(mini_batch):\n    return [open(p).read().strip() for p in mini_batch]\n")
    (tmp_path / "pipeline.yml").write_text(
        "type: pipeline\njobs:\n  score:\n    type: parallel\n    inputs:\n"
        "      data: {type: uri_folder, path: azureml:docs:1}\n"
        "    outputs:\n      rows: {type: uri_folder}\n    input_data: ${{inputs.data}}\n"
        "    task:\n      type: run_function\n      code: ./src\n      entry_script: score.py\n"
        "      append_row_to: ${{outputs.rows}}\n")
    proc = run_cli("job", "create", "--file", str(tmp_path / "pipeline.yml"), "--name", "a",
                   env={"MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = runs / "a" / "score" / "outputs" / "rows" / "parallel_run_step.txt"
    assert rows.read_text() == "x\n"


@pytest.mark.slow
@pytest.mark.parametrize("registered", [True, False])
def test_the_lightgbm_sweep_notebook_reads_its_https_and_wasbs_inputs_from_the_account(
        tmp_path: Path, azurite: Azurite, registered: bool) -> None:
    """Its command and sweep jobs name iris.csv as https://azuremlexamples.blob.core.windows.net
    /datasets/iris.csv and wasbs://datasets@azuremlexamples...: both are read through the
    registered datastore of that container, or with none registered anonymously, as Azure
    reads that public container (mlpipe.toml only says where the account is); downloaded
    once."""
    import json

    from tests.sdk.notebook_support import iris_csv, make_lightgbm_sweep

    notebook = make_lightgbm_sweep(tmp_path / "nb")
    folder = notebook.parent
    (folder / "iris.csv").unlink()
    service = azurite.service("azuremlexamples")
    container = service.get_container_client("datasets")
    if not container.exists():
        container.create_container(public_access="container")
    container.upload_blob("iris.csv", iris_csv().encode(), overwrite=True)
    (folder / "examples.yml").write_text(
        "name: examples\ntype: azure_blob\naccount_name: azuremlexamples\n"
        "container_name: datasets\n")
    (folder / "mlpipe.toml").write_text(
        f'[datastores.examples]\naccount_url = "{azurite.url("azuremlexamples")}"\n'
        + ('' if registered else 'account_name = "azuremlexamples"\n'))
    runs = tmp_path / "runs"
    env = {"MLPIPE_RUNS_DIR": str(runs)}
    if registered:
        assert run_cli("datastore", "create", "--file", str(folder / "examples.yml"),
                       env=env).returncode == 0
    before = len(azurite.requests("GET", "/azuremlexamples/datasets/iris.csv"))
    proc = run_cli("run-script", str(notebook), cwd=folder, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = [json.loads(p.read_text()) for p in runs.glob("*/job.json")]
    assert sorted(r["status"] for r in records) == ["completed"] * 3
    assert len(azurite.requests("GET", "/azuremlexamples/datasets/iris.csv")) == before + 1
    assert registered or not (runs / "assets" / "datastores.json").exists()
