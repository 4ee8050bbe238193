"""The task-stream page drawn from processed_mini-batches.csv."""

from __future__ import annotations

import re
from pathlib import Path

from mlpipe.runtime.reports.task_stream import main, read_bars, write_task_stream
from tests.runtime.reports.support import run_retry_and_timeout


def test_step_reports_draw_one_bar_per_attempt(tmp_path: Path) -> None:
    logs = run_retry_and_timeout(tmp_path)
    page = (logs / "sys/task_stream.html").read_text()
    titles = re.findall(r"<rect [^>]*fill=\"(#\w+)\"><title>([^<]*)</title>", page)
    assert [colour for colour, _ in titles] == ["#4c9a2a", "#d62728", "#4c9a2a", "#ff7f0e"]
    assert titles[1][1] == ("mb-1 attempt 1 on 0/process001: Failed, 0/2 items, 0.500 s - "
                            "files: /data/1.png - UserError: ValueError: bad image 7")
    assert "4 attempts over 2.500 s on 2 worker process(es)" in page
    assert "sys/task_stream.html\n    A task-stream chart" in (logs / "readme.txt").read_text()


def test_bars_start_at_the_first_attempt(tmp_path: Path) -> None:
    bars = read_bars(run_retry_and_timeout(tmp_path) / "sys/job_report/processed_mini-batches.csv")
    assert [(b.process, b.start, b.seconds, b.status) for b in bars] == [
        ("0/process000", 0.0, 0.5, "Succeeded"), ("0/process001", 1.0, 0.5, "Failed"),
        ("0/process000", 1.0, 0.5, "Succeeded"), ("0/process001", 2.0, 0.5, "Timeout")]


def test_command_line(tmp_path: Path, capsys) -> None:
    logs = run_retry_and_timeout(tmp_path)
    out = tmp_path / "stream.html"
    assert main([str(logs), str(out)]) == 0 and out.read_text().startswith("<!DOCTYPE html>")
    assert main([]) == 2
    assert main([str(tmp_path)]) == 1
    assert "no job report at" in capsys.readouterr().err
    try:
        write_task_stream(tmp_path)
    except FileNotFoundError as error:
        assert "processed_mini-batches.csv" in str(error)
    else:
        raise AssertionError("expected FileNotFoundError")


def test_a_torn_row_is_skipped(tmp_path: Path) -> None:
    logs = run_retry_and_timeout(tmp_path)
    csv_path = logs / "sys/job_report/processed_mini-batches.csv"
    lines = csv_path.read_text().splitlines(keepends=True)
    torn = lines[2][: lines[2].index("0.500000")] + "\n"  # a killed run's half-written row
    csv_path.write_text("".join([*lines[:2], torn, *lines[2:]]))
    assert [b.status for b in read_bars(csv_path)] == [
        "Succeeded", "Failed", "Succeeded", "Timeout"]
    assert "4 attempts over" in write_task_stream(logs).read_text()


def test_a_foreign_csv_is_a_clear_error(tmp_path: Path, capsys) -> None:
    csv_path = tmp_path / "logs/sys/job_report/processed_mini-batches.csv"
    csv_path.parent.mkdir(parents=True)
    csv_path.write_text("a,b\n1,2\n")
    assert main([str(tmp_path / "logs")]) == 1
    assert "is not a processed_mini-batches.csv: it has no column 'Mini-batch Id'" \
        in capsys.readouterr().err


def test_utilisation_is_the_figure_of_process_summary(tmp_path: Path) -> None:
    logs = run_retry_and_timeout(tmp_path)
    page = (logs / "sys/task_stream.html").read_text()
    import csv

    with open(logs / "sys/job_report/process_summary.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        cells = re.search(rf"<td>{row['Node']}/{row['Process']}</td>(?:<td>[^<]*</td>)*?"
                          r"<td>([\d.]+)%</td></tr>", page)
        assert cells is not None and cells.group(1) == row["Utilization Percent"], row
