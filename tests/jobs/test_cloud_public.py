"""Public data, as the published pipelines read it: an account URI
(``https://<account>.blob.core.windows.net/<container>/<path>``, ``wasbs://``) that no
datastore names is read without a credential when its container is public, and refused
before the job starts, naming the URI and what to register, when it is not. The accounts
azuremlexamples and pipelinedata are Azurite's (``mlpipe.toml`` maps each account to it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.azurite_support import KEY, Azurite
from tests.conftest import run_cli
from tests.jobs.cloud_support import upload, write_job

FILES = {"b.txt": "bee\n", "a.txt": "ay\n", "sub/c.txt": "sea\n"}


def _map_account(folder: Path, azurite: Azurite, account: str) -> None:
    """``mlpipe.toml``: the account is reached at the emulator (no container, no secret)."""
    (folder / "mlpipe.toml").write_text(
        f'[datastores.{account}_endpoint]\naccount_name = "{account}"\n'
        f'account_url = "{azurite.url(account)}"\n')


def _create(pipeline: Path, runs: Path, name: str):
    return run_cli("job", "create", "--file", str(pipeline), "--name", name, "--no-progress",
                   "--allow-external-outputs", env={"MLPIPE_RUNS_DIR": str(runs)})


@pytest.mark.parametrize(("form", "mode"), [("https", "ro_mount"), ("wasbs", "download")])
def test_a_public_container_is_read_without_any_datastore(
        tmp_path: Path, azurite: Azurite, form: str, mode: str) -> None:
    container = azurite.container("pub", account="azuremlexamples", public=True)
    upload(container, FILES)
    name = container.container_name
    uri = (f"https://azuremlexamples.blob.core.windows.net/{name}/in/" if form == "https"
           else f"wasbs://{name}@azuremlexamples.blob.core.windows.net/in/")
    pipeline = write_job(tmp_path, input_uri=uri, output_uri="./out", mode=mode)
    _map_account(tmp_path, azurite, "azuremlexamples")
    runs = tmp_path / "runs"
    proc = _create(pipeline, runs, "public")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = (tmp_path / "out" / "parallel_run_step.txt").read_text().splitlines()
    assert rows == ["a.txt: ay", "b.txt: bee", "c.txt: sea"]  # the local listing's order
    assert not (runs / "assets" / "datastores.json").exists()  # nothing was registered
    assert KEY not in proc.stdout + proc.stderr


def test_a_public_blob_is_a_uri_file_input(tmp_path: Path, azurite: Azurite) -> None:
    container = azurite.container("file", account="pipelinedata", public=True)
    container.upload_blob("sampledata/iris.csv", b"5.1,3.5\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(
        "import shutil, sys\nshutil.copy(sys.argv[1], sys.argv[2] + '/copy.csv')\n")
    url = f"https://pipelinedata.blob.core.windows.net/{container.container_name}" \
          "/sampledata/iris.csv"
    (tmp_path / "pipeline.yml").write_text(
        "type: pipeline\njobs:\n  train:\n    type: command\n    code: ./src\n"
        "    command: python train.py ${{inputs.data}} ${{outputs.out}}\n"
        "    environment: azureml:env:1\n"
        f"    inputs:\n      data: {{type: uri_file, path: {url}}}\n"
        "    outputs:\n      out: {type: uri_folder}\n")
    _map_account(tmp_path, azurite, "pipelinedata")
    runs = tmp_path / "runs"
    proc = _create(tmp_path / "pipeline.yml", runs, "file")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (runs / "file" / "train" / "outputs" / "out" / "copy.csv").read_bytes() == \
        b"5.1,3.5\n"


@pytest.mark.parametrize("case", ["private", "missing blob"])
def test_a_container_that_is_not_public_is_refused_up_front_with_what_to_register(
        tmp_path: Path, azurite: Azurite, case: str) -> None:
    container = azurite.container("priv", account="azuremlexamples",
                                  public=case != "private")
    upload(container, FILES)
    name = container.container_name
    path = "in/" if case == "private" else "in/nothing.txt"
    uri = f"https://azuremlexamples.blob.core.windows.net/{name}/{path}"
    pipeline = write_job(tmp_path, input_uri=uri, output_uri="./out")
    if case == "missing blob":
        text = pipeline.read_text().replace("type: uri_folder\n    path: https",
                                            "type: uri_file\n    path: https")
        pipeline.write_text(text)
    _map_account(tmp_path, azurite, "azuremlexamples")
    runs = tmp_path / "runs"
    before = len(azurite.requests("[A-Z]+", f"/azuremlexamples/{name}"))
    proc = _create(pipeline, runs, "refused")
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1, text
    assert not (runs / "refused").exists()  # before any step
    (line,) = [x for x in text.splitlines() if uri in x and "pipeline.yml:" in x]
    if case == "private":
        assert (f"container '{name}' of account 'azuremlexamples' is not public (HTTP 403 "
                "AuthorizationFailure") in line
        assert (f"register a datastore of account 'azuremlexamples', container '{name}' with "
                "its credential (mlpipe datastore create") in line
    else:
        assert f"no blob 'in/nothing.txt' in the public container '{name}'" in line
    assert "Traceback" not in text
    # decided by one anonymous request (a list, or a HEAD of the file)
    assert len(azurite.requests("[A-Z]+", f"/azuremlexamples/{name}")) == before + 1


@pytest.mark.parametrize(("url", "says"), [
    ("https://raw.githubusercontent.com/Azure/azureml-examples/main/iris.csv",
     "a web server's file, not a storage account's"),
    ("https://acct.blob.core.windows.net/data/iris.csv?sv=2022-11-02&sig=abc",
     "a storage URL with a query (a SAS token is a datastore's credential"),
])
def test_a_url_mlpipe_does_not_read_is_refused_saying_why(tmp_path: Path, url: str,
                                                          says: str) -> None:
    pipeline = write_job(tmp_path, input_uri=url, output_uri="./out")
    pipeline.write_text(pipeline.read_text().replace("type: uri_folder\n    path: https",
                                                     "type: uri_file\n    path: https"))
    proc = _create(pipeline, tmp_path / "runs", "web")
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1, text
    (line,) = [x for x in text.splitlines() if url in x and "pipeline.yml:" in x]
    assert says in line
    assert f'"{url}" = "./local/path"' in text  # the [assets] line to write
    assert "Traceback" not in text


def test_an_output_on_a_container_no_datastore_holds_is_local_only_with_a_warning(
        tmp_path: Path) -> None:
    """Nothing is written anonymously: the output stays in the run folder, and the compiler
    says so (was: silently), naming what to register to upload it."""
    url = "https://acct.blob.core.windows.net/data/out/"
    write_job(tmp_path, input_uri="./in", output_uri=url)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "x.txt").write_text("x\n")
    proc = run_cli("job", "validate", "--file", str(tmp_path / "pipeline.yml"),
                   env={"MLPIPE_RUNS_DIR": str(tmp_path / "runs")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = proc.stdout + proc.stderr
    (line,) = [x for x in text.splitlines() if "outputs.scored.path" in x]
    assert "warning:" in line and f"output 'scored' names {url}, which no datastore holds" in line
    assert "register a datastore of its account and container with a credential" in line


def test_an_account_url_mapped_in_assets_is_read_from_its_local_copy(tmp_path: Path) -> None:
    """``[assets]`` still wins, a URL prefix too (the account's containers as sub-folders,
    as scripts' downloads of it are mapped): no request to the account at all."""
    from tests.jobs.cloud_support import write_local

    write_local(tmp_path / "blob" / "sampledata" / "in", FILES)
    pipeline = write_job(tmp_path, input_uri="https://pipelinedata.blob.core.windows.net/"
                                             "sampledata/in/", output_uri="./out")
    (tmp_path / "mlpipe.toml").write_text(
        '[assets]\n"https://pipelinedata.blob.core.windows.net" = "./blob"\n')
    proc = _create(pipeline, tmp_path / "runs", "mapped")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = (tmp_path / "out" / "parallel_run_step.txt").read_text().splitlines()
    assert rows == ["a.txt: ay", "b.txt: bee", "c.txt: sea"]
