"""Read-only inputs on a Dask cluster, for real: the step's code runs in a process of its own
on the Dask worker (the worker's threaded process cannot enter a mount namespace), which
sees its ``ro_mount`` inputs read-only (the OS refuses a write: ``EROFS``, as root too) and a
``download`` input as a copy of its own; the user's bytes are untouched. On a worker that
sees the run folder and on "another machine" (a ``dask worker`` in a mount namespace of its
own where the runs and pipeline folders are empty), with real ``dask scheduler`` and
``dask worker`` processes and ``mlpipe job create`` as a user runs it."""

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

from mlpipe.runtime.read_only import support
from tests.runtime.backends.support import REPO, dask_processes, finish

pytest.importorskip("distributed")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(support() is not None, reason="this machine cannot make read-only "
                       "views at all (the runner says so for every backend)"),
]

SCRIPT = """\
import errno, os, sys
from pathlib import Path

def init():
    global extra
    extra = Path(sys.argv[sys.argv.index("--extra") + 1])

def run(mini_batch):
    rows = []
    for path in mini_batch:
        try:
            with open(path, "a") as changed:  # a step that changes its ro_mount input
                changed.write("changed\\n")
            verdict = "written"
        except OSError as error:
            verdict = errno.errorcode[error.errno]
        with open(extra / "notes.txt", "a") as note:  # its download input: a copy of its own
            note.write(Path(path).name + "\\n")
        rows.append(f"{Path(path).name} {verdict} {os.getpid() != int(os.environ['DASK_PID'])}")
    return rows
"""

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
jobs:
  score:
    type: parallel
    inputs:
      files: {{type: uri_folder, path: {data}, mode: ro_mount}}
      extra: {{type: uri_folder, path: {extra}, mode: download}}
    outputs:
      rows: {{type: uri_file}}
    input_data: ${{{{inputs.files}}}}
    mini_batch_size: "1"
    max_concurrency_per_instance: 1
    retry_settings: {{max_retries: 0, timeout: 60}}
    environment_variables: {{DASK_PID: "{dask_pid}"}}
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      program_arguments: --extra ${{{{inputs.extra}}}}
      append_row_to: ${{{{outputs.rows}}}}
"""


@pytest.mark.parametrize("hidden", [False, True], ids=["sees-the-run-folder", "another-machine"])
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="another machine is a mount namespace: needs root and unshare")
def test_a_dask_step_cannot_change_its_ro_mount_input_and_changes_its_download_copy(
        tmp_path: Path, hidden: bool) -> None:
    project, runs = tmp_path / "user", tmp_path / "runs"
    data, extra = tmp_path / "data", tmp_path / "extra"
    for folder in (project / "src", runs, data, extra):
        folder.mkdir(parents=True)
    (project / "src" / "score.py").write_text(SCRIPT, encoding="utf-8")
    for index in range(3):
        (data / f"f{index}.txt").write_text("x\n", encoding="utf-8")
    (extra / "notes.txt").write_text("the user's notes\n", encoding="utf-8")
    with dask_processes(tmp_path / "cluster") as cluster:
        cluster.add_workers(1, nanny=False, hidden=[runs, project] if hidden else [])
        (dask_pid,) = cluster.worker_addresses().values()
        (project / "pipeline.yml").write_text(PIPELINE.format(
            data=data, extra=extra, dask_pid=dask_pid), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(REPO), "MLPIPE_DASK_SCHEDULER": cluster.address}
        out = finish(subprocess.Popen(
            [sys.executable, "-m", "mlpipe", "job", "create", "-f", "pipeline.yml", "-n", "ro",
             "--runs-dir", str(runs), "--backend", "dask", "--no-progress"],
            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    assert "job ro: completed" in out, out
    assert "NOT read-only" not in out, out
    rows = (runs / "ro" / "score" / "outputs" / "rows" / "parallel_run_step.txt").read_text(
        encoding="utf-8")
    # the OS refused each write, in a process of the step's own (not the Dask worker's)
    assert sorted(rows.splitlines()) == [f"f{index}.txt EROFS True" for index in range(3)]
    assert {p.read_text(encoding="utf-8") for p in data.iterdir()} == {"x\n"}
    assert (extra / "notes.txt").read_text(encoding="utf-8") == "the user's notes\n"


CRASHER = """\
import os
from pathlib import Path

def run(mini_batch):
    for path in mini_batch:
        mark = Path(os.environ["MARKS"]) / Path(path).name
        if Path(path).name == "f1.txt" and not mark.exists():
            mark.write_text("crashed once")
            os._exit(3)  # the step's process ends, not the Dask worker
    return [Path(p).name for p in mini_batch]
"""


def test_a_step_process_that_dies_fails_its_mini_batch_and_the_next_one_runs(
        tmp_path: Path) -> None:
    project, runs, data, marks, extra = (
        tmp_path / name for name in ("user", "runs", "data", "marks", "extra"))
    for folder in (project / "src", runs, data, marks, extra):
        folder.mkdir(parents=True)
    (project / "src" / "score.py").write_text(CRASHER, encoding="utf-8")
    for index in range(3):
        (data / f"f{index}.txt").write_text("x\n", encoding="utf-8")
    (project / "pipeline.yml").write_text(
        PIPELINE.format(data=data, extra=extra, dask_pid=0)
        .replace("max_retries: 0", "max_retries: 1")
        .replace("DASK_PID:", f"MARKS: \"{marks}\", DASK_PID:")
        .replace("      program_arguments: --extra ${{inputs.extra}}\n", ""), encoding="utf-8")
    with dask_processes(tmp_path / "cluster") as cluster:
        cluster.add_workers(1, nanny=False)
        (dask_pid,) = cluster.worker_addresses().values()
        env = {**os.environ, "PYTHONPATH": str(REPO), "MLPIPE_DASK_SCHEDULER": cluster.address}
        out = finish(subprocess.Popen(
            [sys.executable, "-m", "mlpipe", "job", "create", "-f", "pipeline.yml", "-n", "dies",
             "--runs-dir", str(runs), "--backend", "dask", "--no-progress"],
            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        assert list(cluster.worker_addresses().values()) == [dask_pid]  # the same process
    assert "job dies: completed" in out, out
    rows = (runs / "dies" / "score" / "outputs" / "rows" / "parallel_run_step.txt").read_text(
        encoding="utf-8")
    assert sorted(rows.splitlines()) == ["f0.txt", "f1.txt", "f2.txt"]  # f1 on its retry
    said = "\n".join(p.read_text(encoding="utf-8", errors="replace")
                     for p in (runs / "dies" / "score").rglob("*.txt"))
    assert "exited with code 3 while it ran this mini-batch" in said
