"""Inputs are read-only for real: a command step or a parallel worker cannot change, move or
delete its ro_mount inputs (the OS refuses, as root too: Azure's 'OSError: [Errno 30]
Read-only file system'), a download input is a copy of the step's own, and the user's bytes
are untouched."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

try:
    from mlpipe.runtime.read_only import support
except ImportError:  # before read-only views existed: the tests run, and fail
    def support() -> str | None:
        return None
from tests.conftest import REPO
from tests.jobs.support import create
from tests.jobs.user_files_support import HEADER, tree_hashes

try:
    from mlpipe.runtime.read_only import support
except ImportError:  # before read-only views existed: the tests run, and fail
    def support() -> str | None:
        return None

pytestmark = pytest.mark.skipif(support() is not None, reason=f"no read-only views: {support()}")

MOVER = """\
import os, shutil, sys
data, copy, out = sys.argv[1:4]
with open(os.path.join(copy, "mine.txt"), "w") as note:  # the download copy is the step's
    note.write("written by the step\\n")
shutil.move(os.path.join(copy, "c.txt"), out)
print("the copy is writable", flush=True)
for name in sorted(os.listdir(data)):  # as a published test program does
    shutil.move(os.path.join(data, name), out)
"""


def _user_data(root: Path) -> tuple[Path, Path]:
    data, other = root / "data", root / "other"
    for folder, names in ((data, ("a.txt", "b.txt")), (other, ("c.txt",))):
        folder.mkdir(parents=True)
        for name in names:
            (folder / name).write_text(f"the user's {name}\n")
    return data, other


def test_a_command_step_cannot_move_its_ro_mount_input_away(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    data, other = _user_data(project)
    (project / "src").mkdir()
    (project / "src" / "mover.py").write_text(MOVER)
    yaml = project / "pipeline.yml"
    yaml.write_text(HEADER + textwrap.dedent("""\
        jobs:
          mover:
            type: command
            code: ./src
            environment: azureml:env:1
            inputs:
              data: {type: uri_folder, path: ./data}
              copy: {type: uri_folder, path: ./other, mode: download}
            outputs:
              out: {type: uri_folder}
            command: python mover.py ${{inputs.data}} ${{inputs.copy}} ${{outputs.out}}
        """))
    before = tree_hashes(project)
    ran = create(yaml, tmp_path / "runs", "m1")
    assert ran.proc.returncode == 1 and ran.step("mover")["status"] == "failed"
    assert "Read-only file system" in ran.step("mover")["error"]
    assert "[Errno 30]" in Path(ran.step("mover")["std_log"]).read_text()
    assert "the copy is writable" in Path(ran.step("mover")["stdout"]).read_text()
    assert tree_hashes(project) == before  # the user's bytes, both inputs


ENTRY = """\
import os

def init():
    pass

def run(mini_batch):
    for path in mini_batch:
        with open(path, "a") as out:  # changes its input: the OS refuses
            out.write("changed\\n")
    return [os.path.basename(p) for p in mini_batch]
"""


def test_a_parallel_worker_cannot_change_its_ro_mount_input(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    data, _other = _user_data(project)
    (project / "src").mkdir()
    (project / "src" / "score.py").write_text(ENTRY)
    yaml = project / "pipeline.yml"
    yaml.write_text(HEADER + textwrap.dedent("""\
        jobs:
          score:
            type: parallel
            inputs:
              data: {type: uri_folder, path: ./data, mode: ro_mount}
            outputs:
              rows: {type: uri_folder}
            input_data: ${{inputs.data}}
            mini_batch_size: "1"
            max_concurrency_per_instance: 1
            retry_settings: {max_retries: 0, timeout: 30}
            task:
              type: run_function
              code: ./src
              entry_script: score.py
              environment: azureml:env:1
              append_row_to: ${{outputs.rows}}
        """))
    before = tree_hashes(data)
    ran = create(yaml, tmp_path / "runs", "p1")
    assert ("[UserError] OSError: [Errno <n>] Read-only file system: '…': 2 mini-batches "
            "failed, 2 failed attempts") in ran.proc.stdout, ran.proc.stdout
    assert ran.summary("score")["mini_batches_failed"] == 2
    assert tree_hashes(data) == before


def test_a_download_input_is_a_copy_the_step_may_change(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    data, _other = _user_data(project)
    (project / "src").mkdir()
    (project / "src" / "score.py").write_text(ENTRY)
    yaml = project / "pipeline.yml"
    yaml.write_text(HEADER + textwrap.dedent("""\
        jobs:
          score:
            type: parallel
            inputs:
              data: {type: uri_folder, path: ./data, mode: download}
            outputs:
              rows: {type: uri_folder}
            input_data: ${{inputs.data}}
            mini_batch_size: "1"
            max_concurrency_per_instance: 1
            retry_settings: {max_retries: 0, timeout: 30}
            task:
              type: run_function
              code: ./src
              entry_script: score.py
              environment: azureml:env:1
              append_row_to: ${{outputs.rows}}
        """))
    before = tree_hashes(data)
    ran = create(yaml, tmp_path / "runs", "p1")
    assert ran.proc.returncode == 0, ran.proc.stdout + ran.proc.stderr
    assert sorted(ran.append_lines("score")) == ["a.txt", "b.txt"]
    assert tree_hashes(data) == before
    copy = tmp_path / "runs" / "p1" / "score" / ".mlpipe" / "inputs" / "data" / "data"
    assert (copy / "a.txt").read_text() == "the user's a.txt\nchanged\n"


def test_the_os_refuses_the_write_for_a_user_who_is_not_root(
        request: pytest.FixtureRequest) -> None:
    """Not root: a user namespace of its own, the user mapped to itself."""
    python, setpriv = "/usr/bin/python3", shutil.which("setpriv")
    if os.getuid() != 0 or setpriv is None or not os.path.exists(python):
        pytest.skip("needs root (to become another user), setpriv and /usr/bin/python3")
    base = Path(tempfile.mkdtemp(prefix="mlpipe-ro-test-"))  # open to another user
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    base.chmod(0o755)
    folder = base / "data"
    folder.mkdir()
    (folder / "a.txt").write_text("mine\n")
    for path in (folder, folder / "a.txt"):
        os.chown(path, 65534, 65534)
    code = (f"import subprocess, sys; sys.path.insert(0, {str(REPO)!r}); "
            "from mlpipe.runtime.read_only import ReadOnly, launch_command; "
            f"v = ReadOnly(({str(folder)!r},)); "
            "sys.exit(subprocess.run(launch_command(v, ['sh', '-c', "
            f"'echo x >> {folder}/a.txt'])).returncode)")
    proc = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
                           python, "-c", code], capture_output=True, text=True, timeout=60)
    if "Operation not permitted" in proc.stderr:
        pytest.skip(f"user namespaces are not allowed here: {proc.stderr.strip()}")
    assert proc.returncode != 0 and "Read-only file system" in proc.stderr, proc.stderr
    assert (folder / "a.txt").read_text() == "mine\n"


def test_a_launched_program_dies_with_its_parent(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    code = ("import subprocess, sys, time; "
            "from mlpipe.runtime.read_only import ReadOnly, launch_command; "
            f"p = subprocess.Popen(launch_command(ReadOnly(), ['sh', '-c', "
            f"'echo $$ > {pid_file}; exec sleep 300'])); time.sleep(300)")
    parent = subprocess.Popen([sys.executable, "-c", code],
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        for _ in range(200):
            if pid_file.exists() and pid_file.read_text().strip():
                break
            import time

            time.sleep(0.05)
        child = int(pid_file.read_text())
        parent.kill()
        parent.wait()
        import psutil

        with contextlib.suppress(psutil.NoSuchProcess):
            psutil.Process(child).wait(timeout=10)  # psutil.TimeoutExpired: it lives on
    finally:
        parent.kill()
