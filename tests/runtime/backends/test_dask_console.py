"""``mlpipe job create --backend dask`` as a user sees it: the dashboard link on the console,
reachable while the job runs (one LocalCluster for the job), and a worker that dies costs
its mini-batch one attempt with no Dask or asyncio noise on the console (it goes to
master_role.txt)."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

with contextlib.suppress(ImportError):  # see tests/runtime/backends/test_dask_cluster.py
    import hypothesis  # noqa: F401

from tests.conftest import REPO

pytest.importorskip("distributed")
pytestmark = pytest.mark.slow

SCRIPT = """\
import os, signal, time
from pathlib import Path

GO = Path({go!r})


def run(mini_batch):
    deadline = time.monotonic() + 120
    while not GO.exists() and time.monotonic() < deadline:  # the test opens the dashboard first
        time.sleep(0.05)
    marker = Path(os.environ["AZUREML_BI_OUTPUT_PATH"]) / "died-once"
    if any(p.endswith("f03.txt") for p in mini_batch) and not marker.exists():
        marker.write_text("x")
        os.kill(os.getppid(), signal.SIGKILL)  # the Dask worker (run() has a process of its own)
    return [Path(p).name for p in mini_batch]
"""

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
jobs:
  score:
    type: parallel
    inputs:
      files: {type: uri_folder, path: ./data}
    outputs:
      rows: {type: uri_file}
    input_data: ${{inputs.files}}
    mini_batch_size: "1"
    max_concurrency_per_instance: 2
    retry_settings: {max_retries: 2, timeout: 120}
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      append_row_to: ${{outputs.rows}}
"""


def test_dashboard_on_console_and_a_dead_worker_without_noise(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "score.py").write_text(SCRIPT.format(go=str(tmp_path / "go")),
                                               encoding="utf-8")
    (tmp_path / "data").mkdir()
    for index in range(12):
        (tmp_path / "data" / f"f{index:02d}.txt").write_text("x\n", encoding="utf-8")
    (tmp_path / "pipeline.yml").write_text(PIPELINE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("MLPIPE_DASK_SCHEDULER", None)
    job = subprocess.Popen(
        [sys.executable, "-m", "mlpipe", "job", "create", "-f", str(tmp_path / "pipeline.yml"),
         "-n", "on-dask", "--runs-dir", str(tmp_path / "runs"), "--backend", "dask",
         "--no-progress"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert job.stdout is not None
        lines = []
        for line in job.stdout:
            lines.append(line)
            if line.startswith("Dask dashboard: ") or line.startswith("step score: completed"):
                break
        match = re.match(r"Dask dashboard: (http://\S+) ", lines[-1])
        assert match, "".join(lines)
        with urllib.request.urlopen(match.group(1), timeout=60) as page:  # while the job runs
            assert page.status == 200
        (tmp_path / "go").write_text("go", encoding="utf-8")
        out, err = job.communicate(timeout=240)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    out = "".join(lines) + out
    assert job.returncode == 0, out + err
    console = out + err
    for noise in ("Couldn't gather", "AllExit", "Traceback", "Task exception was never retrieved",
                  "distributed."):
        assert noise not in console, console
    logs = tmp_path / "runs" / "on-dask" / "score" / "logs"
    master = (logs / "sys" / "master_role.txt").read_text(encoding="utf-8")
    assert "died or left the Dask cluster" in master and "|Dask distributed." in master
    rows = (tmp_path / "runs" / "on-dask" / "score" / "outputs" / "rows" / "parallel_run_step.txt")
    assert sorted(rows.read_text(encoding="utf-8").split()) == [f"f{i:02d}.txt" for i in range(12)]


def test_dask_log_route_keeps_dasks_lines_off_the_console(capfd: pytest.CaptureFixture[str]) -> None:
    import logging

    from mlpipe.runtime.backends.dask_logs import DaskLogRoute, Tagged

    class Keep(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.lines: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.lines.append(record.getMessage())

    keep = Keep()
    console_before = [list(logging.getLogger(n).handlers) for n in ("distributed", "distributed.client")]
    with DaskLogRoute((Tagged(keep),)), DaskLogRoute():  # nested: a step inside the job's route
        logging.getLogger("distributed.scheduler").error("Couldn't gather keys: {'k': 'no-worker'}")
        logging.getLogger("distributed.client").warning("Couldn't gather 1 keys, rescheduling")
        logging.getLogger("asyncio").error("Task exception was never retrieved")
    logging.getLogger("distributed.core").info("after the route")  # back to Dask's own handlers
    assert keep.lines == ["Dask distributed.scheduler: Couldn't gather keys: {'k': 'no-worker'}",
                          "Dask distributed.client: Couldn't gather 1 keys, rescheduling",
                          "Dask asyncio: Task exception was never retrieved"]
    assert "Couldn't gather" not in capfd.readouterr().err
    assert [list(logging.getLogger(n).handlers) for n in ("distributed", "distributed.client")] \
        == console_before
