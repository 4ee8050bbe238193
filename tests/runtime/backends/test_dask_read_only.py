"""Read-only inputs on a Dask cluster: the step's code runs inside the Dask worker process,
a multithreaded process that cannot enter a mount namespace of its own, so its ``ro_mount``
(and ``download``) inputs are not protected there. The job says so on the console, naming
the inputs, never silently (a real ``dask scheduler`` and ``dask worker``)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

with contextlib.suppress(ImportError):  # see tests/runtime/backends/test_dask_cluster.py
    import hypothesis  # noqa: F401

from mlpipe.runtime.read_only import support
from tests.runtime.backends.support import REPO, dask_processes, finish, pipeline_yaml

pytest.importorskip("distributed")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(support() is not None, reason="this machine cannot make read-only "
                       "views at all (the runner says so for every backend)"),
]

SCRIPT = """\
from pathlib import Path

def run(mini_batch):
    for path in mini_batch:
        with open(path, "a") as changed:  # a step that changes its input
            changed.write("changed\\n")
    return [Path(p).name for p in mini_batch]
"""


def test_a_dask_step_says_its_ro_mount_inputs_are_not_read_only(tmp_path: Path) -> None:
    project = tmp_path / "user"
    (project / "src").mkdir(parents=True)
    (project / "src" / "score.py").write_text(SCRIPT, encoding="utf-8")
    (project / "data").mkdir()
    for index in range(2):
        (project / "data" / f"f{index}.txt").write_text("x\n", encoding="utf-8")
    (project / "pipeline.yml").write_text(pipeline_yaml("score"), encoding="utf-8")
    with dask_processes(tmp_path / "cluster") as cluster:
        cluster.add_workers(1, nanny=False)
        env = {**os.environ, "PYTHONPATH": str(REPO), "MLPIPE_DASK_SCHEDULER": cluster.address}
        out = finish(subprocess.Popen(
            [sys.executable, "-m", "mlpipe", "job", "create", "-f", "pipeline.yml", "-n", "ro",
             "--runs-dir", str(tmp_path / "runs"), "--backend", "dask", "--no-progress"],
            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    assert "job ro: completed" in out, out
    lines = [line for line in out.splitlines() if "NOT read-only on Dask workers" in line]
    assert len(lines) == 1, out
    assert lines[0].startswith("step score: ") and str(project / "data") in lines[0], lines[0]
    assert "--backend local" in lines[0]
    # what the note warns of: the user's files were changed through the Dask worker
    assert (project / "data" / "f0.txt").read_text(encoding="utf-8") == "x\nchanged\n"
