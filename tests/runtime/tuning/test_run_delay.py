"""Time waiting for a core, measured: the scheduler's run-delay read per thread and process,
and a real step whose workers share one core with another process: its profile reads them
as CPU-bound (as on a quiet machine, where the clock alone would say half), records each
worker's start-up split into CPU and waiting, and gives the wall time without that load."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mlpipe.runtime.step_logs import StepLogs
from mlpipe.runtime.tuning.profile import ProfileTally, read_profile
from mlpipe.runtime.tuning.schedstat import process_age, process_usage, thread_delay
from tests.jobs.support import run_here

pytestmark = pytest.mark.skipif(not Path("/proc/thread-self/schedstat").exists(),
                                reason="the scheduler's run-delay is Linux's")


@pytest.fixture
def one_core() -> Iterator[int]:
    """This process (and what it starts) on one core, shared with a spinning process."""
    before = os.sched_getaffinity(0)
    core = min(before)
    os.sched_setaffinity(0, {core})
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield core
    finally:
        spinner.kill()
        spinner.wait()
        os.sched_setaffinity(0, before)


def spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_a_thread_that_ended_between_two_readings_does_not_take_back_its_time() -> None:
    # The driver's input-counting thread works, then ends mid-run: what the process used
    # between two readings is what its threads used since, never the totals' difference
    # (which lost everything the ended thread had used, and went below zero).
    spun, go = threading.Event(), threading.Event()

    def work() -> None:
        end = time.thread_time() + 0.2
        while time.thread_time() < end:
            pass
        spun.set()
        go.wait(30)

    tally = ProfileTally()
    tally.run_started(time.time())
    helper = threading.Thread(target=work)
    helper.start()
    assert spun.wait(30)
    before = process_usage()
    go.set()
    helper.join()
    end = time.thread_time() + 0.05
    while time.thread_time() < end:
        pass
    after = process_usage()
    assert before is not None and after is not None
    assert after.cpu - before.cpu < 0  # the totals went back by the ended thread's 0.2 s
    assert after.since(before).cpu >= 0.045
    tally.run_ended()
    assert tally.driver[0] >= 0.045 and tally.driver[1] >= 0  # the helper's part is lost


def test_the_readers_count_the_time_a_thread_waits_for_a_core(one_core: int) -> None:
    delay, usage = thread_delay(), process_usage()
    assert delay is not None and usage is not None
    began = time.perf_counter()
    spin(0.3)
    elapsed = time.perf_counter() - began
    waited = thread_delay() - delay  # type: ignore[operator]
    assert waited > 0.25 * elapsed  # the spinner had the core about half the time
    after = process_usage()
    assert after is not None and after.cpu - usage.cpu >= 0.29
    assert after.delay - usage.delay >= waited * 0.9
    age = process_age(os.getpid())
    assert age is not None and age > elapsed


def test_a_step_on_a_busy_core_is_profiled_as_on_a_quiet_one(tmp_path: Path,
                                                              one_core: int) -> None:
    """One worker spinning 0.1 s per item, sharing its core with another process: half its
    time is run-delay; its CPU-bound share is 1 (CPU / (elapsed - run-delay)); its quiet
    wall time is about half the measured one."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "score.py").write_text(
        "import time\n"
        "def init():\n    time.sleep(0.3)\n"
        "def run(mini_batch):\n"
        "    for _ in mini_batch:\n"
        "        end = time.process_time() + 0.1\n"
        "        while time.process_time() < end:\n            pass\n"
        "    return list(mini_batch)\n")
    data = tmp_path / "data"
    data.mkdir()
    for n in range(12):
        (data / f"{n}.txt").write_text("x")
    yaml = tmp_path / "pipeline.yml"
    yaml.write_text(
        "type: pipeline\njobs:\n  score:\n    type: parallel\n    inputs:\n      data:\n"
        "        type: uri_folder\n        path: ./data\n    input_data: ${{inputs.data}}\n"
        "    mini_batch_size: \"2\"\n    max_concurrency_per_instance: 1\n"
        "    task:\n      type: run_function\n      code: ./src\n      entry_script: score.py\n")
    ran = run_here(yaml, tmp_path / "runs", "busy")
    assert ran.proc.returncode == 0
    profile = read_profile(StepLogs.of(ran.record["steps"]["score"]["logs_dir"]))
    assert profile is not None
    tally = profile.tally
    assert set(tally.per_worker) == {"0/process000"}
    assert tally.cpu / tally.elapsed < 0.75  # the clock alone: much of it looks like waiting
    assert profile.run_delay_share > 0.3
    assert profile.cpu_share > 0.9  # the scheduler's figures: CPU-bound
    assert profile.contention > 0.3  # and the other process is what kept it waiting
    at, ready, cpu, delay = tally.startup["0/process000"]
    assert 0 <= at < ready and cpu > 0.02 and delay >= 0
    assert ready - at - cpu - delay >= 0.25  # init() slept 0.3 s: waiting, not CPU
    assert profile.quiet_wall < 0.8 * profile.wall
    assert profile.quiet_wall > 1.2  # 12 x 0.1 s of CPU stays
    assert tally.machine_load and tally.driver
