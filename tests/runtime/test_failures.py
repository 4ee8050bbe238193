"""Retries, timeouts, dying workers, init failures, thresholds, cancel and resume."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from mlpipe.frozen import freeze
from mlpipe.plan import PrsOptions
from mlpipe.runtime import run_parallel_step
from mlpipe.runtime.journal import finished_count
from tests.runtime.support import LOADER, Recorder, file_mini_batches, make_step

# run() misbehaves on the FIRST attempt at the mini-batches named in BAD (a marker file
# remembers the attempt), then succeeds; MODE says how it misbehaves.
FLAKY = """
    import os, signal, sys, time
    MARKS = os.environ["MARKS"]
    BAD = set(os.environ["BAD"].split(","))
    MODE = os.environ["MODE"]

    def init():
        pass

    def run(mini_batch):
        name = os.path.basename(mini_batch[0])
        mark = os.path.join(MARKS, name)
        if name in BAD and not os.path.exists(mark):
            open(mark, "w").close()
            if MODE == "raise":
                raise RuntimeError("flaky failure on " + name)
            if MODE == "sleep":
                time.sleep(60)
            if MODE == "exit":
                os._exit(1)
            if MODE == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            if MODE == "segfault":
                import ctypes
                ctypes.string_at(0)
            if MODE == "external":  # wait for the test to SIGKILL this process from outside
                with open(mark + ".pid", "w") as handle:
                    handle.write(str(os.getpid()))
                time.sleep(30)
        time.sleep(0.01)
        return [name]
"""


def _flaky(tmp_path: Path, mode: str, bad: str, **kwargs):  # type: ignore[no-untyped-def]
    marks = tmp_path / "marks"
    marks.mkdir()
    env = {"MARKS": str(marks), "BAD": bad, "MODE": mode}
    return make_step(tmp_path, FLAKY, environment_variables=freeze(env), **kwargs)


def _rows(summary) -> list[str]:  # type: ignore[no-untyped-def]
    return Path(summary.append_row_file).read_text().splitlines()


EXPECTED = [f"f{i:04d}.txt" for i in range(8)]


@pytest.mark.parametrize("mode", ["raise", "exit", "sigkill", "segfault"])
def test_failed_or_dead_attempt_is_retried_and_nothing_is_lost(tmp_path: Path, mode: str) -> None:
    step = _flaky(tmp_path, mode, "f0002.txt,f0005.txt")
    recorder = Recorder()
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 8),
                                loader=LOADER, observers=[recorder])
    assert summary.status == "Completed", summary.reason
    assert _rows(summary) == EXPECTED  # exactly once, input order, after retries
    assert recorder.picked("mb-0002") == [1, 2] and recorder.picked("mb-0005") == [1, 2]
    assert recorder.picked("mb-0000") == [1]
    first = next(a for a in recorder.attempts if a.mini_batch_id == "mb-0002")
    assert not first.final
    if mode == "raise":
        assert first.error_category == "UserError"
        assert "RuntimeError: flaky failure on f0002.txt" in (first.traceback or "")
    else:
        assert first.status == "ProcessDied"
        expected = {"sigkill": "SIGKILL", "segfault": "SIGSEGV", "exit": "code 1"}[mode]
        assert expected in (first.error_message or "")
        assert len(recorder.events("died")) == 2 and len(recorder.events("replaced")) >= 1
    assert len(recorder.attempts) == 10  # one extra attempt per bad mini-batch, no more


def test_worker_killed_from_outside_mid_run_loses_nothing(tmp_path: Path) -> None:
    step = _flaky(tmp_path, "external", "f0003.txt")
    pid_file = tmp_path / "marks" / "f0003.txt.pid"
    killed: list[int] = []

    def killer() -> None:  # plays the OOM killer
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if pid_file.exists() and pid_file.read_text():
                pid = int(pid_file.read_text())
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.02)

    thread = threading.Thread(target=killer)
    thread.start()
    recorder = Recorder()
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 8),
                                loader=LOADER, observers=[recorder])
    thread.join()
    assert killed and summary.status == "Completed", summary.reason
    assert _rows(summary) == EXPECTED
    lost = next(a for a in recorder.attempts if a.mini_batch_id == "mb-0003")
    assert lost.status == "ProcessDied" and "SIGKILL" in (lost.error_message or "")
    assert lost.worker.pid == killed[0]
    assert recorder.picked("mb-0003") == [1, 2] and len(recorder.attempts) == 9


def test_run_past_its_timeout_is_killed_and_retried(tmp_path: Path) -> None:
    step = _flaky(tmp_path, "sleep", "f0001.txt", timeout=1)
    recorder = Recorder()
    started = time.monotonic()
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 8),
                                loader=LOADER, observers=[recorder])
    assert time.monotonic() - started < 15
    assert summary.status == "Completed", summary.reason
    assert _rows(summary) == EXPECTED
    attempts = [a for a in recorder.attempts if a.mini_batch_id == "mb-0001"]
    assert [(a.picked_count, a.status) for a in attempts] == [(1, "Timeout"), (2, "Succeeded")]
    assert "retry_settings.timeout = 1" in (attempts[0].error_message or "")


def test_retries_exhausted_fail_the_mini_batch(tmp_path: Path) -> None:
    step = make_step(tmp_path, "def init(): pass\ndef run(mb): raise ValueError('always')\n",
                     max_retries=1)
    recorder = Recorder()
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 2),
                                loader=LOADER, observers=[recorder])
    assert summary.status == "Completed"  # -1 thresholds: failures are ignored
    assert recorder.picked("mb-0000") == [1, 2]
    assert [a.final for a in recorder.attempts if a.mini_batch_id == "mb-0000"] == [False, True]
    assert summary.mini_batches_failed == 2 and summary.items_failed == 2
    # failed attempts, retries included: the count job_result.txt gives
    (group,) = summary.errors.top()
    assert (group.label, group.attempts, group.mini_batches, group.failed) == (
        "ValueError: always", 4, 2, 2)
    assert summary.error_kinds == 1


ARGPARSE = """
    import argparse
    def init():
        global args
        parser = argparse.ArgumentParser()
        parser.add_argument("--model", required=True)
        args, _ = parser.parse_known_args()
    def run(mini_batch):
        return [args.model] * len(mini_batch)
"""


def test_init_systemexit_fails_the_step_with_the_traceback(tmp_path: Path) -> None:
    step = make_step(tmp_path, ARGPARSE)
    recorder = Recorder()
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 3),
                                loader=LOADER, observers=[recorder])
    assert summary.status == "Failed"
    assert "init() failed" in (summary.reason or "")
    assert "SystemExit: 2" in (summary.reason or "")
    assert "Traceback" in (summary.reason or "") and "parse_known_args" in (summary.reason or "")
    assert len(recorder.events("init_failed")) == 2
    assert recorder.attempts == []
    stderr = "".join(p.read_text() for p in (Path(step.logs_dir) / "user" / "stderr").rglob("*.txt"))
    assert "the following arguments are required: --model" in stderr
    job_result = (Path(step.logs_dir) / "job_result.txt").read_text()
    assert job_result.startswith("Failed") and "SystemExit: 2" in job_result


def test_known_and_unknown_flags_reach_parse_known_args(tmp_path: Path) -> None:
    step = make_step(tmp_path, ARGPARSE, program_arguments=(
        "--model", "m", "--error_threshold", "5", "--resource_monitor_interva", "20"))
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 3),
                                loader=LOADER)
    assert summary.status == "Completed", summary.reason
    assert _rows(summary) == ["m", "m", "m"]


THRESHOLD = """
    import os, time
    def init():
        pass
    def run(mini_batch):
        time.sleep(0.02)
        name = os.path.basename(mini_batch[0])
        if int(name[1:5]) % 2:
            raise RuntimeError("odd")
        return mini_batch
    def shutdown():
        open(os.path.join(os.environ["AZUREML_BI_OUTPUT_PATH"], "shutdown-" + str(os.getpid())), "w").close()
"""


@pytest.mark.parametrize(("fields", "prs", "name", "limit"), [
    ({"mini_batch_error_threshold": 1}, None, "mini_batch_error_threshold", 1),
    ({"error_threshold": 2}, None, "error_threshold", 2),
    ({}, PrsOptions(allowed_failed_percent=30), "allowed_failed_percent", 30),
])
def test_thresholds_stop_the_step(tmp_path: Path, fields, prs, name, limit) -> None:  # type: ignore[no-untyped-def]
    step = make_step(tmp_path, THRESHOLD, max_retries=0, prs=prs, **fields)
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 40),
                                loader=LOADER)
    assert summary.status == "Failed"
    assert summary.breach is not None and summary.breach.name == name
    assert summary.breach.limit == limit and summary.breach.actual > limit
    assert name in (summary.reason or "")
    if name != "allowed_failed_percent":  # stopped promptly, long before the 40 mini-batches
        assert summary.mini_batches_failed + summary.mini_batches_succeeded < 40
    out = Path(step.outputs["out"].path)
    assert len(list(out.glob("shutdown-*"))) == 2  # shutdown() still ran on both workers
    job_result = (Path(step.logs_dir) / "job_result.txt").read_text()
    assert job_result.startswith("Failed") and name in job_result.splitlines()[0]


@pytest.mark.parametrize(("fields", "prs"), [
    ({"mini_batch_error_threshold": 2}, None),
    ({"error_threshold": 2}, None),
    ({}, PrsOptions(allowed_failed_percent=50)),
])
def test_thresholds_not_exceeded_complete(tmp_path: Path, fields, prs) -> None:  # type: ignore[no-untyped-def]
    step = make_step(tmp_path, THRESHOLD, max_retries=0, prs=prs, **fields)
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 4),
                                loader=LOADER)
    assert summary.status == "Completed", summary.reason  # 2 of 4 failed: equal, not greater
    assert summary.breach is None and summary.mini_batches_failed == 2


SLOW = """
    import os, time
    def init():
        pass
    def run(mini_batch):
        time.sleep(0.05)
        return [os.path.basename(p) for p in mini_batch]
"""


class _CancelAfter(Recorder):
    def __init__(self, event: threading.Event, after: int):
        super().__init__()
        self.event, self.after = event, after

    def attempt_finished(self, record) -> None:  # type: ignore[no-untyped-def]
        super().attempt_finished(record)
        if len(self.attempts) == self.after:
            self.event.set()


def test_cancel_keeps_finished_mini_batches(tmp_path: Path) -> None:
    step = make_step(tmp_path, SLOW)
    cancel = threading.Event()
    recorder = _CancelAfter(cancel, 4)
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 200),
                                loader=LOADER, observers=[recorder], cancel=cancel)
    assert summary.status == "Canceled"
    done = summary.mini_batches_succeeded
    assert 4 <= done < 20
    assert _rows(summary) == [f"f{i:04d}.txt" for i in range(200)
                              if f"mb-{i:04d}" in {a.mini_batch_id for a in recorder.attempts}]
    assert len(_rows(summary)) == done


def test_resume_reruns_only_what_did_not_succeed(tmp_path: Path) -> None:
    batches = file_mini_batches(tmp_path / "d", 6)
    step = make_step(tmp_path, THRESHOLD, max_retries=0)
    first = run_parallel_step(step, mini_batches=batches, loader=LOADER)
    assert (first.mini_batches_succeeded, first.mini_batches_failed) == (3, 3)
    assert [Path(row).name for row in _rows(first)] == ["f0000.txt", "f0002.txt", "f0004.txt"]
    (Path(step.code_dir) / "score.py").write_text(
        "import os\ndef init(): pass\ndef run(mb): return [os.path.basename(mb[0]) + '-fixed']\n")
    recorder = Recorder()
    second = run_parallel_step(step, mini_batches=batches, loader=LOADER, observers=[recorder],
                               resume=True)
    assert second.status == "Completed"
    assert sorted(a.mini_batch_id for a in recorder.attempts) == ["mb-0001", "mb-0003", "mb-0005"]
    assert (second.mini_batches_succeeded, second.mini_batches_failed) == (6, 0)
    assert [Path(row).name for row in _rows(second)] == [
        "f0000.txt", "f0001.txt-fixed", "f0002.txt", "f0003.txt-fixed", "f0004.txt",
        "f0005.txt-fixed"]
    third = run_parallel_step(step, mini_batches=batches, loader=LOADER)  # no resume: all again
    assert _rows(third) == [f"f{i:04d}.txt-fixed" for i in range(6)]


def test_init_that_hangs_is_bounded_by_first_task_creation_timeout(tmp_path: Path) -> None:
    step = make_step(tmp_path, "import time\ndef init(): time.sleep(60)\ndef run(mb): return mb\n",
                     prs=PrsOptions(first_task_creation_timeout=1), timeout=1)
    started = time.monotonic()
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 2),
                                loader=LOADER)
    assert time.monotonic() - started < 20
    assert summary.status == "Failed"
    assert "first_task_creation_timeout = 1" in (summary.reason or "")


DRIVER = """
import sys
sys.path[:0] = {paths!r}
from pathlib import Path
from mlpipe.runtime import run_parallel_step
from tests.runtime.support import LOADER, file_mini_batches, make_step
from tests.runtime.test_failures import SLOW
tmp = Path({tmp!r})
step = make_step(tmp, SLOW)
run_parallel_step(step, mini_batches=file_mini_batches(tmp / "d", 40), loader=LOADER)
"""


def test_killed_driver_then_resume_writes_every_row_once(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import REPO

    code = DRIVER.format(paths=[str(REPO)], tmp=str(tmp_path))
    driver = subprocess.Popen([sys.executable, "-c", code], cwd=REPO)
    state = tmp_path / "run" / "step" / ".mlpipe"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if finished_count(state) >= 6:
            break
        time.sleep(0.05)
    driver.kill()  # the driver dies mid-run, its workers with it
    driver.wait()
    done_before = finished_count(state)
    assert 6 <= done_before < 40
    step = make_step(tmp_path, SLOW)
    recorder = Recorder()
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 40),
                                loader=LOADER, observers=[recorder], resume=True)
    assert summary.status == "Completed", summary.reason
    assert _rows(summary) == [f"f{i:04d}.txt" for i in range(40)]
    assert len(recorder.attempts) <= 40 - done_before + 1  # a torn last journal line re-runs
    assert summary.mini_batches_succeeded == 40
