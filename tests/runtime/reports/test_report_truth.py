"""report.html tells the truth: its headline follows the outcome, its counts are those of
job_result.txt and ``job show``, errors are grouped by signature, a rerun shows its final
state with the earlier run behind a switch, and every job gets the page (CLI or SDK)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mlpipe.jobs.front_door import submit
from mlpipe.jobs.record import JobRecord
from mlpipe.jobs.report import render_job_report
from mlpipe.jobs.request import JobRequest
from mlpipe.runtime.step_logs import RunEntry, StepLogs, write_runs
from tests.conftest import run_cli
from tests.jobs.support import create, flaky_pipeline
from tests.runtime.reports.support import ERROR_KINDS, mixed_failures_pipeline


class Page(HTMLParser):
    """The texts of the page's headings and table cells."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.headings: list[tuple[str, str, str]] = []  # (tag, class, text)
        self.rows: list[list[str]] = []
        self._tag: tuple[str, str] | None = None
        self._text = ""
        self._row: list[str] | None = None
        self._cell = ""
        self._in_cell = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h1", "h2"):
            self._tag, self._text = (tag, dict(attrs).get("class") or ""), ""
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._in_cell, self._cell = True, ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h1", "h2") and self._tag is not None:
            self.headings.append((self._tag[0], self._tag[1], self._text.strip()))
            self._tag = None
        elif tag in ("td", "th") and self._row is not None:
            self._row.append(self._cell.strip())
            self._in_cell = False
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._tag is not None:
            self._text += data
        if self._in_cell:
            self._cell += data

    def table_after(self, header: list[str]) -> list[str]:
        """The row that follows the header row ``header``."""
        index = self.rows.index(header)
        return self.rows[index + 1]


TOTALS = ["mini-batches", "succeeded", "failed", "not processed", "items", "items succeeded",
          "items failed", "items not processed", "attempts (final run)", "reused"]


def _job_result_counts(text: str) -> dict[str, int]:
    found = re.search(r"Mini-batches: (\d+) total, (\d+) succeeded, (\d+) failed, (\d+) not "
                      r"processed", text)
    items = re.search(r"Items: (\d+) total, (\d+) succeeded, (\d+) failed", text)
    assert found and items, text
    total, ok, failed, rest = map(int, found.groups())
    return {"total": total, "succeeded": ok, "failed": failed, "rest": rest,
            "items": int(items.group(1)), "items_ok": int(items.group(2)),
            "items_failed": int(items.group(3))}


def test_failures_are_counted_alike_on_the_page_in_job_result_and_job_show(
        tmp_path: Path) -> None:
    ran = create(mixed_failures_pipeline(tmp_path / "p"), tmp_path / "runs", "mixed")
    assert ran.proc.returncode == 0, ran.proc.stderr  # no threshold: completed with failures
    logs = Path(ran.step("score")["logs_dir"])
    job_result = (logs / "job_result.txt").read_text()
    counts = _job_result_counts(job_result)
    assert (counts["total"], counts["failed"]) == (60, 31)
    summary = ran.summary("score")
    assert (summary["mini_batches_total"], summary["mini_batches_succeeded"],
            summary["mini_batches_failed"], summary["items_failed"]) == (
        counts["total"], counts["succeeded"], counts["failed"], counts["items_failed"])

    page_text = (tmp_path / "runs" / "mixed" / "report.html").read_text()
    page = Page(page_text)
    h1 = next(h for h in page.headings if h[0] == "h1")
    assert h1[2] == "Job mixed: completed, 31 of 60 mini-batches failed" and h1[1] == "warn"
    totals = page.table_after(TOTALS)
    assert [int(value) for value in totals[:7]] == [
        counts["total"], counts["succeeded"], counts["failed"], counts["rest"], counts["items"],
        counts["items_ok"], counts["items_failed"]]

    # errors: one group per kind, whatever file each message names; the counts of job_result.txt
    top = {kind: (int(failed), int(attempts)) for kind, failed, attempts in re.findall(
        r"^  \[\w+\] (\w+): .*: (\d+) mini-batch(?:es)? failed, (\d+) failed attempts?$",
        job_result, re.MULTILINE)}
    expected = {kind: (count, count) for kind, count in ERROR_KINDS.values()}
    assert top == expected
    error_rows = [row for row in page.rows if len(row) == 7 and row[0].isdigit()]
    on_page = {row[4].split(":")[0]: (int(row[2]), int(row[0])) for row in error_rows}
    assert on_page == expected
    assert "ValueError: cannot score bad_&lt;n&gt;.txt" in page_text
    assert "31 failed attempts in 5 kinds of error" in page_text
    assert "Per-mini-batch overhead dominates" in page_text  # run() does almost nothing
    # the first traceback of each group is linked (its error file, at its header)
    assert page_text.count("score/logs/user/error/0/process00") >= 5
    assert "#:~:text=mini-batch%20" in page_text

    shown = run_cli("job", "show", "mixed", "--runs-dir", str(tmp_path / "runs"))
    assert ("  [UserError] ValueError: cannot score bad_<n>.txt: 20 mini-batches failed, "
            "20 failed attempts") in shown.stdout
    assert "  ... and 2 other kinds of error" in shown.stdout, shown.stdout


@pytest.mark.slow  # runs whole jobs: CI's second stage
def test_a_rerun_shows_its_final_state_with_the_first_run_behind_a_switch(
        tmp_path: Path) -> None:
    folder = tmp_path / "p"
    yaml = flaky_pipeline(folder)
    runs = tmp_path / "runs"
    first = create(yaml, runs, "flaky", "--set", "jobs.score.mini_batch_error_threshold=5")
    assert first.proc.returncode == 0, first.proc.stderr
    page = (runs / "flaky" / "report.html").read_text()
    assert "<h1 class='warn'>Job flaky: completed, 1 of 6 mini-batches failed</h1>" in page
    (folder / "gate").write_text("")
    again = run_cli("job", "rerun", "flaky", "--failed-only", "--runs-dir", str(runs),
                    "--no-progress")
    assert again.returncode == 0, again.stderr
    page = (runs / "flaky" / "report.html").read_text()
    assert "<h1 class='ok'>Job flaky: completed</h1>" in page
    final = page.split("<h3>Final run (run 2 of 2)</h3>", 1)[1]
    assert final.split("</p>", 1)[0].startswith("<h4>Task stream</h4><p>1 attempts over ")
    errors = final.split("<h3>Errors of the final state</h3>", 1)[1]
    assert errors.startswith("<p>No failed attempts.</p>")
    earlier = errors.split("<details><summary>Earlier runs of this step (1)</summary>", 1)[1]
    assert "bad.txt is not ready" in earlier and "Run 1: Completed" in earlier
    job_result = (Path(first.step("score")["logs_dir"]) / "job_result.txt").read_text()
    assert "Resumed: 5 mini-batches reused" in job_result
    totals = Page(page).table_after(TOTALS)
    assert totals[:3] == ["6", "6", "0"] and totals[8:] == ["1", "5"]


def test_every_job_gets_its_report_from_the_front_door(tmp_path: Path) -> None:
    """No CLI: the SDK's path (``submit``) writes report.html too, and a 2 s step has a CPU
    curve (samples every 0.1 s)."""
    folder = tmp_path / "p"
    (folder / "data").mkdir(parents=True)
    for n in range(20):
        (folder / "data" / f"f{n:02d}.txt").write_text("x\n")
    (folder / "src").mkdir()
    (folder / "src" / "score.py").write_text(
        "import time\ndef run(mini_batch):\n    time.sleep(0.1)\n    return mini_batch\n")
    (folder / "pipeline.yml").write_text(
        "type: pipeline\njobs:\n  score:\n    type: parallel\n    inputs:\n      files:\n"
        "        type: uri_folder\n        path: ./data\n    input_data: ${{inputs.files}}\n"
        "    mini_batch_size: \"1\"\n    max_concurrency_per_instance: 1\n"
        "    task:\n      type: run_function\n      code: ./src\n      entry_script: score.py\n")
    submission = submit(JobRequest(folder / "pipeline.yml", runs_dir=tmp_path / "runs",
                                   name="quiet"))
    assert submission.result is not None and submission.result.ok
    report = tmp_path / "runs" / "quiet" / "report.html"
    assert submission.result.report == str(report) and report.is_file()
    logs = StepLogs.of(submission.result.steps["score"].logs_dir)
    machine = [line for line in logs.samples.read_text().splitlines() if ",machine," in line]
    assert len(machine) >= 10, machine
    page = report.read_text()
    assert "<polyline" in page and "meta http-equiv='refresh'" not in page
    # one time axis for the step's charts: task stream, throughput, CPU, memory
    charts = re.findall(r'<svg [^>]*data-axis="([^"]+)"[^>]*aria-label="([^"]+)"', page)
    step_charts = {label: axis for axis, label in charts if axis.startswith("step-")}
    assert set(step_charts) == {"task stream", "throughput", "%", " MB"}
    assert len(set(step_charts.values())) == 1
    ends = {label: page.split(f'aria-label="{label}"', 1)[1].split("</svg>", 1)[0]
            .rsplit('text-anchor="end">', 1)[1].split("<", 1)[0] for label in step_charts}
    assert len(set(ends.values())) == 1, ends  # the four end at the same second
    # a 2 s step's throughput is counted per bucket, not blown up to a rate per second
    throughput = page.split('aria-label="throughput"', 1)[1].split("</svg>", 1)[0]
    assert "/s</text>" not in throughput and " per " in throughput


def test_a_running_job_reloads_and_long_error_lists_fold(tmp_path: Path) -> None:
    logs = StepLogs.of(tmp_path / "score" / "logs")
    groups = [{"category": "UserError", "exception": "ValueError", "pattern": f"kind {n}",
               "frame": "score.py:3 in run", "message": f"ValueError: kind {n}",
               "attempts": 12 - n, "mini_batches": 12 - n, "where": "user/error/0/process000.txt",
               "first": f"mini-batch mb{n} attempt 1", "first_text": "Traceback ..."}
              for n in range(12)]
    write_runs(logs, [RunEntry(started=1.0e9, ended=None, errors=groups)])
    record = {"name": "live", "status": "running", "run_dir": str(tmp_path),
              "steps": {"score": {"kind": "parallel", "status": "running",
                                  "logs_dir": str(logs.root),
                                  "progress": {"mini_batches_done": 3}}}}
    page = render_job_report(JobRecord.parse(record), tmp_path)
    assert "<meta http-equiv='refresh' content='5'>" in page
    assert "<h1 class='run'>Job live: running</h1>" in page
    assert page.count("<tr><td>") >= 12  # every group listed
    assert "<details><summary>2 more kinds of error</summary>" in page
    assert json.loads(logs.runs.read_text())["runs"][0]["errors"][0]["attempts"] == 12
