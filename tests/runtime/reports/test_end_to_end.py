"""A real parallel step (run() raising, returning too few items, overrunning its timeout,
killing its worker, printing) and its logs tree."""

from __future__ import annotations

import csv
import io
import json
import re
import threading
from pathlib import Path

import pytest

from mlpipe.frozen import freeze
from mlpipe.plan import PlanInput, PrsOptions
from mlpipe.runtime import run_parallel_step
from mlpipe.runtime.records import StepObserver
from mlpipe.runtime.reports.job_report import PROCESSED_COLUMNS
from mlpipe.runtime.reports.perf import NODE_COLUMNS
from mlpipe.runtime.reports.progress_bar import ProgressDisplay
from mlpipe.sizes import parse_mini_batch_size
from tests.runtime.support import LOADER, file_mini_batches, make_step

SCRIPT = """
    import os, time
    from pathlib import Path

    def init():
        pass

    def run(mini_batch):
        name = os.path.basename(mini_batch[0])
        print("scoring", name, flush=True)
        if name == "f0003.txt":
            raise ValueError("bad file " + name)
        marker = Path(os.environ["MARKERS"]) / name
        if name in ("f0005.txt", "f0006.txt", "f0007.txt") and not marker.exists():
            marker.write_text("failed once")  # then a success on the retry
            if name == "f0005.txt":
                return []  # one failed item
            if name == "f0006.txt":
                time.sleep(60)  # killed at retry_settings.timeout
            os._exit(1)  # the worker dies
        return [name]
"""
LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\|(DEBUG|INFO|WARNING|ERROR)\|\d+\|\d+\|")


@pytest.mark.timeout(120)
def test_real_step_writes_the_whole_logs_tree(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    step = make_step(tmp_path, SCRIPT, timeout=2, max_retries=2,
                     prs=PrsOptions(resource_monitor_interval=1),
                     environment_variables=freeze({"MARKERS": str(markers)}))
    progress_out = io.StringIO()
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "data", 8),
                                loader=LOADER,
                                observers=[ProgressDisplay(step, progress_out, interval=3600)])
    assert summary.status == "Completed", summary.reason
    logs = Path(step.logs_dir)
    files = {p.relative_to(logs).as_posix() for p in logs.rglob("*") if p.is_file()}
    for expected in ("job_result.txt", "readme.txt", "sys/master_role.txt",
                     "sys/job_report/processed_mini-batches.csv",
                     "sys/job_report/process_summary.csv", "sys/job_report/node_summary.csv",
                     "sys/perf/0/node_resource_usage.csv",
                     "sys/perf/0/processes_resource_usage.csv", "sys/task_stream.html",
                     "user/error.txt"):
        assert expected in files
    assert any(re.fullmatch(r"job_progress_overview\.\d{10}\.txt", f) for f in files)
    assert any(re.fullmatch(r"user/stdout/0/process00[01]\.stdout\.txt", f) for f in files)

    result = (logs / "job_result.txt").read_text().splitlines()
    assert result[0] == "Succeeded"
    assert "Mini-batches: 8 total, 7 succeeded, 1 failed, 0 not processed" in result
    assert "Attempts: 13 (5 retried, 1 timed out)" in result
    assert "Items: 8 total, 7 succeeded, 1 failed, 0 not processed" in result
    # grouped by signature: attempts and mini-batches named
    assert any(re.search(r"bad file f<n>\.txt: 1 mini-batch failed, 3 failed attempts$", line)
               for line in result), result
    died = [line for line in result if line.startswith("  [ProcessDied] ")]
    assert died == ["  [ProcessDied] worker <path> (pid <n>) exited unexpectedly with code <n>: "
                    "1 failed attempt in 1 mini-batch (0 failed with it in the end)"], died
    assert any(line.startswith("  [Timeout] run() did not finish") and "1 failed attempt" in line
               for line in result)

    with open(logs / "sys/job_report/processed_mini-batches.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == PROCESSED_COLUMNS
    assert len(rows) == 13
    assert [r["Picked Count"] for r in rows if r["Mini-batch Id"] == "mb-0003"] == ["1", "2", "3"]
    assert [(r["Status"], r["Failed"]) for r in rows if r["Mini-batch Id"] == "mb-0005"] == [
        ("Failed", "1"), ("Succeeded", "0")]
    assert [r["Status"] for r in rows if r["Mini-batch Id"] == "mb-0006"] == ["Timeout", "Succeeded"]
    assert [r["Status"] for r in rows if r["Mini-batch Id"] == "mb-0007"] == [
        "ProcessDied", "Succeeded"]
    assert {r["Process"] for r in rows} <= {"0/process000", "0/process001"}

    tracebacks = "".join(p.read_text() for p in (logs / "user/error/0").iterdir())
    assert tracebacks.count("ValueError: bad file f0003.txt") >= 3 and "score.py" in tracebacks
    assert "mini-batch mb-0005 attempt 1" in tracebacks
    assert "mini-batch mb-0006 attempt 1" in tracebacks and "[Timeout]" in tracebacks
    assert "mini-batch mb-0007 attempt 1" in tracebacks and "[ProcessDied]" in tracebacks

    with open(logs / "sys/job_report/process_summary.csv", newline="") as handle:
        processes = list(csv.DictReader(handle))
    assert sorted(p["Process"] for p in processes) == ["process000", "process001"]
    assert sum(int(p["Mini-batches"]) for p in processes) == 13
    assert all(p["Pid"].isdigit() for p in processes)

    with open(logs / "sys/perf/0/node_resource_usage.csv", newline="") as handle:
        node = list(csv.reader(handle))
    assert tuple(node[0]) == NODE_COLUMNS and len(node) >= 3
    with open(logs / "sys/perf/0/processes_resource_usage.csv", newline="") as handle:
        worker_rows = list(csv.DictReader(handle))
    worker_pids = {p["Pid"] for p in processes}
    sampled = {r["Pid"] for r in worker_rows}
    assert worker_pids <= sampled  # the replacements, sampled when they started

    master = (logs / "sys/master_role.txt").read_text().splitlines()
    assert "Start scheduling." in [line.split("|")[4] for line in master if LINE.match(line)]
    assert all(LINE.match(line) for line in master if line[:2] == "20")

    readme = (logs / "readme.txt").read_text()
    listed = [line for line in readme.split("\n\n", 1)[1].splitlines()
              if line and not line.startswith((" ", "...")) and line != "Other files:"]
    assert set(listed) <= files | {"readme.txt", "../../report.html"}
    assert "What the entry script printed to stdout" in readme
    assert "Other files" not in readme

    progress = progress_out.getvalue().splitlines()
    assert progress[0] == "[mlpipe] step: started with 2 worker process(es)"
    assert re.fullmatch(r"\[mlpipe\] step Completed in \d+\.\ds: 7 of 8 mini-batches succeeded, 1 failed; "
                        r"7 of 8 items succeeded, 1 failed", progress[-1]), progress[-1]


FAILING = """
    import os

    def init():
        pass

    def run(mini_batch):
        if mini_batch[0].endswith("f0001.txt"):
            raise RuntimeError("cannot score " + os.path.basename(mini_batch[0]))
        return mini_batch
"""


@pytest.mark.timeout(120)
def test_threshold_stops_a_real_step_and_job_result_says_why(tmp_path: Path) -> None:
    step = make_step(tmp_path, FAILING, max_retries=0, mini_batch_error_threshold=0,
                     prs=PrsOptions(resource_monitor_interval=0))
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "data", 6),
                                loader=LOADER)
    assert summary.status == "Failed"
    logs = Path(step.logs_dir)
    result = (logs / "job_result.txt").read_text().splitlines()
    assert result[0] == "Failed: 1 mini-batch failed, more than mini_batch_error_threshold = 0"
    assert ("Threshold exceeded: The number of failed mini-batches (1) exceeded "
            "mini_batch_error_threshold (0).") in result
    assert "  mini_batch_error_threshold: 0; failed mini-batches: 1" in result
    assert ("  [UserError] RuntimeError: cannot score f<n>.txt: 1 mini-batch failed, "
            "1 failed attempt") in result
    assert not (logs / "sys/perf").exists()
    error_txt = (logs / "user/error.txt").read_text()
    assert "[UserError] RuntimeError: cannot score f<n>.txt\n  1 mini-batch failed, 1 failed " \
           "attempt\n  e.g. RuntimeError: cannot score f0001.txt" in error_txt
    readme = (logs / "readme.txt").read_text()
    assert "user/error.txt" in readme and "perf" not in readme


class CancelAfterFirst(StepObserver):
    """An observer that cancels the step when the first attempt finishes (like Ctrl+C)."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def step_started(self, *args) -> None: ...
    def mini_batches_scheduled(self, *args) -> None: ...
    def worker_event(self, *args) -> None: ...
    def step_finished(self, *args) -> None: ...

    def attempt_finished(self, record) -> None:
        self.event.set()


SLOW = """
    import time

    def init():
        pass

    def run(mini_batch):
        time.sleep(0.05)
        return mini_batch
"""


@pytest.mark.timeout(120)
def test_canceled_real_step(tmp_path: Path) -> None:
    step = make_step(tmp_path, SLOW, prs=PrsOptions(resource_monitor_interval=0))
    cancel = threading.Event()
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "data", 40),
                                loader=LOADER, cancel=cancel, observers=[CancelAfterFirst(cancel)])
    assert summary.status == "Canceled"
    logs = Path(step.logs_dir)
    result = (logs / "job_result.txt").read_text().splitlines()
    assert result[0].startswith("Failed: The step was canceled")
    assert "Status: Canceled" in result
    counts = re.search(r"Mini-batches: (\d+) total, (\d+) succeeded, 0 failed, (\d+) not "
                       r"processed", "\n".join(result))
    assert counts, result  # the list of mini-batches given has a length: the total
    assert int(counts.group(2)) < 40 and int(counts.group(1)) == 40 == sum(
        map(int, counts.group(2, 3)))
    assert "Status: Canceled" in next(logs.glob("job_progress_overview.*.txt")).read_text()


@pytest.mark.timeout(120)
def test_data_layer_mini_batches_reach_the_job_report(tmp_path: Path) -> None:
    data = tmp_path / "images"
    data.mkdir()
    for i in range(5):
        (data / f"{i}.png").write_bytes(b"x" * (i + 1))
    step = make_step(tmp_path, "def init(): pass\ndef run(mb): return mb\n",
                     input_data="images", mini_batch_size=parse_mini_batch_size("2"),
                     inputs=freeze({"images": PlanInput("images", "uri_folder", path=str(data))}),
                     prs=PrsOptions(resource_monitor_interval=0))
    summary = run_parallel_step(step)
    assert summary.status == "Completed", summary.reason
    with open(Path(step.logs_dir) / "sys/job_report/processed_mini-batches.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert sorted(int(r["Total"]) for r in rows) == [1, 2, 2]
    details = [json.loads(r["Mini-batch Detail"]) for r in rows]
    assert all(isinstance(d, dict) and d for d in details), details
    result = (Path(step.logs_dir) / "job_result.txt").read_text().splitlines()
    assert result[0] == "Succeeded"
    assert "Items: 5 total, 5 succeeded, 0 failed, 0 not processed" in result
