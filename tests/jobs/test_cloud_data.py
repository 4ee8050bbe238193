"""Cloud data through a whole job, against Azurite (a real Blob API server): a datastore's
blobs read in ro_mount and download mode give the rows the same files give on disk, the
output is uploaded, and a job that cannot use its cloud data is refused before any step, in
one line per URI, with no secret anywhere."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.azurite_support import KEY, Azurite
from tests.conftest import REPO, run_cli
from tests.jobs.cloud_support import (
    DOCS,
    point_at,
    register,
    secrets_in,
    upload,
    write_job,
    write_local,
)


def _create(pipeline: Path, runs: Path, name: str, *extra: str,
            env: dict[str, str] | None = None):
    return run_cli("job", "create", "--file", str(pipeline), "--name", name, "--no-progress",
                   *extra, env={"MLPIPE_RUNS_DIR": str(runs), **(env or {})})


@pytest.mark.parametrize("mode", ["ro_mount", "download"])
def test_a_datastore_folder_gives_the_rows_of_the_same_files_on_disk(
        tmp_path: Path, azurite: Azurite, mode: str) -> None:
    container = azurite.container("rows")
    upload(container, DOCS)
    runs = tmp_path / "runs"
    cloud = tmp_path / "cloud"
    pipeline = write_job(cloud, input_uri="azureml://datastores/blobs/paths/in/",
                         output_uri="azureml://datastores/blobs/paths/out/", mode=mode)
    point_at(cloud, azurite, "blobs")
    register(cloud, runs, "blobs", container.container_name)
    proc = _create(pipeline, runs, "cloud")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "uploaded 1 file to azureml://datastores/blobs/paths/out/" in proc.stdout

    local = tmp_path / "local"
    write_local(local / "in", DOCS)
    local_pipeline = write_job(local, input_uri="./in", output_uri="./out", mode=mode)
    proc = _create(local_pipeline, runs, "local", "--allow-external-outputs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    expected = (local / "out" / "parallel_run_step.txt").read_text()
    assert expected.count("\n") == len(DOCS) - 1  # the hidden file is no item
    uploaded = container.download_blob("out/parallel_run_step.txt").readall().decode()
    assert uploaded == expected  # the same rows in the same (input) order
    assert secrets_in(runs, KEY) == []
    if mode == "ro_mount":  # read a mini-batch at a time, no copy left behind
        assert not (runs / "cloud" / "score" / ".mlpipe" / "cloud" / "data").exists()
        assert not (runs / "assets" / "blob_cache").exists()
    else:  # downloaded once into the etag cache
        cached = [p for p in (runs / "assets" / "blob_cache").rglob("*") if p.is_file()]
        assert len(cached) == len(DOCS)  # the hidden one too: a copy of the folder


@pytest.mark.slow
def test_download_mode_reads_each_blob_once_across_reruns(tmp_path: Path,
                                                          azurite: Azurite) -> None:
    container = azurite.container("once")
    upload(container, {"x.txt": "x\n", "y.txt": "y\n"})
    runs = tmp_path / "runs"
    point_at(tmp_path, azurite, "once")
    register(tmp_path, runs, "once", container.container_name)
    for name in ("first", "second"):  # each job its own output (mlpipe writes over no other's)
        pipeline = write_job(tmp_path, input_uri="azureml://datastores/once/paths/in",
                             output_uri=f"./out-{name}", mode="download")
        proc = _create(pipeline, runs, name, "--allow-external-outputs")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "every blob was in the cache" in proc.stdout
    for blob in ("x.txt", "y.txt"):
        assert len(azurite.requests("GET", f"/{container.container_name}/in/{blob}")) == 1


def _refusal(tmp_path: Path, azurite: Azurite, input_uri: str, *, key: str | None = None,
             url: str | None = None) -> tuple[str, int]:
    container = azurite.container("refuse")
    upload(container, {"x.txt": "x\n"})
    runs = tmp_path / "runs"
    pipeline = write_job(tmp_path, input_uri=input_uri,
                         output_uri="azureml://datastores/blobs/paths/out/")
    (tmp_path / "mlpipe.toml").write_text(
        f'[datastores.blobs]\naccount_url = "{url or azurite.url()}"\n')
    register(tmp_path, runs, "blobs", container.container_name,
             credentials=f"account_key: {key}" if key else "key")
    proc = _create(pipeline, runs, "refused")
    assert not (runs / "refused").exists()  # before any step, no run folder
    return proc.stdout + proc.stderr, proc.returncode


@pytest.mark.parametrize(("case", "expected"), [
    ("unreachable", "cannot reach the storage account at http://127.0.0.1:9/devstoreaccount1"),
    ("wrong key", "account 'devstoreaccount1' refused datastore blobs's registered account key"),
    ("missing path", "no blob below 'nothing/here' in container"),
])
def test_unusable_cloud_data_is_refused_in_one_line_naming_uri_and_fix(
        tmp_path: Path, azurite: Azurite, case: str, expected: str) -> None:
    wrong = "QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5"
    uri = "azureml://datastores/blobs/paths/" + ("nothing/here/" if case == "missing path"
                                                 else "in/")
    text, code = _refusal(tmp_path, azurite, uri, key=wrong if case == "wrong key" else None,
                          url="http://127.0.0.1:9/devstoreaccount1" if case == "unreachable"
                          else None)
    assert code == 1
    lines = [line for line in text.splitlines() if "cloud-data" in line or uri in line]
    assert len(lines) == 1, text
    assert expected in lines[0] and "pipeline.yml:" in lines[0]
    assert "Traceback" not in text and KEY not in text and wrong not in text


def test_a_missing_container_is_named(tmp_path: Path, azurite: Azurite) -> None:
    runs = tmp_path / "runs"
    pipeline = write_job(tmp_path, input_uri="azureml://datastores/gone/paths/in/",
                         output_uri="./out")
    point_at(tmp_path, azurite, "gone")
    register(tmp_path, runs, "gone", "no-such-container")
    proc = _create(pipeline, runs, "gone", "--allow-external-outputs")
    assert proc.returncode == 1
    assert ("azureml://datastores/gone/paths/in/: container 'no-such-container' does not exist "
            "in account 'devstoreaccount1' (create the container") in proc.stderr


def test_an_unregistered_datastore_is_refused_before_anything_runs(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    pipeline = write_job(tmp_path, input_uri="azureml://datastores/nobody/paths/in/",
                         output_uri="./out")
    proc = _create(pipeline, runs, "nobody", "--allow-external-outputs")
    assert proc.returncode == 1
    (line,) = [x for x in proc.stderr.splitlines()
               if "azureml://datastores/nobody" in x and "pipeline.yml:" in x]
    assert "datastore 'nobody' is not registered: register it (mlpipe datastore create" in line
    assert not (runs / "nobody").exists()


@pytest.mark.slow
def test_account_uris_read_through_the_datastore_of_their_container(
        tmp_path: Path, azurite: Azurite) -> None:
    container = azurite.container("acct")
    upload(container, {"x.txt": "x\n"})
    runs = tmp_path / "runs"
    name = container.container_name
    pipeline = write_job(tmp_path, input_uri=f"wasbs://{name}@devstoreaccount1.blob.core."
                                             "windows.net/in/", output_uri="./out")
    point_at(tmp_path, azurite, "acct")
    register(tmp_path, runs, "acct", name)
    proc = _create(pipeline, runs, "acct", "--allow-external-outputs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "out" / "parallel_run_step.txt").read_text() == "x.txt: x\n"
    record = json.loads((runs / "acct" / "job.json").read_text())
    assert KEY not in json.dumps(record)


SLOW_SCORE = """\
import os
import time


def init():
    pass


def run(mini_batch):
    time.sleep(0.4)
    return [os.path.basename(path) for path in mini_batch]
"""


NAMES = [f"doc_{i:02d}.txt" for i in range(12)]


def _killable(tmp_path: Path, azurite: Azurite, name: str, mode: str
              ) -> tuple[Any, Path, list[str]]:
    """A datastore of 12 blobs, a job reading them one a mini-batch (0.4 s each, one worker)
    and uploading its rows: ``(container, runs folder, its job create command)``."""
    container = azurite.container(name)
    upload(container, {blob: f"{blob}\n" for blob in NAMES})
    runs = tmp_path / "runs"
    pipeline = write_job(tmp_path, input_uri=f"azureml://datastores/{name}/paths/in/",
                         output_uri=f"azureml://datastores/{name}/paths/out/", size=1,
                         script=SLOW_SCORE, mode=mode)
    point_at(tmp_path, azurite, name)
    register(tmp_path, runs, name, container.container_name)
    return container, runs, ["job", "create", "--file", str(pipeline), "--name", "killed",
                             "--no-progress", "--set",
                             "jobs.score.max_concurrency_per_instance=1"]


def _kill_9_when(command: list[str], runs: Path, ready: Callable[[], bool]) -> None:
    """Start ``mlpipe <command>`` and kill it (-9, the runner and its workers at once) as
    soon as ``ready()`` holds (or it ended)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "MLPIPE_RUNS_DIR": str(runs)}
    first = subprocess.Popen([sys.executable, "-m", "mlpipe", *command], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and first.poll() is None and not ready():
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()


@pytest.mark.slow
def test_a_resume_after_kill_9_reads_and_writes_no_finished_blob_again(
        tmp_path: Path, azurite: Azurite) -> None:
    container, runs, command = _killable(tmp_path, azurite, "kill", "ro_mount")
    fragment = f"/{container.container_name}/in/"
    _kill_9_when(command, runs, lambda: len(azurite.requests("GET", fragment)) >= 5)
    before = len(azurite.requests("GET", fragment))
    assert 5 <= before < len(NAMES)
    proc = run_cli(*command, env={"MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reads = azurite.requests("GET", fragment)
    per_blob = {name: sum(1 for r in reads if r.endswith(f"/in/{name}")) for name in NAMES}
    assert all(1 <= n <= 2 for n in per_blob.values()), per_blob
    # at most the one mini-batch running when it was killed (concurrency 1) is read again
    assert sum(1 for n in per_blob.values() if n == 2) <= 1, per_blob
    writes = azurite.requests("PUT", f"/{container.container_name}/out/")
    assert len(writes) == 1  # the append_row file, once
    rows = container.download_blob("out/parallel_run_step.txt").readall().decode().split()
    assert rows == NAMES  # every row once, in input order


@pytest.mark.slow
def test_a_download_input_resumed_after_kill_9_reads_no_blob_again(
        tmp_path: Path, azurite: Azurite) -> None:
    """download mode: every blob is copied before the first mini-batch, through the etag
    cache; killed (-9) half-way through the mini-batches, the resume reads no blob again
    and runs only the mini-batches not finished; the output is written once."""
    from mlpipe.runtime.journal import finished_count

    container, runs, command = _killable(tmp_path, azurite, "killdl", "download")
    state = runs / "killed" / "score" / ".mlpipe"
    _kill_9_when(command, runs, lambda: state.is_dir() and finished_count(state) >= 4)
    assert 4 <= finished_count(state) < len(NAMES)
    fragment = f"/{container.container_name}/in/"
    assert sorted(r.rsplit("/", 1)[1] for r in azurite.requests("GET", fragment)) == NAMES
    proc = run_cli(*command, env={"MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "every blob was in the cache" in proc.stdout
    assert sorted(r.rsplit("/", 1)[1] for r in azurite.requests("GET", fragment)) == NAMES
    assert len(azurite.requests("PUT", f"/{container.container_name}/out/")) == 1
    rows = container.download_blob("out/parallel_run_step.txt").readall().decode().split()
    assert rows == NAMES  # every row once, in input order

def _sas(container_name: str, **permissions: bool) -> str:
    from datetime import datetime, timedelta, timezone

    from azure.storage.blob import ContainerSasPermissions, generate_container_sas

    return generate_container_sas("devstoreaccount1", container_name, account_key=KEY,
                                  permission=ContainerSasPermissions(**permissions),
                                  expiry=datetime.now(timezone.utc) + timedelta(hours=1))


@pytest.mark.slow
def test_a_failed_upload_fails_the_step_naming_the_blob_and_a_resume_uploads_only(
        tmp_path: Path, azurite: Azurite) -> None:
    container = azurite.container("upload")
    upload(container, {"x.txt": "x\n", "y.txt": "y\n"})
    name = container.container_name
    runs = tmp_path / "runs"
    pipeline = write_job(tmp_path, input_uri="azureml://datastores/up/paths/in/",
                         output_uri="azureml://datastores/up/paths/out/")
    point_at(tmp_path, azurite, "up", extra='sas_token_env = "UP_SAS"\n')
    register(tmp_path, runs, "up", name, credentials=None)
    read_only = _sas(name, read=True, list=True)
    proc = _create(pipeline, runs, "up", env={"UP_SAS": read_only})
    assert proc.returncode == 1
    text = proc.stdout + proc.stderr
    assert f"cannot upload blob '{name}/out/parallel_run_step.txt'" in text
    assert "resume the job to upload again" in text
    assert read_only not in text and "sig=" not in text
    reads = len(azurite.requests("GET", f"/{name}/in/"))
    proc = _create(pipeline, runs, "up", env={"UP_SAS": _sas(name, read=True, list=True,
                                                              write=True, create=True)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(azurite.requests("GET", f"/{name}/in/")) == reads  # no mini-batch ran again
    assert container.download_blob("out/parallel_run_step.txt").readall() == \
        b"x.txt: x\ny.txt: y\n"
    assert secrets_in(runs, "sig=") == []


def test_an_mltable_folder_on_a_datastore_is_read_as_a_table(tmp_path: Path,
                                                            azurite: Azurite) -> None:
    container = azurite.container("table")
    upload(container, {"MLTable": "paths:\n  - file: ./iris.csv\ntransformations:\n"
                                  "  - read_delimited:\n      delimiter: ','\n"
                                  "      header: all_files_same_headers\n",
                       "iris.csv": "a,b\n1,2\n3,4\n5,6\n"}, prefix="iris-mltable/")
    runs = tmp_path / "runs"
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "score.py").write_text(
        "def run(table):\n    return [f'{a}-{b}' for a, b in zip(table['a'], table['b'])]\n")
    (tmp_path / "pipeline.yml").write_text(
        "type: pipeline\njobs:\n  score:\n    type: parallel\n    inputs:\n"
        "      data:\n        type: mltable\n        mode: eval_mount\n"
        "        path: azureml://subscriptions/s/resourcegroups/rg/workspaces/ws/datastores/"
        "tables/paths/iris-mltable/\n"
        "    outputs:\n      rows: {type: uri_folder}\n    input_data: ${{inputs.data}}\n"
        "    mini_batch_size: '1kb'\n"
        "    task:\n      type: run_function\n      code: ./src\n      entry_script: score.py\n"
        "      append_row_to: ${{outputs.rows}}\n")
    point_at(tmp_path, azurite, "tables")
    register(tmp_path, runs, "tables", container.container_name)
    proc = _create(tmp_path / "pipeline.yml", runs, "table")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = runs / "table" / "score" / "outputs" / "rows" / "parallel_run_step.txt"
    assert rows.read_text().split() == ["1-2", "3-4", "5-6"]


WRITER = """\
def run(mini_batch):
    for path in mini_batch:
        try:
            with open(path, "a") as f:  # root may write a read-only file: the copy is local
                f.write("changed")
        except PermissionError:
            pass
    return mini_batch
"""


def test_a_ro_mount_input_is_never_written_back(tmp_path: Path, azurite: Azurite) -> None:
    container = azurite.container("ro")
    upload(container, {"x.txt": "x\n"})
    runs = tmp_path / "runs"
    pipeline = write_job(tmp_path, input_uri="azureml://datastores/ro/paths/in/",
                         output_uri="./out", script=WRITER)
    point_at(tmp_path, azurite, "ro")
    register(tmp_path, runs, "ro", container.container_name)
    writes = len(azurite.requests("PUT", f"/{container.container_name}/"))  # the upload above
    proc = _create(pipeline, runs, "ro", "--allow-external-outputs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert container.download_blob("in/x.txt").readall() == b"x\n"
    assert len(azurite.requests("PUT", f"/{container.container_name}/")) == writes
