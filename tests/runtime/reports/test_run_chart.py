"""report.html of a large step is drawn from what the step's reports kept while it ran (its
run's chart: live while it runs in this process, runs.json's at its end), never from
processed_mini-batches.csv read back, and it says what the rows say."""

from __future__ import annotations

import html
import json
import re
from datetime import timedelta
from pathlib import Path

import pytest

from mlpipe.jobs.record import JobRecord
from mlpipe.jobs.report import render_job_report
from mlpipe.runtime.reports.observer import StepReports
from mlpipe.runtime.reports.run_chart import RunChart, live_run
from mlpipe.runtime.reports.timeline import Timeline
from mlpipe.runtime.step_logs import StepLogs, read_runs, write_runs
from tests.runtime.reports.support import T0, W0, W1, attempt, make_step, summary

DENSE, SPARSE = 1_200, 300  # above charts.SPARSE_ATTEMPTS (drawn per bucket), and not


def feed(reports: StepReports, first: int, count: int) -> None:
    """Attempts ``first`` .. ``first + count - 1``: two workers, every 50th failed, the
    elapsed seconds varying so that the slowest ten are known (mb 7, 17, ..., 97 + 1000)."""
    records = []
    for n in range(first, first + count):
        failed = n % 50 == 3
        slow = 5.0 + n / 1000 if n % 10 == 7 and n % 1000 < 100 else 0.2 + (n % 7) / 100
        records.append(attempt(n, worker=W1 if n % 2 else W0, elapsed=slow,
                               status="Failed" if failed else "Succeeded",
                               category="UserError" if failed else None,
                               message="ValueError: bad" if failed else None))
    for start in range(0, len(records), 64):  # as the driver hands them over: in batches
        reports.attempts_finished(records[start:start + 64])


def job(logs: Path, status: str) -> JobRecord:
    return JobRecord.parse({"name": "big", "status": status, "run_dir": str(logs.parent.parent),
            "started_at": T0.isoformat(),
            **({} if status == "running" else {"ended_at": (T0 + timedelta(hours=1)).isoformat()}),
            "steps": {"score": {
                "kind": "parallel", "status": status, "logs_dir": str(logs),
                "started_at": T0.isoformat()}}})


def section(page: str, heading: str) -> str:
    """The part of the page from ``heading`` to the next heading."""
    return page.split(f">{heading}<", 1)[1].split("<h4>", 1)[0]


def table(page: str, heading: str) -> list[str]:
    """The rows of the first table after ``heading``."""
    part = page.split(f">{heading}<", 1)[1]
    part = part[part.index("<table>"):part.index("</table>")]
    return re.findall(r"<tr>(.*?)</tr>", part)


@pytest.mark.parametrize("attempts", [DENSE, SPARSE])
def test_a_running_step_is_drawn_from_its_reports_and_a_finished_one_from_runs_json(
        tmp_path: Path, attempts: int) -> None:
    step = make_step(tmp_path)
    reports = StepReports(step)
    reports.step_started(step, [W0, W1], T0)
    reports.mini_batches_scheduled(attempts, True)
    so_far = attempts // 2
    feed(reports, 0, so_far)
    logs = StepLogs.of(step.logs_dir)
    live = live_run(logs)
    assert live is not None and live.status == "Running"
    assert RunChart.from_json(live.chart).attempts == so_far  # type: ignore[union-attr]
    running = render_job_report(job(logs.root, "running"))
    assert f"{so_far} attempts over" in running
    assert ("per worker process and time bucket" in running) == (so_far > 500)
    feed(reports, so_far, attempts - so_far)
    assert f"{attempts} attempts over" in render_job_report(job(logs.root, "running"))
    reports.step_finished(summary(started_at=T0, ended_at=T0 + timedelta(seconds=attempts + 2),
                                  mini_batches_total=attempts, mini_batches_succeeded=attempts))
    assert live_run(logs) is None  # a finished step is no longer offered

    charted = render_job_report(job(logs.root, "completed"))
    # the same tables as the rows give (the page drawn from the CSV: runs.json without chart)
    runs = read_runs(logs)
    assert RunChart.from_json(runs[-1].chart) is not None
    write_runs(logs, [json_copy(run, chart={}) for run in runs])
    from_rows = render_job_report(job(logs.root, "completed"))
    for heading in ("Slowest attempts", "Task stream"):
        assert table(charted, heading) == table(from_rows, heading), heading
    if attempts <= 500:  # one bar per attempt, each with its tooltip, as the rows draw them
        assert section(charted, "Task stream") == section(from_rows, "Task stream")
        assert section(charted, "Task stream").count("<rect") == attempts
    slowest = table(charted, "Slowest attempts")[1:]
    longest = sorted((n for n in range(attempts) if n % 10 == 7 and n % 1000 < 100),
                     key=lambda n: -(5.0 + n / 1000))[:10]
    assert [re.search(r"<td>mb-(\d+)</td>", row).group(1) for row in slowest] == [  # type: ignore[union-attr]
        str(n) for n in longest]
    assert f"/data/{longest[0]}.png" in slowest[0]  # with its files
    # the throughput counts every attempt once
    finished = re.findall(r"(\d+) finished", charted.split(">Throughput<", 1)[1].split(
        "</svg>", 1)[0])
    assert sum(map(int, finished)) == attempts

    # drawn from runs.json's chart, the rows are not read: the page holds without them
    write_runs(logs, runs)
    logs.processed.write_text(logs.processed.read_text().splitlines()[0] + "\n")
    assert render_job_report(job(logs.root, "completed")) == charted


def json_copy(run: object, **changes: object) -> object:
    from mlpipe.runtime.step_logs import RunEntry

    data = {**json.loads(json.dumps(vars(run), default=str)), **changes}
    return RunEntry(**data)


def test_the_timeline_on_another_axis_keeps_every_attempt_and_busy_second() -> None:
    timeline = Timeline()
    start = T0.timestamp()
    for n in range(5_000):
        timeline.add("0/process000" if n % 2 else "0/process001", start + n * 0.01, 0.015,
                     "Failed" if n % 100 == 0 else "Succeeded")
    axis = (start - 3.0, timeline.last - start + 5.0)  # the run began before its first attempt
    assert sum(timeline.finished(60, axis)) == 5_000
    for name in timeline.totals:
        assert abs(sum(timeline.busy(name, 240, axis)) - timeline.totals[name].busy) < 1e-3
        started, failed = timeline.started(name, 240, axis)
        assert sum(started) == timeline.totals[name].attempts
        assert sum(failed) == timeline.totals[name].failed
        assert started[:12] == [0] * 12  # the 3 s before the first attempt are empty


def test_a_running_steps_errors_are_the_drivers_one_tally(tmp_path: Path) -> None:
    """While a step runs, its page states the error groups the driver keeps (told to the
    reports by ``errors_kept``), labelled by signature with attempts and mini-batches, not a
    second count of the reports' own."""
    from mlpipe.runtime.error_groups import ErrorGroups

    step = make_step(tmp_path)
    reports = StepReports(step)
    groups = ErrorGroups()
    reports.errors_kept(groups)
    reports.step_started(step, [W0, W1], T0)
    feed(reports, 0, 10)  # mini-batch 3 failed: the reports saw it, the driver counts below
    for number, final in ((7, True), (9, False), (9, True)):
        groups.add("UserError", f"ValueError: bad record {number} in f{number:04d}.txt", None,
                   seen=frozenset() if (number, final) != (9, True) else frozenset(
                       {groups.top()[0].signature}), final=final)
    live = live_run(StepLogs.of(step.logs_dir))
    assert live is not None
    assert live.errors == groups.as_json()  # the driver's groups, as they are now
    [group] = live.errors
    assert (group["attempts"], group["mini_batches"], group["failed"]) == (3, 2, 2)
    page = render_job_report(job(StepLogs.of(step.logs_dir).root, "running"))
    assert html.escape(str(group["label"])) in page and "3 failed attempts" in page, page
    reports.step_finished(summary(started_at=T0, ended_at=T0 + timedelta(seconds=12),
                                  mini_batches_total=10, mini_batches_succeeded=10))
