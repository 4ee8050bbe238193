"""``<run>/report.html`` and ``sys/task_stream.html``: self-contained, bounded in size at
100,000 attempts, with the parts a person opens them for."""

from __future__ import annotations

import csv
import json
import re
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mlpipe.jobs.report import write_job_report
from mlpipe.runtime.reports.job_report import PROCESSED_COLUMNS
from mlpipe.runtime.reports.task_stream import write_task_stream
from tests.conftest import run_cli
from tests.jobs.support import flaky_pipeline


class Links(HTMLParser):
    """Every src/href of the page (a network URL there would need a connection)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.urls += [value or "" for name, value in attrs if name in ("src", "href")]


def offline(page: str) -> Links:
    links = Links()
    links.feed(page)
    assert not [url for url in links.urls if re.match(r"(https?:)?//", url)], links.urls
    assert "<script" not in page or "src=" not in page.split("<script", 1)[1].split(">")[0]
    return links


def synthetic_step(run: Path, attempts: int) -> Path:
    """A step's logs folder with ``attempts`` rows as the runtime writes them: 8 workers,
    a resumed second run, timeouts and died workers among them."""
    logs = run / "score" / "logs"
    (logs / "sys" / "job_report").mkdir(parents=True)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    with open(logs / "sys" / "job_report" / "processed_mini-batches.csv", "w", newline="",
              encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(PROCESSED_COLUMNS)
        for n in range(attempts):
            status = ("Timeout" if n % 997 == 0 else "ProcessDied" if n % 1999 == 0
                      else "Failed" if n % 101 == 0 else "Succeeded")
            second_run = 3600 if n >= attempts // 2 else 0  # resumed an hour later
            begin = start + timedelta(seconds=second_run + (n // 8) * 0.02)
            writer.writerow([f"mb{n:06d}", 1, f"0/process{n % 8:03d}", begin.isoformat(), 1,
                             int(status == "Succeeded"), int(status != "Succeeded"), 0.019,
                             0.018, 0.017, status, "" if status == "Succeeded" else "UserError",
                             "" if status == "Succeeded" else "Traceback ...\nValueError: bad",
                             json.dumps({"files": [f"/data/f{n:06d}.txt"]})])
    began, ended = start.isoformat(), (start + timedelta(seconds=4000)).isoformat()
    (run / "job.json").write_text(json.dumps({
        "name": "big", "status": "completed", "run_dir": str(run), "duration_seconds": 4001.5,
        "started_at": began, "ended_at": (start + timedelta(seconds=4001.5)).isoformat(),
        "steps": {"score": {"kind": "parallel", "status": "completed", "duration_seconds": 4000,
                            "logs_dir": str(logs), "started_at": began, "ended_at": ended},
                  "after": {"kind": "command", "status": "completed", "duration_seconds": 1.5,
                            "started_at": ended, "depends_on": ["score"],
                            "ended_at": (start + timedelta(seconds=4001.5)).isoformat()}}}))
    return logs


def test_a_100000_attempt_step_gives_bounded_offline_pages(tmp_path: Path) -> None:
    logs = synthetic_step(tmp_path / "big", 100_000)
    stream = write_task_stream(logs)
    assert stream.stat().st_size < 100_000
    stream_page = stream.read_text(encoding="utf-8")
    offline(stream_page)
    assert "100000 attempts" in stream_page and "per worker process and time bucket" in stream_page
    assert stream_page.count(">run 2<") == 1 and ">run 3<" not in stream_page  # the resume
    report = write_job_report(tmp_path / "big")
    assert report == tmp_path / "big" / "report.html"
    assert report.stat().st_size < 100_000  # bench/report_size.py times it
    page = report.read_text(encoding="utf-8")
    links = offline(page)
    assert {"svg", "table"} <= links.tags
    for part in ("Steps", "Task stream", "Throughput", "Slowest attempts",
                 "Errors of the final state", "Durations of the attempts", "Timeline"):
        assert f">{part}<" in page, part
    # the resume an hour later: each run on its own axis, the first behind a switch
    assert "<h3>Final run (run 2 of 2)</h3>" in page
    assert "<details><summary>Earlier runs of this step (1)</summary>" in page
    assert "50000 attempts over" in page and "3600" not in page.split("Final run")[1][:3000]
    assert "ValueError: bad" in page and "/data/f" in page  # errors grouped, files named
    errors = re.search(r"<tr><td>(\d+)</td><td>(\d+)</td><td>\d*</td><td>UserError</td>"
                       r"<td>ValueError: bad", page)
    assert errors is not None and int(errors.group(1)) > 400


@pytest.mark.slow  # runs whole jobs: CI's second stage
def test_job_create_prints_the_report_and_job_report_rewrites_it(tmp_path: Path) -> None:
    yaml = flaky_pipeline(tmp_path / "p")
    runs = tmp_path / "runs"
    created = run_cli("job", "create", "--file", str(yaml), "--name", "flaky", "--runs-dir",
                      str(runs), "--set", "jobs.score.mini_batch_error_threshold=5")
    report = runs / "flaky" / "report.html"
    assert f"report:     {report}" in created.stdout, created.stdout + created.stderr
    page = report.read_text(encoding="utf-8")
    offline(page)
    assert "bad.txt is not ready" in page and "Task stream" in page
    assert ">CPU and memory<" in page
    samples = (runs / "flaky" / "score" / "logs" / "sys" / "perf" / "samples.csv").read_text()
    assert samples.startswith("Seconds,Source,CPU Percent,Memory MB") and "machine" in samples
    assert ">score<" in page and ">report<" in page  # both steps of the DAG
    readme = (runs / "flaky" / "score" / "logs" / "readme.txt").read_text()
    assert "../../report.html" in readme
    report.unlink()
    for how in (["flaky"], ["-n", "flaky"]):
        again = run_cli("job", "report", *how, "--runs-dir", str(runs))
        assert again.returncode == 0, again.stderr
        assert str(report) in again.stdout and report.is_file()
    missing = run_cli("job", "report", "nosuch", "--runs-dir", str(runs))
    assert missing.returncode == 1 and "nosuch" in missing.stderr
    assert run_cli("job", "report", "--runs-dir", str(runs)).returncode == 2


def test_the_report_in_a_real_browser(tmp_path: Path) -> None:
    """Headless Chromium runs the page: every time chart of a step zooms with the others of
    its axis (the inline script sets their viewBox), the headline and the folded parts are
    there, and nothing is fetched from the network."""
    import shutil
    import subprocess

    import pytest

    logs = synthetic_step(tmp_path, 500)
    pages = [write_job_report(tmp_path).read_text(encoding="utf-8")]
    write_task_stream(logs)
    pages.append((logs / "sys" / "task_stream.html").read_text(encoding="utf-8"))
    for page in pages:
        zoomable = page.count('class="zoomable"')
        assert zoomable >= 1 and zoomable == page.count("data-axis=")
        assert "addEventListener('wheel'" in page and "addEventListener('mousedown'" in page
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium to run the script in (apt-get install chromium)")
    dom = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
         (tmp_path / "report.html").as_uri()],
        capture_output=True, text=True, timeout=120).stdout
    assert "<h1 class=\"ok\">Job big: completed</h1>" in dom, dom[:2000]
    charts = re.findall(r'<svg [^>]*class="zoomable"[^>]*>', dom)
    assert charts and all('preserveAspectRatio="none"' in chart for chart in charts)
    assert dom.count("viewBox=") == dom.count("<svg")
    assert "Earlier runs of this step (1)" in dom
