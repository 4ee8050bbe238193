"""Every number from one count: a job states its totals the same way in every place (the
console, job_result.txt, user/error.txt, report.html, job.json, runs.json, the overview,
master_role.txt, ``job show`` and ``job show --mini-batches --failed``), whether it
completed, was stopped by a threshold, was canceled or was rerun; the totals of a step that
stopped early are the input's (what did not run is "not processed"); error groups are
labelled by their signature with attempts and mini-batches named; a step has one duration.

Issue #26's second half, case by case (each of these failed on 1e4823a, the issue's main):

- canceled at 828 of 20,000, said ``828/831`` / ``3744 listed``; Ctrl-C said ``worker ...
  died ... stopped by mlpipe`` and not how to resume:
  ``test_ctrl_c_cancels_says_how_to_resume_and_states_the_inputs_totals`` (old: ``185/194``
  of 1500);
- a threshold stop said ``6 of 96``, ``items 108`` for 100 and 200, and its line ``4
  mini-batches failed`` beside a 6:
  ``test_a_threshold_stopped_step_states_the_inputs_totals_and_one_failed_count``; on Dask
  (``1`` beside 192): ``test_a_threshold_on_dask_states_one_failed_count``;
- error groups labelled by one example and counting attempts unnamed (``15 x ValueError:
  corrupt header in review_002.txt``), user/error.txt left after a fixed rerun and linked,
  a rerun's progress ``2/100 (1 reused) ... ETA 1m08s``, the fail-fix loop's commands,
  report.html's failed mini-batches, ``job debug`` without ``--step`` by an id's prefix with
  its scratch folder removed:
  ``test_a_completed_step_and_its_rerun_state_one_count_and_the_fail_fix_loop`` (more of
  ``job debug`` in tests/jobs/test_debug.py);
- one duration per step (2.5 s, 1.175 s, "2s", 1.18 s): ``test_a_step_has_one_duration_everywhere``.

The first half's cases (files, processes, links, read-only inputs, downloads) are in
tests/jobs/test_user_files.py, test_user_files_property.py, test_download.py,
test_step_processes.py (a daemon that clears its environment too), test_ownership.py and
tests/runtime/test_read_only.py.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from tests.jobs.numbers_support import assert_one_count, project, stated


def create(yaml: Path, runs: Path, name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli("job", "create", "--file", str(yaml), "--runs-dir", str(runs), "--name", name,
                   *extra, cwd=yaml.parent)


def test_a_threshold_stopped_step_states_the_inputs_totals_and_one_failed_count(
        tmp_path: Path) -> None:
    # 200 files, 2 a mini-batch: 100 mini-batches; every 5th one fails, retried once
    yaml = project(tmp_path / "p", files=200, per_batch=2, threshold=3, retries=1, sleep=0.01)
    runs = tmp_path / "runs"
    ran = create(yaml, runs, "stopped")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    counts = stated(runs, "stopped", ran.stdout + ran.stderr)
    totals = assert_one_count(counts)
    # the input's totals, not what was listed when it stopped: 100 mini-batches, 200 items
    assert (totals["total"], totals["items"]) == (100, 200)
    assert totals["failed"] > 3 and totals["rest"] > 0
    assert totals["items_ok"] + totals["items_failed"] + 2 * totals["rest"] == 200
    summary = counts.record["steps"]["score"]["summary"]
    assert summary["breach"]["actual"] == totals["failed"]  # the threshold's own number
    assert f"{totals['failed']} mini-batches failed, more than mini_batch_error_threshold = 3" \
        in ran.stdout


@pytest.mark.slow  # a job canceled, then resumed: CI's second stage
def test_ctrl_c_cancels_says_how_to_resume_and_states_the_inputs_totals(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    project(folder, files=1500, every=40, retries=2, sleep=0.005)
    runs = tmp_path / "runs"
    job = subprocess.Popen(
        [sys.executable, "-m", "mlpipe", "job", "create", "--file", "pipeline.yml",
         "--runs-dir", str(runs), "--name", "stopped"], cwd=folder, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    record = runs / "stopped" / "job.json"
    deadline = time.monotonic() + 180
    while True:  # Ctrl-C once a hundred mini-batches are done: the whole foreground group
        assert time.monotonic() < deadline and job.poll() is None, "the job never got going"
        try:
            progress = json.loads(record.read_text())["steps"]["score"].get("progress") or {}
        except (OSError, ValueError, KeyError):
            progress = {}
        if progress.get("mini_batches_done", 0) >= 100:
            break
        time.sleep(0.05)
    os.killpg(job.pid, signal.SIGINT)
    out, err = job.communicate(timeout=180)
    assert job.returncode == 1, out + err
    console = out + err
    assert "died" not in console and "stopped by mlpipe" not in console, console
    resume = f"mlpipe job create --file pipeline.yml --name stopped --runs-dir {runs}"
    assert f"canceled; resume with: {resume}" in out, out
    counts = stated(runs, "stopped", console)
    totals = assert_one_count(counts)
    assert (totals["total"], totals["items"]) == (1500, 1500)
    assert 100 <= totals["succeeded"] + totals["failed"] < 1500
    assert counts.record["status"] == "canceled"

    again = subprocess.run([sys.executable, "-m", *resume.split(), "--no-progress"],
                           cwd=folder, text=True,
                           capture_output=True, timeout=600,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert again.returncode == 0, again.stdout + again.stderr  # failures within no threshold
    resumed = assert_one_count(stated(runs, "stopped", again.stdout + again.stderr))
    assert (resumed["total"], resumed["rest"]) == (1500, 0)
    rows = Path(json.loads((runs / "stopped" / "job.json").read_text())
                ["steps"]["score"]["append_row_file"]).read_text().splitlines()
    assert len(rows) == resumed["items_ok"] == 1500 - len(range(3, 1500, 40))


@pytest.mark.slow  # a job and its rerun: CI's second stage
def test_a_completed_step_and_its_rerun_state_one_count_and_the_fail_fix_loop(
        tmp_path: Path) -> None:
    folder = tmp_path / "p"
    yaml = project(folder, files=100, every=20, retries=2)  # 5 files x 3 attempts fail
    runs = tmp_path / "runs"
    first = create(yaml, runs, "loop", "--no-progress")
    assert first.returncode == 0, first.stdout + first.stderr  # within its thresholds
    totals = assert_one_count(stated(runs, "loop", first.stdout + first.stderr))
    assert (totals["total"], totals["failed"], totals["rest"]) == (100, 5, 0)
    # the error labelled by its signature, attempts and mini-batches named as such
    group = ("[UserError] ValueError: corrupt header in review_<n>.txt: 5 mini-batches failed, "
             "15 failed attempts")
    assert f"  {group}" in first.stdout
    logs = runs / "loop" / "score" / "logs"
    assert f"  {group}" in (logs / "job_result.txt").read_text()
    assert group.split(": 5 mini")[0] + "\n  5 mini-batches failed, 15 failed attempts" in (
        logs / "user" / "error.txt").read_text()
    # the fail-fix loop, named from the first failure: on the console and on the page
    failed_id = json.loads((runs / "loop" / "job.json").read_text())[
        "steps"]["score"]["summary"]["failed_example"]
    commands = [f"mlpipe job show loop --mini-batches --failed --runs-dir {runs}",
                f"mlpipe job debug loop --mini-batch {failed_id} --runs-dir {runs}",
                f"mlpipe job rerun loop --failed-only --runs-dir {runs}"]
    lines = first.stdout.splitlines()
    at = lines.index(f"  {commands[0]}")
    assert lines[at:at + 3] == [f"  {command}" for command in commands]
    page = (runs / "loop" / "report.html").read_text()
    assert all(command in page for command in commands)
    failed_rows = page.split("Failed mini-batches (5)", 1)[1].split("</table>", 1)[0]
    assert failed_rows.count("<tr><td><code>") == 5 and "f0003.txt" in failed_rows
    assert "ValueError: corrupt header in review_003.txt" in failed_rows
    debug = run_cli("job", "debug", "loop", "--runs-dir", str(runs), "--mini-batch",
                    failed_id[:6])  # no --step: the job's one parallel step; an id's prefix
    assert debug.returncode == 1, debug.stdout + debug.stderr
    assert re.search(r"ValueError: corrupt header in review_\d{3}\.txt$", debug.stdout.rstrip())
    scratch = re.search(r"scratch folder \(removed at the end\): (\S+)", debug.stdout)
    assert scratch is not None and not Path(scratch.group(1)).exists()

    (folder / "gate").touch()  # fixed
    again = run_cli("job", "rerun", "loop", "--failed-only", "--runs-dir", str(runs),
                    cwd=folder)
    assert again.returncode == 0, again.stdout + again.stderr
    rerun = assert_one_count(stated(runs, "loop", again.stdout + again.stderr))
    assert (rerun["total"], rerun["succeeded"], rerun["failed"]) == (100, 100, 0)
    # the reused mini-batches count at once: never "2/100 (1 reused)" with an ETA of minutes
    fractions = re.findall(r"\] score: (\d+)/(\d+) \((\d+) reused\) mini-batches", again.stderr)
    assert fractions, again.stderr
    assert all(int(done) >= 95 and reused == "95" for done, _total, reused in fractions), \
        again.stderr
    # nothing failed in the final state: no user/error.txt, and the page does not link one
    assert not (logs / "user" / "error.txt").exists()
    page = (runs / "loop" / "report.html").read_text()
    assert "user/error.txt" not in page and "next:" not in again.stdout


def test_a_step_has_one_duration_everywhere(tmp_path: Path) -> None:
    """The console's table and end line, job_result.txt, the progress display, report.html,
    job.json, runs.json and ``job advise`` give a step the same duration."""
    yaml = project(tmp_path / "p", files=20, sleep=0.05)
    runs = tmp_path / "runs"
    ran = create(yaml, runs, "timed")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    record = json.loads((runs / "timed" / "job.json").read_text())
    step = record["steps"]["score"]
    seconds = step["duration_seconds"]
    logs = Path(step["logs_dir"])
    run = json.loads((logs / "sys" / "job_report" / "runs.json").read_text())["runs"][-1]
    stated = {
        "job.json summary": step["summary"]["duration_seconds"],
        "runs.json": run["ended"] - run["started"],
        "console end of step": re.search(r"step score: completed in ([\d.]+)s", ran.stdout),
        "console table": re.search(r"│ score │ parallel │ completed │ +([\d.]+)s │", ran.stdout),
        "progress": re.search(r"score Completed in ([\d.]+)s:", ran.stderr),
        "job_result.txt": re.search(r"^Duration: ([\d.]+)s$",
                                    (logs / "job_result.txt").read_text(), re.MULTILINE),
        "report.html": re.search(r">score</a></td><td>parallel</td><td>.*?</td><td>([\d.]+)s</td>",
                                 (runs / "timed" / "report.html").read_text()),
    }
    advised = run_cli("job", "advise", "timed", "--runs-dir", str(runs))
    assert advised.returncode == 0, advised.stdout + advised.stderr
    stated["job advise"] = re.search(r"measured ([\d.]+) s", advised.stdout)
    for place, value in stated.items():
        assert value is not None, (place, ran.stdout, ran.stderr, advised.stdout)
        shown = float(value.group(1)) if isinstance(value, re.Match) else float(value)
        # each place rounds the one value to its own precision (0.1 s at most)
        assert abs(shown - seconds) <= 0.051, (place, shown, seconds)


@pytest.mark.slow  # a Dask cluster of real processes: CI's second stage
def test_a_threshold_on_dask_states_one_failed_count(tmp_path: Path) -> None:
    """Dask runs mini-batches in bundles: those that ran after the threshold stopped the step
    are counted, and the threshold line says the count every report gives (it said 1 beside
    192)."""
    yaml = project(tmp_path / "p", files=400, every=4, threshold=0)  # a file in four fails
    runs = tmp_path / "runs"
    ran = create(yaml, runs, "dasked", "--backend", "dask")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    totals = assert_one_count(stated(runs, "dasked", ran.stdout + ran.stderr))
    assert (totals["total"], totals["items"]) == (400, 400) and totals["failed"] >= 1
