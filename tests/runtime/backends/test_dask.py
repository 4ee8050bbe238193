"""The dask backend with its own LocalCluster: same outputs as the local backend, clear errors."""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

# pytest's hypothesis plugin imports (and so ast-parses) hypothesis at session end, when
# Dask's threads may parse too: CPython 3.11's AST recursion counter is shared by threads
# (python/cpython#106905) and the session then dies with a SystemError. Import it now.
with contextlib.suppress(ImportError):
    import hypothesis  # noqa: F401

from mlpipe.frozen import freeze
from mlpipe.plan import PlanInput
from mlpipe.runtime import run_parallel_step
from mlpipe.runtime.backends import get_backend
from mlpipe.runtime.backends.dask import SCHEDULER_ENV, DaskBackend
from mlpipe.sizes import parse_mini_batch_size
from tests.runtime.support import Recorder, make_step

REPO = Path(__file__).resolve().parents[3]

FILE_SCRIPT = """
import os
from pathlib import Path
from azureml_user.parallel_run import EntryScript
from azureml.core import Run  # mlpipe's mirror, in local and Dask workers alike

def init():
    global prefix
    prefix = "seen" if Run.get_context() is not None else "no run"
    EntryScript().logger.info("init in %s", os.getpid())

def run(mini_batch):
    out = Path(os.environ["AZUREML_BI_OUTPUT_PATH"])
    rows = []
    for path in mini_batch:
        name = Path(path).name
        (out / f"{name}.copy").write_text(Path(path).read_text().upper())
        print("scored", name)
        rows.append(f"{prefix} {name}")
    return rows
"""


def _file_step(tmp_path: Path, name: str):
    data = tmp_path / "data"
    if not data.is_dir():
        data.mkdir()
        for i in range(9):
            (data / f"doc{i:02d}.txt").write_text(f"text {i}\n")
    return make_step(tmp_path / name, FILE_SCRIPT, workers=2,
                     inputs=freeze({"docs": PlanInput("docs", "uri_folder", path=str(data))}),
                     input_data="docs", mini_batch_size=parse_mini_batch_size("2"))


class _Logged:
    """An observer lending the driver its logger, so the test sees the driver log."""

    def __init__(self) -> None:
        self.logger = logging.getLogger("tests.dask.driver")
        self.logger.setLevel(logging.INFO)

    def __getattr__(self, name: str):
        return lambda *args: None


def _driver_log(step, caplog: pytest.LogCaptureFixture) -> str:
    master_role = Path(step.logs_dir) / "sys" / "master_role.txt"
    text = caplog.text
    if master_role.is_file():
        text += master_role.read_text()
    return text


@pytest.mark.slow  # runs whole jobs: CI's second stage
def test_file_step_gives_the_local_backends_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)
    local_step = _file_step(tmp_path, "local")
    local = run_parallel_step(local_step, backend="local")
    assert local.status == "Completed"

    dask_step = _file_step(tmp_path, "dask")
    recorder = Recorder()
    with caplog.at_level(logging.INFO, logger="tests.dask.driver"):
        summary = run_parallel_step(dask_step, backend="dask", observers=[recorder, _Logged()])

    assert summary.status == "Completed", summary.reason
    assert (summary.mini_batches_total, summary.items_succeeded) == (5, 9)
    assert Path(summary.append_row_file).read_text() == Path(local.append_row_file).read_text()
    assert Path(summary.append_row_file).read_text().splitlines()[0] == "seen doc00.txt"
    local_out = Path(local.append_row_file).parent
    dask_out = Path(summary.append_row_file).parent
    copies = sorted(p.name for p in dask_out.glob("*.copy"))
    assert copies == sorted(p.name for p in local_out.glob("*.copy")) and len(copies) == 9
    assert (dask_out / "doc03.txt.copy").read_text() == "TEXT 3\n"
    assert sorted({(a.worker.node, a.worker.process) for a in recorder.attempts}) <= \
        [(0, "process000"), (0, "process001")]
    assert all(a.picked_count == 1 and a.status == "Succeeded" for a in recorder.attempts)
    pids = {a.worker.pid for a in recorder.attempts}
    assert os.getpid() not in pids  # run() ran in the Dask worker processes
    logs = Path(dask_step.logs_dir) / "user"
    stdout = "".join(p.read_text() for p in (logs / "stdout" / "0").glob("process*.stdout.txt"))
    assert stdout.count("scored ") == 9
    stderr = "".join(p.read_text() for p in (logs / "stderr" / "0").glob("process*.stderr.txt"))
    assert "distributed.worker" not in stderr  # Dask's own log stays out of the user's files
    entry_logs = "".join(p.read_text() for p in (logs / "entry_script_log" / "0").glob("*.txt"))
    assert "init in" in entry_logs
    log = _driver_log(dask_step, caplog)
    assert "Dask: started a LocalCluster of 2 worker processes" in log
    assert "dashboard:" in log


def test_unreachable_scheduler_fails_the_step_with_a_clear_reason(tmp_path: Path) -> None:
    step = make_step(tmp_path, "def run(mb):\n    return mb\n", workers=1)
    summary = run_parallel_step(step, backend=DaskBackend("tcp://127.0.0.1:9", connect_timeout=1),
                                mini_batches=[], loader="tests.runtime.support:load_payload")
    assert summary.status == "Failed"
    assert "cannot use the Dask cluster (tcp://127.0.0.1:9)" in summary.reason
    assert "Traceback" not in summary.reason


def test_a_missing_scheduler_file_fails_the_step_naming_it(tmp_path: Path) -> None:
    step = make_step(tmp_path, "def run(mb):\n    return mb\n", workers=1)
    missing = tmp_path / "scheduler.json"
    summary = run_parallel_step(step, backend=DaskBackend(scheduler_file=str(missing)),
                                mini_batches=[], loader="tests.runtime.support:load_payload")
    assert summary.status == "Failed"
    assert summary.reason is not None and summary.reason.startswith(
        f"No worker could start: cannot use the Dask cluster: scheduler file {missing}: no "
        "such file")
    assert "LocalCluster" not in summary.reason and "init() failed" not in summary.reason


def test_dask_name_selects_the_backend_and_a_typo_is_explained() -> None:
    assert isinstance(get_backend("dask"), DaskBackend)
    with pytest.raises(ValueError, match="did you mean 'dask'"):
        get_backend("dusk")


def test_missing_distributed_gives_the_install_hint() -> None:
    """The pre-run check names the package (not mlpipe's own module, which is always there),
    and so does the backend made outside a job."""
    code = ("import sys; sys.modules['distributed'] = None\n"
            "from mlpipe.runtime.backends import get_backend, BackendError\n"
            "from mlpipe.jobs.preflight import check_backend, BackendUnavailableError\n"
            "try:\n    check_backend('dask')\n"
            "except BackendUnavailableError as error:\n    print(error)\n"
            "try:\n    get_backend('dask')\n"
            "except BackendError as error:\n    print(error)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60, check=True)
    message = ("the 'dask' backend needs 1 package (distributed) that is not installed; "
               "install it with: pip install 'mlpipe-azure[dask]'")
    assert done.stdout.splitlines() == [message, message]
    assert "Traceback" not in done.stdout + done.stderr


DAEMON_SCRIPT = """
import os, time
from pathlib import Path

def run(mini_batch):
    child = os.fork()
    if child == 0:  # a daemon: double fork + setsid, as a server or a watcher starts itself
        os.setsid()
        if os.fork() == 0:
            Path(os.environ["DAEMONS"], str(os.getpid())).write_text("up")
            time.sleep(300)
        os._exit(0)
    os.waitpid(child, 0)
    return [Path(p).name for p in mini_batch]
"""


@pytest.mark.slow
def test_a_daemon_run_started_on_a_dask_worker_ends_with_the_step_and_is_named(
        tmp_path: Path) -> None:
    """``mlpipe job create ... | tee`` ends: the daemon held the job's stdout (the job's
    LocalCluster workers inherit it) and now ends when its worker stops, named in the log."""
    import psutil

    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "data").mkdir()
    (project / "src" / "score.py").write_text(DAEMON_SCRIPT, encoding="utf-8")
    for index in range(3):
        (project / "data" / f"f{index}.txt").write_text("x\n", encoding="utf-8")
    daemons = tmp_path / "daemons"
    daemons.mkdir()
    from tests.runtime.backends.support import pipeline_yaml

    extra = f'    environment_variables: {{DAEMONS: "{daemons}"}}\n'
    (project / "pipeline.yml").write_text(pipeline_yaml("score", extra=extra), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != SCHEDULER_ENV}
    job = subprocess.Popen(
        [sys.executable, "-m", "mlpipe", "job", "create", "-f", "pipeline.yml", "-n", "d1",
         "--runs-dir", str(tmp_path / "runs"), "--backend", "dask", "--no-progress"],
        cwd=project, env={**env, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = job.communicate(timeout=180)  # returns once nothing holds the pipe
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    assert "job d1: completed" in out, out
    started = [int(path.name) for path in daemons.iterdir()]
    assert len(started) == 3
    alive = [pid for pid in started if psutil.pid_exists(pid)
             and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert alive == []
    master_role = (tmp_path / "runs" / "d1" / "score" / "logs" / "sys" / "master_role.txt"
                   ).read_text(encoding="utf-8")
    for pid in started:
        assert f"Ended process {pid} (" in master_role, master_role
