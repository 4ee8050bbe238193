"""Resource sampling, the progress overview file and readme.txt."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from pathlib import Path

from mlpipe.runtime.counters import StepCounters
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.reports.observer import StepReports
from mlpipe.runtime.reports.overview import ProgressOverview
from mlpipe.runtime.reports.perf import NODE_COLUMNS, PROCESS_COLUMNS
from tests.runtime.reports.support import T0, W0, attempt, make_step, summary


def read_csv(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def wait_for_rows(path: Path, rows: int, timeout: float = 60.0) -> None:
    """Wait (polling) until the CSV ``path`` has ``rows`` lines, header included."""
    deadline = time.monotonic() + timeout
    while not (path.is_file() and len(read_csv(path)) >= rows):
        assert time.monotonic() < deadline, f"{path} never reached {rows} rows"
        time.sleep(0.1)


def test_interval_zero_writes_no_perf_files(tmp_path: Path) -> None:
    step = make_step(tmp_path, interval=0)
    reports = StepReports(step)
    reports.step_started(step, [W0], T0)
    reports.step_finished(summary())
    logs = Path(step.logs_dir)
    assert not (logs / "sys/perf").exists()
    assert "perf" not in (logs / "readme.txt").read_text()
    assert "Resource monitor disabled" in (logs / "sys/master_role.txt").read_text()


def test_perf_samples_at_start_every_interval_and_at_end(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        step = make_step(tmp_path, interval=1, instance_count=2)
        workers = [WorkerInfo(0, "process000", os.getpid()), WorkerInfo(1, "process000", child.pid)]
        reports = StepReports(step)
        reports.step_started(step, workers, T0)
        node_csv = Path(step.logs_dir) / "sys/perf/0/node_resource_usage.csv"
        wait_for_rows(node_csv, 1 + 2)  # the start row and at least one tick
        reports.worker_event(workers[1], "died", "killed")
        reports.step_finished(summary())
    finally:
        child.kill()
        child.wait()
    perf = Path(step.logs_dir) / "sys/perf"
    assert sorted(p.relative_to(perf).as_posix() for p in perf.rglob("*.csv")) == [
        "0/node_resource_usage.csv", "0/processes_resource_usage.csv",
        "1/node_resource_usage.csv", "1/processes_resource_usage.csv"]
    node = read_csv(perf / "0/node_resource_usage.csv")
    assert tuple(node[0]) == NODE_COLUMNS
    assert node[0][-2:] == ["'#' of TCP Connections", "'#' of UDP Connections"]
    ticks = len(node) - 1 - 2  # header, start and end rows aside (a busy machine may tick late)
    assert ticks >= 1
    assert float(node[1][2]) > 0 and 0 <= float(node[1][5]) <= 100
    own = read_csv(perf / "0/processes_resource_usage.csv")
    assert tuple(own[0]) == PROCESS_COLUMNS
    assert [row[1:3] for row in own[1:]] == [["0/process000", str(os.getpid())]] * (2 + ticks)
    assert float(own[1][4]) > 1  # RSS in MB
    other = read_csv(perf / "1/processes_resource_usage.csv")
    sampled = [row[1:3] for row in other[1:]]  # died before the end: no end row
    assert 2 <= len(sampled) <= 1 + ticks and set(map(tuple, sampled)) == {
        ("1/process000", str(child.pid))}


def test_overview_rewrites_are_throttled_and_atomic(tmp_path: Path) -> None:
    counters = StepCounters(scheduled=4, listing_done=True)
    overview = ProgressOverview(tmp_path, "score", workers=2, min_interval=60)
    path = overview.write(counters)
    assert "Mini-batches processed: 0 (succeeded 0, failed 0); remaining: 4" in path.read_text()
    counters.add(attempt(0))
    overview.maybe_write(counters)  # within the minute: skipped
    assert "Mini-batches processed: 0" in path.read_text()
    overview.min_interval = 0
    overview.maybe_write(counters)
    text = path.read_text()
    assert "Mini-batches processed: 1 (succeeded 1, failed 0); remaining: 3" in text
    assert "Items processed: 2 (succeeded 2, failed 0)" in text
    assert "Status: Running" in text and "ETA: " in text
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no .tmp left behind


def test_readme_describes_worker_files_only_when_they_exist(tmp_path: Path) -> None:
    step = make_step(tmp_path)
    reports = StepReports(step)
    reports.step_started(step, [W0], T0)
    logs = Path(step.logs_dir)
    for rel in ("user/stdout/0/process000.stdout.txt", "user/entry_script_log/0/process000.log.txt",
                "user/odd.bin"):
        (logs / rel).parent.mkdir(parents=True, exist_ok=True)
        (logs / rel).write_text("x")
    reports.attempt_finished(attempt(0))
    reports.step_finished(summary())
    readme = (logs / "readme.txt").read_text()
    assert "user/stdout/0/process000.stdout.txt\n    What the entry script printed to stdout" in readme
    assert "user/entry_script_log/0/process000.log.txt\n    The entry script's own log" in readme
    assert "Other files:\nuser/odd.bin" in readme
    for absent in ("stderr", "user/error", "perf"):
        assert absent not in readme
    body = readme.split("\n\n", 1)[1].splitlines()
    listed = [line for line in body if line and not line.startswith((" ", "../"))
              and line != "Other files:"]
    assert len(listed) == 12  # runs.json too
    assert all((logs / name).is_file() for name in listed), listed
