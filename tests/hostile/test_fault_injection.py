"""Fault injection: a real ``mlpipe job create`` meets a fault; the job must end (failed or
completed, never hanging: every process has a timeout), say why, and after a resume
(``job create --name``) hold every append_row row exactly once.

Faults: a worker killed with SIGKILL, the driver's process group killed with SIGKILL,
a full disk (a 2 MB tmpfs; root only), an unreadable folder and an unreadable file met
by the listing, a report observer that raises, a closed stdout.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow  # faults injected into whole jobs: CI's second stage

TIMEOUT = 120  # seconds; a hang fails the test instead of the suite
FILES = 30

SCRIPT = """\
import os, signal, time

def init():
    pass

def run(mini_batch):
    rows = []
    for path in mini_batch:
        name = os.path.basename(path)
        marks = os.environ.get("MARKS", "")
        mark = os.path.join(marks, name)
        if name == os.environ.get("KILL_ON") and marks and not os.path.exists(mark):
            open(mark, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        slow = name == os.environ.get("SLOW_ON")
        time.sleep(float(os.environ.get("SLOW" if slow else "SLEEP", "0")))
        rows.append(name + " " + "x" * int(os.environ.get("PAD", "0")))
    return rows
"""


def _pipeline(folder: Path, data: Path, **env: str) -> Path:
    (folder / "src").mkdir(parents=True, exist_ok=True)
    (folder / "src" / "score.py").write_text(SCRIPT)
    variables = "".join(f"\n      {key}: \"{value}\"" for key, value in env.items()) or " {}"
    text = textwrap.dedent("""\
        type: pipeline
        jobs:
          score:
            type: parallel
            inputs:
              files:
                type: uri_folder
                path: {data}
            outputs:
              rows:
                type: uri_file
            input_data: ${{{{inputs.files}}}}
            mini_batch_size: "1"
            max_concurrency_per_instance: 2
            retry_settings:
              max_retries: 1
              timeout: 60
            environment_variables:{variables}
            task:
              type: run_function
              code: ./src
              entry_script: score.py
              environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest
              append_row_to: ${{{{outputs.rows}}}}
        """).format(data=data, variables=variables.replace("\n", "\n" + " " * 4))
    path = folder / "p.yml"
    path.write_text(text)
    return path


def _data(folder: Path, groups: dict[str, int]) -> list[str]:
    """Files ``<group>/<group>NN.txt``; returns their names in listing order."""
    names = []
    for group, count in groups.items():
        (folder / group).mkdir(parents=True, exist_ok=True)
        for index in range(count):
            name = f"{group}{index:02d}.txt"
            (folder / group / name).write_text(f"{index}\n")
            names.append(name)
    return names


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _mlpipe(*args: str, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, sys.executable, "-m", "mlpipe", *args], env=_env(),
                          capture_output=True, text=True, timeout=TIMEOUT)


def _create_args(yaml: Path, runs: Path, name: str) -> list[str]:
    return ["job", "create", "-f", str(yaml), "--runs-dir", str(runs), "--name", name,
            "--no-progress"]


def _create(yaml: Path, runs: Path, name: str,
            prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return _mlpipe(*_create_args(yaml, runs, name), prefix=prefix)


def _done(runs: Path, name: str) -> int:
    """Finished mini-batches of the running job, as its record says."""
    try:
        return int(_record(runs, name)["steps"]["score"]["progress"]["mini_batches_done"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def _record(runs: Path, name: str) -> dict[str, Any]:
    return json.loads((runs / name / "job.json").read_text())


def _rows(runs: Path, name: str) -> list[str]:
    path = runs / name / "score" / "outputs" / "rows" / "parallel_run_step.txt"
    return [line.split()[0] for line in path.read_text().splitlines()] if path.exists() else []


def _job_result(runs: Path, name: str) -> str:
    return (runs / name / "score" / "logs" / "job_result.txt").read_text()


def _resumed_exactly_once(yaml: Path, runs: Path, name: str, names: list[str]) -> None:
    again = _create(yaml, runs, name)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "resuming the failed job" in again.stdout
    assert _record(runs, name)["status"] == "completed"
    assert _rows(runs, name) == names  # every row once, in input order


def _no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr


def test_worker_killed_with_sigkill_is_replaced_and_loses_nothing(tmp_path: Path) -> None:
    names = _data(tmp_path / "data", {"a": FILES})
    marks = tmp_path / "marks"
    marks.mkdir()
    yaml = _pipeline(tmp_path, tmp_path / "data", KILL_ON="a07.txt", MARKS=str(marks))
    proc = _create(yaml, tmp_path / "runs", "killw")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _no_traceback(proc)
    assert _rows(tmp_path / "runs", "killw") == names
    report = (tmp_path / "runs" / "killw" / "score" / "logs" / "sys" / "job_report"
              / "processed_mini-batches.csv").read_text()
    assert "SIGKILL" in report


def test_driver_killed_with_sigkill_then_resumed_loses_and_repeats_nothing(
        tmp_path: Path) -> None:
    names = _data(tmp_path / "data", {"a": FILES})
    yaml = _pipeline(tmp_path, tmp_path / "data", SLEEP="0.1")
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlpipe", *_create_args(yaml, runs, "killd")], env=_env(),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + TIMEOUT
    while _done(runs, "killd") < 8:
        assert proc.poll() is None and time.monotonic() < deadline, "the job ended too soon"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and its workers, mid-step
    proc.wait(timeout=TIMEOUT)
    shown = _mlpipe("job", "show", "killd", "--runs-dir", str(runs), "-o", "json")
    assert shown.returncode == 0 and json.loads(shown.stdout).get("stale") is True
    again = _create(yaml, runs, "killd")
    assert again.returncode == 0, again.stdout + again.stderr
    assert _rows(runs, "killd") == names


def _can_mount_tmpfs(target: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    target.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(target)],
                          capture_output=True, timeout=30)
    return done.returncode == 0


def test_a_full_disk_fails_the_job_with_its_cause_and_a_resume_completes(
        tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    if not _can_mount_tmpfs(runs):
        pytest.skip("needs root to mount a 2 MB tmpfs as the runs folder")
    try:
        names = _data(tmp_path / "data", {"a": FILES})
        yaml = _pipeline(tmp_path, tmp_path / "data", PAD="100000")  # 30 x 100 KB > 2 MB
        proc = _create(yaml, runs, "full")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        _no_traceback(proc)
        record = _record(runs, "full")
        assert record["status"] == "failed"
        assert "No space left on device" in record["steps"]["score"]["error"]
        first = _job_result(runs, "full").splitlines()[0]
        assert first.startswith(f"Failed: {runs}") and "No space left on device" in first
        subprocess.run(["mount", "-o", "remount,size=64m", str(runs)], check=True, timeout=30)
        _resumed_exactly_once(yaml, runs, "full", names)
    finally:
        subprocess.run(["umount", "-l", str(runs)], capture_output=True, timeout=30)


def _without_read_access() -> tuple[str, ...]:
    """A command prefix under which a chmod 000 entry cannot be read (root reads anything)."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.skip("root without setpriv cannot lose read access")
    return ("setpriv", "--bounding-set=-dac_override,-dac_read_search")


def _create_without_access(yaml: Path, runs: Path, name: str, locked: Path) -> None:
    """Run the job while ``locked`` cannot be read (then readable again); it must fail
    cleanly."""
    mode = locked.stat().st_mode
    locked.chmod(0)
    try:
        proc = _create(yaml, runs, name, prefix=_without_read_access())
    finally:
        locked.chmod(mode)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    _no_traceback(proc)


def test_an_unreadable_folder_in_the_listing_keeps_the_rows_before_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    names = _data(data, {"a": 15, "m": 1, "z": 15})
    yaml = _pipeline(tmp_path, data)
    runs = tmp_path / "runs"
    _create_without_access(yaml, runs, "locked", data / "m")
    reason = f"{data / 'm'}: cannot read folder: Permission denied"
    assert _job_result(runs, "locked").splitlines()[0] == f"Failed: {reason}"
    record = _record(runs, "locked")
    assert record["status"] == "failed" and reason in record["steps"]["score"]["error"]
    assert record["steps"]["score"]["summary"]["mini_batches_succeeded"] == 15
    assert _rows(runs, "locked") == names[:15]  # listed before the folder: run and kept
    _resumed_exactly_once(yaml, runs, "locked", names)


def test_an_unreadable_file_in_a_tabular_listing_names_the_file(tmp_path: Path) -> None:
    table = tmp_path / "table"
    table.mkdir()
    for part in range(4):
        lines = [f"{part}-{row},{row}" for row in range(20)]
        (table / f"p{part}.csv").write_text("name,row\n" + "\n".join(lines) + "\n")
    (table / "MLTable").write_text("paths:\n  - pattern: ./*.csv\ntransformations:\n"
                                   "  - read_delimited:\n      delimiter: ','\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "score.py").write_text(
        "def init():\n    pass\n\ndef run(frame):\n    return list(frame['name'])\n")
    yaml = tmp_path / "p.yml"
    yaml.write_text(textwrap.dedent(f"""\
        type: pipeline
        jobs:
          score:
            type: parallel
            inputs:
              table: {{type: mltable, path: {table}}}
            outputs:
              rows: {{type: uri_file}}
            input_data: ${{{{inputs.table}}}}
            mini_batch_size: "100"
            max_concurrency_per_instance: 2
            task:
              type: run_function
              code: ./src
              entry_script: score.py
              environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest
              append_row_to: ${{{{outputs.rows}}}}
        """))
    runs = tmp_path / "runs"
    _create_without_access(yaml, runs, "lockedfile", table / "p2.csv")
    first = _job_result(runs, "lockedfile").splitlines()[0]
    assert first.startswith(f"Failed: {table / 'p2.csv'}: Permission denied"), first
    assert _rows(runs, "lockedfile") == [f"{p}-{r}" for p in range(2) for r in range(20)]
    again = _create(yaml, runs, "lockedfile")
    assert again.returncode == 0, again.stdout + again.stderr
    assert _rows(runs, "lockedfile") == [f"{p}-{r}" for p in range(4) for r in range(20)]


RAISING_OBSERVER = """
import sys
from mlpipe.cli import main
from mlpipe.runtime import reports


original = reports.StepReports.attempt_finished
calls = []

def attempt_finished(self, record):
    original(self, record)
    calls.append(record)
    if len(calls) == 10:
        raise OSError(5, "Input/output error", "/injected/report.csv")

reports.StepReports.attempt_finished = attempt_finished
raise SystemExit(main(sys.argv[1:]))
"""


def test_a_raising_report_observer_fails_the_job_and_a_resume_completes(
        tmp_path: Path) -> None:
    names = _data(tmp_path / "data", {"a": FILES})
    # a10 takes a second: it is usually still running when the 10th report fails the job,
    # and a later mini-batch can end before it (the rows kept need not be a prefix)
    yaml = _pipeline(tmp_path, tmp_path / "data", SLEEP="0.02", SLOW_ON="a10.txt", SLOW="1")
    runs = tmp_path / "runs"
    injector = tmp_path / "inject.py"
    injector.write_text(RAISING_OBSERVER)
    proc = subprocess.run([sys.executable, str(injector), *_create_args(yaml, runs, "obs")],
                          env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    _no_traceback(proc)
    reason = "StepReports.attempt_finished failed: /injected/report.csv: Input/output error"
    assert _job_result(runs, "obs").startswith(f"Failed: {reason}")
    record = _record(runs, "obs")
    assert record["status"] == "failed" and reason in record["steps"]["score"]["error"]
    kept = _rows(runs, "obs")  # what finished before the failure, each once, in input order
    assert len(kept) >= 10 and kept == [name for name in names if name in set(kept)]
    _resumed_exactly_once(yaml, runs, "obs", names)


def test_a_closed_stdout_neither_hangs_nor_loses_the_job(tmp_path: Path) -> None:
    names = _data(tmp_path / "data", {"a": FILES})
    yaml = _pipeline(tmp_path, tmp_path / "data", SLEEP="0.02")
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlpipe", *_create_args(yaml, runs, "piped")], env=_env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    try:
        head = [proc.stdout.readline() for _ in range(3)]  # mlpipe ... | head -3
        proc.stdout.close()
        proc.wait(timeout=TIMEOUT)  # a hang fails here
        err = proc.stderr.read()
    finally:
        proc.kill()
    assert head[0].startswith("job: piped")
    assert "Traceback" not in err and "Broken pipe" not in err, err
    record = _record(runs, "piped")
    assert record["status"] == "completed"
    assert record["steps"]["score"]["status"] == "completed"
    assert _rows(runs, "piped") == names
    for args in (("job", "show", "piped", "--runs-dir", str(runs), "--output", "json"),
                 ("job", "list", "--runs-dir", str(runs)),
                 ("job", "validate", "-f", str(yaml), "--show-plan")):
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader is gone before the first write: EPIPE every time
        try:
            shown = subprocess.run([sys.executable, "-m", "mlpipe", *args], env=_env(),
                                   stdout=write_end, stderr=subprocess.PIPE, text=True,
                                   timeout=TIMEOUT)
        finally:
            os.close(write_end)
        assert shown.stderr == "" and shown.returncode == 1, (args, shown.stderr)


@pytest.mark.timeout(TIMEOUT)
def test_a_command_whose_log_cannot_be_written_fails_instead_of_blocking(
        tmp_path: Path) -> None:
    """A full file system under the command's logs/user/ (a 64 KB tmpfs): the copy of its
    400 KB of output fails with ENOSPC; the command must not block on its full pipe, and the
    step fails naming the file. (A link to /dev/full is refused up front: mlpipe never writes
    through a link in a job's folder.)"""
    from mlpipe.jobs import run_plan
    from mlpipe.plan import CommandStep, ExecutionPlan

    runs = tmp_path / "runs"
    step = CommandStep(name="talk", step_dir=str(runs / "cmd" / "talk"),
                       command="head -c 400000 /dev/zero | tr '\\\\0' 'x' | fold -w 100")
    user_logs = Path(step.logs_dir) / "user"
    stdout = user_logs / "stdout.txt"
    user_logs.mkdir(parents=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(user_logs)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs (needs root): {mounted.stderr.strip()}")
    try:
        (tmp_path / "p.yml").write_text("type: pipeline\n")
        plan = ExecutionPlan(source=str(tmp_path / "p.yml"), run_dir=str(runs / "cmd"),
                             name="cmd", steps=(step,))
        result = run_plan(plan)
    finally:
        subprocess.run(["umount", "-l", str(user_logs)], check=False)
    assert result.status == "failed"
    error = result.steps["talk"].error or ""
    assert f"{stdout}: No space left on device" in error, error
