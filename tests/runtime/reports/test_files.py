"""StepReports driven with real AttemptRecord sequences: the exact files and their contents."""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

from mlpipe.plan import PrsOptions
from mlpipe.runtime.records import ThresholdBreach, WorkerInfo
from mlpipe.runtime.reports.job_report import PROCESSED_COLUMNS
from mlpipe.runtime.reports.observer import StepReports
from mlpipe.runtime.step_logs import init_failure_header
from tests.runtime.reports.support import (
    T0,
    TRACEBACK,
    W0,
    W1,
    attempt,
    make_step,
    run_retry_and_timeout,
    summary,
)

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\|(DEBUG|INFO|WARNING|ERROR)\|"
                  + str(os.getpid()) + r"\|\d+\|.+$")


def files_under(logs: Path) -> set[str]:
    return {p.relative_to(logs).as_posix() for p in logs.rglob("*") if p.is_file()}


def read_csv(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_completed_step_writes_the_azure_layout(tmp_path: Path) -> None:
    logs = run_retry_and_timeout(tmp_path)
    overview = [f for f in files_under(logs) if f.startswith("job_progress_overview.")]
    assert len(overview) == 1 and re.fullmatch(r"job_progress_overview\.\d{10}\.txt", overview[0])
    assert files_under(logs) == {
        "job_result.txt", "readme.txt", overview[0], "sys/master_role.txt",
        "sys/job_report/processed_mini-batches.csv", "sys/job_report/process_summary.csv",
        "sys/job_report/node_summary.csv", "sys/job_report/runs.json", "sys/task_stream.html",
        "user/error.txt", "user/error/0/process001.txt",
    }


def test_processed_mini_batches_csv_has_one_row_per_attempt(tmp_path: Path) -> None:
    rows = read_csv(run_retry_and_timeout(tmp_path) / "sys/job_report/processed_mini-batches.csv")
    assert tuple(rows[0]) == PROCESSED_COLUMNS
    assert rows[0][-1] == "Mini-batch Detail" and len(rows[0]) == 14
    assert [(r[0], r[1], r[10]) for r in rows[1:]] == [
        ("mb-0", "1", "Succeeded"), ("mb-1", "1", "Failed"), ("mb-1", "2", "Succeeded"),
        ("mb-2", "1", "Timeout")]
    assert rows[2] == ["mb-1", "1", "0/process001", "2026-01-02T03:04:06.123456", "2", "0", "2",
                       "0.500000", "0.250000", "0.400000", "Failed", "UserError",
                       "ValueError: bad image 7", '{"files": ["/data/1.png"], "index": 1}']
    assert rows[1][11:13] == ["", ""]


def test_summaries_per_process_and_node(tmp_path: Path) -> None:
    logs = run_retry_and_timeout(tmp_path)
    processes = read_csv(logs / "sys/job_report/process_summary.csv")
    assert processes[0] == ["Node", "Process", "Pid", "Mini-batches", "Failed Mini-batches",
                            "Items", "Succeeded Items", "Failed Items", "Busy Seconds",
                            "Run Method Seconds", "Process Seconds", "Utilization Percent"]
    # process000: mb-0 and mb-1's retry; process001: mb-1's failure and mb-2's timeout; wall 10 s
    assert processes[1] == ["0", "process000", str(os.getpid()), "2", "0", "4", "4", "0",
                            "1.000", "0.800", "0.500", "10.0"]
    assert processes[2] == ["0", "process001", str(os.getpid()), "2", "2", "4", "0", "4",
                            "1.000", "0.800", "0.500", "10.0"]
    nodes = read_csv(logs / "sys/job_report/node_summary.csv")
    assert nodes[0][:3] == ["Node", "Processes", "Mini-batches"]
    assert nodes[1] == ["0", "2", "4", "2", "8", "4", "4", "2.000", "1.600", "1.000", "10.0"]


def test_node_summary_splits_nodes(tmp_path: Path) -> None:
    step = make_step(tmp_path, instance_count=2)
    w_other = WorkerInfo(1, "process000", None)
    reports = StepReports(step)
    reports.step_started(step, [W0, w_other], T0)
    reports.attempt_finished(attempt(0))
    reports.attempt_finished(attempt(1, worker=w_other, elapsed=2.0))
    reports.attempt_finished(attempt(2, worker=w_other, elapsed=3.0))
    reports.step_finished(summary())
    nodes = read_csv(Path(step.logs_dir) / "sys/job_report/node_summary.csv")
    assert [row[:5] + row[7:8] + row[-1:] for row in nodes[1:]] == [
        ["0", "1", "1", "0", "2", "0.500", "5.0"], ["1", "1", "2", "0", "4", "5.000", "50.0"]]


def test_job_result_of_a_completed_step(tmp_path: Path) -> None:
    text = (run_retry_and_timeout(tmp_path) / "job_result.txt").read_text()
    lines = text.splitlines()
    assert lines[0] == "Succeeded"
    assert "Mini-batches: 3 total, 2 succeeded, 1 failed, 0 not processed" in lines
    assert "Attempts: 4 (1 retried, 1 timed out)" in lines
    assert "Items: 6 total, 4 succeeded, 2 failed, 0 not processed" in lines
    assert "  mini_batch_error_threshold: -1 (unlimited); failed mini-batches: 1" in lines
    assert "  allowed_failed_percent: 100%; failed mini-batches: 33.3%" in lines
    # each kind of error labelled by its signature, attempts and mini-batches named
    assert ("  [Timeout] run() did not finish within <n> s: 1 mini-batch failed, "
            "1 failed attempt") in lines
    assert ("  [UserError] ValueError: bad image <n>: 1 failed attempt in 1 mini-batch "
            "(0 failed with it in the end)") in lines
    assert "tracebacks: user/error/0/process001.txt" in text


def test_threshold_breach_fails_with_its_numbers(tmp_path: Path) -> None:
    step = make_step(tmp_path, mini_batch_error_threshold=1)
    reports = StepReports(step)
    reports.step_started(step, [W0, W1], T0)
    reports.mini_batches_scheduled(10, True)
    failed = [attempt(mb, worker=W1, status="Failed", category="UserError",
                      message="ValueError: bad image 7", traceback=TRACEBACK) for mb in range(2)]
    for record in failed:
        reports.attempt_finished(record)
    reports.step_finished(summary(
        status="Failed", mini_batches_total=10, mini_batches_failed=2, items_total=20,
        items_failed=4, breach=ThresholdBreach("mini_batch_error_threshold", 1, 2),
        failed=failed))
    logs = Path(step.logs_dir)
    lines = (logs / "job_result.txt").read_text().splitlines()
    assert lines[0] == ("Failed: The number of failed mini-batches (2) exceeded "
                        "mini_batch_error_threshold (1).")
    assert "Mini-batches: 10 total, 0 succeeded, 2 failed, 8 not processed" in lines
    assert "  mini_batch_error_threshold: 1; failed mini-batches: 2" in lines
    assert "Items: 20 total, 0 succeeded, 4 failed, 16 not processed" in lines
    assert ("  [UserError] ValueError: bad image <n>: 2 mini-batches failed, 2 failed attempts"
            in lines)
    assert "      e.g. ValueError: bad image 7 (raised in score.py:12 in run)" in lines
    error_txt = (logs / "user/error.txt").read_text()
    assert error_txt.startswith("2 failed attempts (2 mini-batches failed) in 1 kind of error")
    assert "[UserError] ValueError: bad image <n>\n  2 mini-batches failed, 2 failed attempts" \
        in error_txt
    tracebacks = (logs / "user/error/0/process001.txt").read_text()
    assert tracebacks.count('raise ValueError("bad image 7")') == 2
    assert tracebacks.startswith("===== mini-batch mb-0 attempt 1 on 0/process001")


def test_other_thresholds_and_an_explicit_reason(tmp_path: Path) -> None:
    step = make_step(tmp_path, error_threshold=3,
                     prs=PrsOptions(resource_monitor_interval=0, allowed_failed_percent=30))
    reports = StepReports(step)
    reports.step_started(step, [W0], T0)
    reports.step_finished(summary(status="Failed", reason="init() failed on every worker",
                                  breach=ThresholdBreach("allowed_failed_percent", 30, 40.0)))
    lines = (Path(step.logs_dir) / "job_result.txt").read_text().splitlines()
    assert lines[0] == "Failed: init() failed on every worker"
    assert "  error_threshold: 3; failed items: 0" in lines
    assert ("Threshold exceeded: The percentage of failed mini-batches (40.0%) exceeded "
            "allowed_failed_percent (30%).") in lines
    assert "Errors: none" in lines


def test_canceled_step(tmp_path: Path) -> None:
    step = make_step(tmp_path)
    reports = StepReports(step)
    reports.step_started(step, [W0], T0)
    reports.mini_batches_scheduled(5, False)
    reports.attempt_finished(attempt(0))
    reports.step_finished(summary(status="Canceled", reason="KeyboardInterrupt",
                                  mini_batches_total=5, mini_batches_succeeded=1))
    logs = Path(step.logs_dir)
    assert (logs / "job_result.txt").read_text().splitlines()[0] == (
        "Failed: The step was canceled: KeyboardInterrupt")
    overview = next(logs.glob("job_progress_overview.*.txt")).read_text()
    assert "Status: Canceled" in overview
    assert "Mini-batches scheduled: 5 so far (listing in progress)" in overview
    assert not (logs / "user").exists()


def test_worker_init_failure_is_an_error_with_its_traceback(tmp_path: Path) -> None:
    step = make_step(tmp_path)
    reports = StepReports(step)
    reports.step_started(step, [W0], T0)
    message = "Traceback (most recent call last):\n  ...\nSystemExit: 2"
    reports.worker_event(W0, "init_failed", message)
    failed = summary(status="Failed")
    failed.errors.add("InitError", message, None, where="user/error/0/process000.txt",
                      first=init_failure_header(W0), seen=None)  # as the driver counts it
    reports.step_finished(failed)
    logs = Path(step.logs_dir)
    assert (logs / "job_result.txt").read_text().splitlines()[0] == "Failed: [InitError] SystemExit: <n>"
    reports = StepReports(make_step(tmp_path / "with_reason"))
    reports.step_started(reports.step, [W0], T0)
    reports.step_finished(summary(status="Failed", reason="init() failed: SystemExit: 2\n"
                                  "Traceback (most recent call last):\n  File \"score.py\""))
    lines = (Path(reports.step.logs_dir) / "job_result.txt").read_text().splitlines()
    assert lines[0] == "Failed: init() failed: SystemExit: 2"
    assert lines[-4:] == ["Reason in full:", "  init() failed: SystemExit: 2",
                          "  Traceback (most recent call last):", '    File "score.py"']
    assert "SystemExit: 2" in (logs / "user/error/0/process000.txt").read_text()
    error_txt = (logs / "user/error.txt").read_text()
    assert "[InitError] SystemExit: <n>\n  1 failed attempt\n  e.g. SystemExit: 2" in error_txt
    assert f"first: {init_failure_header(W0)}" in error_txt


def test_master_role_format_and_level(tmp_path: Path) -> None:
    logs = run_retry_and_timeout(tmp_path / "info")
    lines = (logs / "sys/master_role.txt").read_text().splitlines()
    assert lines[0].split("|")[1:3] == ["INFO", str(os.getpid())]
    assert lines[0].split("|")[4] == "Start scheduling."
    assert all(LINE.match(line) for line in lines), lines
    assert not any("|DEBUG|" in line for line in lines)
    assert "Scheduling finished: 3 mini-batches." in [line.split("|")[4] for line in lines]
    assert lines[-1].split("|")[4] == (
        "Step score Completed. Mini-batches: 3 total, 2 succeeded, 1 failed, 0 not processed. "
        "Items: 6 total, 4 succeeded, 2 failed, 0 not processed.")

    debug = (run_retry_and_timeout(tmp_path / "debug", logging_level="debug")
             / "sys/master_role.txt").read_text()
    assert "|DEBUG|" in debug and "Mini-batch mb-0 attempt 1 on 0/process000 succeeded" in debug

    warning = (run_retry_and_timeout(tmp_path / "warning", logging_level="WARNING")
               / "sys/master_role.txt").read_text()
    assert warning == ""  # the file exists; nothing of this step is a warning


def test_logger_usable_before_start_and_closed_after(tmp_path: Path) -> None:
    step = make_step(tmp_path)
    reports = StepReports(step)
    reports.logger.warning("Unknown flag --resource_monitor_interva; did you mean "
                           "--resource_monitor_interval?")
    reports.step_started(step, [W0], T0)
    reports.step_finished(summary())
    reports.logger.info("after the end")  # dropped, no error
    reports.close()
    reports.step_finished(summary())  # idempotent
    text = (Path(step.logs_dir) / "sys/master_role.txt").read_text()
    assert text.splitlines()[0].endswith("did you mean --resource_monitor_interval?")
    assert "after the end" not in text


def test_csv_header_is_on_disk_at_start_and_rows_at_the_end(tmp_path: Path) -> None:
    step = make_step(tmp_path)
    reports = StepReports(step)
    reports.step_started(step, [W0], T0)
    path = Path(step.logs_dir) / "sys/job_report/processed_mini-batches.csv"
    assert read_csv(path) == [list(PROCESSED_COLUMNS)]
    for mb in range(500):
        reports.attempt_finished(attempt(mb))
    reports.step_finished(summary())
    assert len(read_csv(path)) == 501
