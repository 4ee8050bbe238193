"""A datastore input on Dask workers of other machines: each worker reads the blobs of its
mini-batches from the account (Azurite, the Azure Storage emulator) into a folder of its
own, never at the driver's path of the input (``<run folder>/<step>/.mlpipe/cloud/...``),
which another machine may be unable to create: here the runs folder and the user's folder
are empty *read-only* tmpfs mounts in each worker's mount namespace."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

with contextlib.suppress(ImportError):  # see tests/runtime/backends/test_dask_cluster.py
    import hypothesis  # noqa: F401

from tests.azurite_support import KEY, Azurite
from tests.jobs.cloud_support import DOCS, point_at, register, secrets_in, upload, write_job
from tests.runtime.backends.support import REPO, dask_processes, finish

pytest.importorskip("distributed")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                       reason="another machine is a mount namespace: needs root and unshare"),
]


@pytest.mark.parametrize("local_input", [False, True],
                         ids=["in-the-dask-worker", "in-the-steps-own-process"])
def test_hidden_workers_read_a_streamed_datastore_input_into_their_own_folder(
        tmp_path: Path, azurite: Azurite, local_input: bool) -> None:
    container = azurite.container("dask")
    upload(container, DOCS)
    runs, project = tmp_path / "runs", tmp_path / "user"
    pipeline = write_job(project, input_uri="azureml://datastores/blobs/paths/in/",
                         output_uri="azureml://datastores/blobs/paths/out/")
    if local_input:  # a read-only local input too: the step's code runs in a process of its own
        (tmp_path / "model").mkdir()
        (tmp_path / "model" / "weights.txt").write_text("w\n", encoding="utf-8")
        text = pipeline.read_text(encoding="utf-8")
        pipeline.write_text(text.replace(
            "      data: ${{parent.inputs.docs}}\n",
            "      data: ${{parent.inputs.docs}}\n"
            f"      model: {{type: uri_folder, path: {tmp_path / 'model'}}}\n"), encoding="utf-8")
        assert str(tmp_path / "model") in pipeline.read_text(encoding="utf-8")
    point_at(project, azurite, "blobs")
    register(project, runs, "blobs", container.container_name)
    with dask_processes(tmp_path / "cluster") as cluster:
        cluster.add_workers(2, nanny=False, hidden=[runs, project], read_only=True)
        env = {**os.environ, "PYTHONPATH": str(REPO), "MLPIPE_DASK_SCHEDULER": cluster.address,
               "MLPIPE_RUNS_DIR": str(runs)}
        out = finish(subprocess.Popen(
            [sys.executable, "-m", "mlpipe", "job", "create", "-f", str(pipeline), "-n", "far",
             "--backend", "dask", "--no-progress"],
            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        left = [p for p in (tmp_path / "cluster").rglob("*")
                if p.is_file() and p.name in {Path(name).name for name in DOCS}]
    assert "job far: completed" in out, out
    rows = container.download_blob("out/parallel_run_step.txt").readall().decode()
    expected = sorted(f"{Path(name).name}: {text.strip()}" for name, text in DOCS.items()
                      if not name.startswith("."))
    assert sorted(rows.splitlines()) == expected  # each blob's row once
    assert left == []  # each worker's copies of the blobs are gone with its scratch folder
    assert secrets_in(runs, KEY) == []


def test_a_downloaded_datastore_input_leaves_out_a_worker_that_cannot_see_it(
        tmp_path: Path, azurite: Azurite) -> None:
    """A datastore input that is downloaded before the step (here a second, ``download``
    input) is a copy in the driver's run folder: a worker on another machine does not see
    it, so the preflight leaves that worker out, naming the input, and the step runs on the
    worker that sees it (the hidden worker used to run it, the input's path empty there)."""
    container = azurite.container("dask-dl")
    upload(container, DOCS)
    upload(container, {"weights.txt": "w\n"}, prefix="model/")
    runs, project = tmp_path / "runs", tmp_path / "user"
    pipeline = write_job(project, input_uri="azureml://datastores/blobs/paths/in/",
                         output_uri="azureml://datastores/blobs/paths/out/")
    text = pipeline.read_text(encoding="utf-8")
    pipeline.write_text(text.replace(
        "      data: ${{parent.inputs.docs}}\n",
        "      data: ${{parent.inputs.docs}}\n      model: {type: uri_folder, mode: download, "
        "path: azureml://datastores/blobs/paths/model/}\n"), encoding="utf-8")
    point_at(project, azurite, "blobs")
    register(project, runs, "blobs", container.container_name)
    with dask_processes(tmp_path / "cluster") as cluster:
        cluster.add_workers(1, nanny=False, hidden=[runs, project], read_only=True)
        cluster.add_workers(1, nanny=False)
        env = {**os.environ, "PYTHONPATH": str(REPO), "MLPIPE_DASK_SCHEDULER": cluster.address,
               "MLPIPE_RUNS_DIR": str(runs)}
        out = finish(subprocess.Popen(
            [sys.executable, "-m", "mlpipe", "job", "create", "-f", str(pipeline), "-n", "dl",
             "--backend", "dask", "--no-progress"],
            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    assert "job dl: completed" in out, out
    left_out = [line for line in out.splitlines() if "is not used" in line]
    assert len(left_out) == 1 and "input 'model'" in left_out[0], out
    rows = container.download_blob("out/parallel_run_step.txt").readall().decode()
    assert len(rows.splitlines()) == len([n for n in DOCS if not n.startswith(".")])
