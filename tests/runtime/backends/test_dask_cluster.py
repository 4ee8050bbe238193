"""The dask backend on a cluster of separate processes (``dask scheduler`` / ``dask worker``
with Nannies) sharing no process tree with the driver: as the user's cluster
(``MLPIPE_DASK_SCHEDULER``: mlpipe restarts none of its workers) and as one mlpipe started
(the job's cluster: a run() past its timeout is stopped by restarting its worker).
Timeouts, dying workers, init() failures."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

# pytest's hypothesis plugin imports (and so ast-parses) hypothesis at session end, when
# Dask's threads may parse too: CPython 3.11's AST recursion counter is shared by threads
# (python/cpython#106905) and the session then dies with a SystemError. Import it now.
with contextlib.suppress(ImportError):
    import hypothesis  # noqa: F401

from mlpipe.frozen import freeze
from mlpipe.plan import PrsOptions
from mlpipe.runtime import run_parallel_step
from mlpipe.runtime.backends.dask import SCHEDULER_ENV, DaskBackend
from mlpipe.runtime.backends.dask_cluster import JobCluster
from tests.runtime.backends.support import dask_processes, wait_until_no_worker_hosts_mlpipe
from tests.runtime.support import LOADER, SLOW_LOADER, Recorder, file_mini_batches, make_step

pytestmark = pytest.mark.slow  # Dask clusters of real processes: CI's second stage

DASK_WORKERS = 2


@pytest.fixture(scope="module")
def scheduler_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A scheduler and two single-threaded Nanny workers, separate processes."""
    with dask_processes(tmp_path_factory.mktemp("dask-cluster")) as cluster:
        cluster.add_workers(DASK_WORKERS, nanny=True)
        yield cluster.address


@pytest.fixture
def on_cluster(scheduler_address: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The address in MLPIPE_DASK_SCHEDULER, once the last step's restarted workers are back."""
    from distributed import Client

    with Client(scheduler_address, timeout=30, set_as_default=False) as client:
        client.wait_for_workers(DASK_WORKERS, timeout=60)
    monkeypatch.setenv(SCHEDULER_ENV, scheduler_address)
    return scheduler_address


def _marker_script(body: str, index: int = 2) -> str:
    """run() does ``body`` the first time it sees file ``index`` (a marker file remembers it)."""
    return f"""
import os, time
from pathlib import Path

def run(mini_batch):
    marker = Path(os.environ["AZUREML_BI_OUTPUT_PATH"]) / "marker"
    if any(p.endswith("f{index:04d}.txt") for p in mini_batch) and not marker.exists():
        marker.write_text(str(os.getpid()))
        {body}
    return [Path(p).name for p in mini_batch]
"""


def test_run_past_its_timeout_on_mlpipes_own_cluster_is_stopped_and_retried_on_a_new_process(
        tmp_path: Path, on_cluster: str) -> None:
    step = make_step(tmp_path, _marker_script("time.sleep(120)"), workers=1, timeout=2)
    recorder = Recorder()
    started = time.monotonic()
    owned = DaskBackend(cluster=JobCluster(on_cluster, owned=True))  # as the job's LocalCluster
    summary = run_parallel_step(step, backend=owned, observers=[recorder], loader=LOADER,
                                mini_batches=file_mini_batches(tmp_path / "data", 5))
    assert time.monotonic() - started < 60  # the sleep was cut short
    assert summary.status == "Completed", summary.reason
    attempts = [(a.mini_batch_id, a.picked_count, a.status) for a in recorder.attempts]
    assert ("mb-0002", 1, "Timeout") in attempts and ("mb-0002", 2, "Succeeded") in attempts
    timed_out = next(a for a in recorder.attempts if a.status == "Timeout")
    assert timed_out.error_category == "Timeout" and timed_out.elapsed_seconds >= 2
    assert timed_out.run_method_seconds >= 1.5  # the phase file said run() had started
    assert "its worker process was stopped and replaced" in (timed_out.error_message or "")
    assert sorted(a for a in attempts if a[0] != "mb-0002") == \
        [(f"mb-{i:04d}", 1, "Succeeded") for i in (0, 1, 3, 4)]
    slept_in = int((Path(step.outputs["out"].folder) / "marker").read_text())
    retry = next(a for a in recorder.attempts if a.mini_batch_id == "mb-0002" and a.picked_count == 2)
    assert retry.worker.pid != slept_in  # the sleeping process was killed, a new one ran the retry
    died = recorder.events("died")
    assert len(died) == 1 and "stopped by mlpipe" in died[0][2]
    assert [e[0].process for e in recorder.events("replaced")] == ["process000"]
    assert Path(summary.append_row_file).read_text().splitlines() == \
        [f"f{i:04d}.txt" for i in range(5)]


@pytest.mark.slow
def test_run_past_its_timeout_on_the_users_cluster_is_left_to_finish_there(
        tmp_path: Path, on_cluster: str) -> None:
    release = tmp_path / "release"
    body = ("deadline = time.monotonic() + 60\n"
            f"        while not Path({str(release)!r}).exists() and time.monotonic() < deadline:\n"
            "            time.sleep(0.05)")
    step = make_step(tmp_path, _marker_script(body), workers=1, timeout=2)
    recorder = Recorder()
    summary = run_parallel_step(step, backend="dask", observers=[recorder], loader=LOADER,
                                mini_batches=file_mini_batches(tmp_path / "data", 5))
    assert summary.status == "Completed", summary.reason
    assert recorder.picked("mb-0002") == [1, 2]
    timed_out = next(a for a in recorder.attempts if a.status == "Timeout")
    assert "mlpipe left run() to finish on its Dask worker" in (timed_out.error_message or "")
    slept_in = int((Path(step.outputs["out"].folder) / "marker").read_text())
    retry = next(a for a in recorder.attempts if a.mini_batch_id == "mb-0002" and a.picked_count == 2)
    assert retry.worker.pid != slept_in  # another Dask worker ran the retry ...
    assert psutil.pid_exists(slept_in)  # ... and the one still in run() was not touched
    release.touch()
    wait_until_no_worker_hosts_mlpipe(on_cluster)  # its stop task ran once run() returned
    assert Path(summary.append_row_file).read_text().splitlines() == \
        [f"f{i:04d}.txt" for i in range(5)]
    died = recorder.events("died")
    assert len(died) == 1 and "given up by mlpipe" in died[0][2]


def test_slow_loading_is_a_task_overhead_timeout(tmp_path: Path, on_cluster: str) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    env = {"MARKS": str(marks), "SLOW_LOAD": "f0001.txt", "LOAD_SECONDS": "120"}
    step = make_step(tmp_path, "def run(mini_batch):\n    return mini_batch\n", workers=1,
                     timeout=30, prs=PrsOptions(task_overhead_timeout=1),
                     environment_variables=freeze(env))
    recorder = Recorder()
    owned = DaskBackend(cluster=JobCluster(on_cluster, owned=True))  # a loader past its timeout
    summary = run_parallel_step(step, backend=owned, observers=[recorder], loader=SLOW_LOADER,
                                mini_batches=file_mini_batches(tmp_path / "data", 3))
    assert summary.status == "Completed", summary.reason
    lost = next(a for a in recorder.attempts if a.mini_batch_id == "mb-0001")
    assert (lost.status, lost.error_category) == ("Timeout", "TaskOverheadTimeout")
    assert "--task_overhead_timeout = 1" in (lost.error_message or "") and lost.elapsed_seconds >= 1
    assert recorder.picked("mb-0001") == [1, 2]


def test_worker_that_exits_costs_only_its_mini_batch_an_attempt(
        tmp_path: Path, on_cluster: str) -> None:
    step = make_step(tmp_path, _marker_script("os._exit(1)"), workers=2, timeout=30)
    recorder = Recorder()
    summary = run_parallel_step(step, backend="dask", observers=[recorder], loader=LOADER,
                                mini_batches=file_mini_batches(tmp_path / "data", 12))
    assert summary.status == "Completed", summary.reason
    assert recorder.picked("mb-0002") == [1, 2], (Path(step.logs_dir) / "sys/master_role.txt").read_text()
    first = next(a for a in recorder.attempts if a.mini_batch_id == "mb-0002")
    assert (first.status, first.error_category) == ("ProcessDied", "ProcessDied")
    assert "died or left the Dask cluster" in (first.error_message or "")
    for i in range(12):
        if i != 2:
            assert recorder.picked(f"mb-{i:04d}") == [1]  # queued behind it: returned, not charged
    assert (summary.mini_batches_succeeded, summary.items_succeeded) == (12, 12)
    assert Path(summary.append_row_file).read_text().splitlines() == \
        [f"f{i:04d}.txt" for i in range(12)]
    assert len(recorder.events("died")) == 1


def test_init_failure_fails_the_step_with_its_traceback(tmp_path: Path, on_cluster: str) -> None:
    script = """
def init():
    raise ValueError("model file not found")

def run(mini_batch):
    return mini_batch
"""
    step = make_step(tmp_path, script, workers=2)
    recorder = Recorder()
    summary = run_parallel_step(step, backend="dask", observers=[recorder], loader=LOADER,
                                mini_batches=file_mini_batches(tmp_path / "data", 3))
    assert summary.status == "Failed"
    assert "init() failed" in summary.reason
    assert "ValueError: model file not found" in summary.reason
    assert "Traceback (most recent call last)" in summary.reason and "score.py" in summary.reason
    assert len(recorder.events("init_failed")) == 2
    assert recorder.attempts == []


def test_more_mlpipe_workers_than_dask_workers_run_on_those_there_are(
        tmp_path: Path, on_cluster: str) -> None:
    step = make_step(tmp_path, "def run(mini_batch):\n    return mini_batch\n",
                     workers=DASK_WORKERS + 1)
    recorder = Recorder()
    backend = DaskBackend(wait_for_workers=1)  # the address comes from MLPIPE_DASK_SCHEDULER
    summary = run_parallel_step(step, backend=backend, observers=[recorder], loader=LOADER,
                                mini_batches=file_mini_batches(tmp_path / "data", 4))
    assert summary.status == "Completed", summary.reason
    failed = recorder.events("start_failed")  # init() never ran there
    assert [e[0].process for e in failed] == [f"process{DASK_WORKERS:03d}"]
    assert "each mlpipe worker needs its own" in failed[0][2]
    assert {a.worker.process for a in recorder.attempts} <= {"process000", "process001"}


def test_two_steps_at_once_never_share_a_dask_worker(tmp_path: Path, on_cluster: str) -> None:
    import threading

    script = """
import os, time

def run(mini_batch):
    time.sleep(0.05)
    return [str(os.getpid())] * len(mini_batch)
"""
    steps = [make_step(tmp_path / name, script, workers=1, name=name) for name in ("a", "b")]
    summaries: dict[str, object] = {}

    def run(step) -> None:  # type: ignore[no-untyped-def]
        summaries[step.name] = run_parallel_step(
            step, backend="dask", loader=LOADER,
            mini_batches=file_mini_batches(tmp_path / step.name / "data", 6))

    threads = [threading.Thread(target=run, args=(step,)) for step in steps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    pids = []
    for name in ("a", "b"):
        summary = summaries[name]
        assert summary.status == "Completed", summary.reason  # type: ignore[attr-defined]
        pids.append(set(Path(summary.append_row_file).read_text().split()))  # type: ignore[attr-defined]
    assert len(pids[0]) == 1 and len(pids[1]) == 1 and pids[0] != pids[1]


@pytest.mark.slow
def test_a_timeout_inside_a_bundle_charges_that_mini_batch_only(
        tmp_path: Path, on_cluster: str) -> None:
    step = make_step(tmp_path, _marker_script("time.sleep(120)", 150), workers=2, timeout=2)
    recorder = Recorder()
    owned = DaskBackend(cluster=JobCluster(on_cluster, owned=True))
    summary = run_parallel_step(step, backend=owned, observers=[recorder], loader=LOADER,
                                mini_batches=file_mini_batches(tmp_path / "data", 300))
    assert summary.status == "Completed", summary.reason
    assert owned.bundle_size > 1  # the no-ops went in bundles
    timed_out = [a for a in recorder.attempts if a.status != "Succeeded"]
    assert [(a.mini_batch_id, a.picked_count, a.status) for a in timed_out] == \
        [("mb-0150", 1, "Timeout")]
    assert timed_out[0].run_method_seconds >= 1.5  # its own start, from the marker and phases
    assert recorder.picked("mb-0150") == [1, 2]
    assert all(recorder.picked(f"mb-{i:04d}") == [1] for i in range(300) if i != 150)
    assert Path(summary.append_row_file).read_text().splitlines() == \
        [f"f{i:04d}.txt" for i in range(300)]


@pytest.mark.slow
def test_a_cancel_stops_a_bundle_at_its_current_mini_batch(
        tmp_path: Path, on_cluster: str) -> None:
    go = tmp_path / "go"  # never made: f0150's run() returns only when stopped
    body = (f"while not Path({str(go)!r}).exists():\n"
            "            time.sleep(0.02)")
    step = make_step(tmp_path, _marker_script(body, 150), workers=1, timeout=60)
    recorder = Recorder()
    cancel = threading.Event()
    owned = DaskBackend(cluster=JobCluster(on_cluster, owned=True))
    marker = Path(step.outputs["out"].folder) / "marker"

    def cancel_when_blocked() -> None:  # cancel once f0150 runs (it never returns on its own)
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        cancel.set()

    helper = threading.Thread(target=cancel_when_blocked, daemon=True)
    helper.start()
    summary = run_parallel_step(step, backend=owned, observers=[recorder], loader=LOADER,
                                cancel=cancel,
                                mini_batches=file_mini_batches(tmp_path / "data", 400))
    helper.join(timeout=10)
    assert summary.status == "Canceled", summary.reason
    assert owned.bundle_size > 1
    # f0150's run() was stopped, not awaited (no attempt), and the rest of its bundle never ran
    assert sorted(a.mini_batch_id for a in recorder.attempts) == \
        [f"mb-{i:04d}" for i in range(150)]
    assert Path(summary.append_row_file).read_text().splitlines() == \
        [f"f{i:04d}.txt" for i in range(150)]
