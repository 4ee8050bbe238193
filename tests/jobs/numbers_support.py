"""Reading back every place a job states its counts: the console, job_result.txt,
user/error.txt, report.html, job.json, runs.json, the progress overview, master_role.txt and
``job show`` (with ``--mini-batches --failed``), for the tests of one count."""

from __future__ import annotations

import html
import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import run_cli

# "17 of 100 mini-batches succeeded, 6 failed, 77 not processed (5 reused from an earlier
# run); 34 of 200 items succeeded, 12 failed": the console, job show, report.html
TOTALS = re.compile(
    r"(?P<succeeded>\d+) of (?P<total>\d+) mini-batch(?:es)? succeeded, (?P<failed>\d+) failed"
    r"(?:, (?P<rest>\d+) not processed)?(?: \((?P<reused>\d+) reused from an earlier run\))?"
    r";?\s+(?P<items_ok>\d+)(?: of (?P<items>\d+))? items? succeeded, (?P<items_failed>\d+) "
    r"failed")
# "Mini-batches: 100 total, 17 succeeded, 6 failed, 77 not processed" and "Items: ...":
# job_result.txt, the overview, master_role.txt
LINES = re.compile(
    r"Mini-batches: (?P<total>\d+) total, (?P<succeeded>\d+) succeeded, (?P<failed>\d+) failed, "
    r"(?P<rest>\d+) not processed.*?Items: (?P<items>\d+) total, (?P<items_ok>\d+) succeeded, "
    r"(?P<items_failed>\d+) failed, (?P<items_rest>\d+) not processed", re.DOTALL)
KEYS = ("total", "succeeded", "failed", "rest", "items", "items_ok", "items_failed")

SCRIPT = """\
import os, time

def init():
    pass

def run(mini_batch):
    time.sleep(float(os.environ.get("SLEEP", "0")))
    out = []
    for path in mini_batch:
        name = os.path.basename(path)
        number = int(name[1:5])
        if number % {every} == 3 and not os.path.exists(os.environ["GATE"]):
            raise ValueError(f"corrupt header in review_{{number:03d}}.txt")
        out.append(name)
    return out
"""


def project(folder: Path, *, files: int, per_batch: int = 1, every: int = 10,
            threshold: int = -1, retries: int = 0, sleep: float = 0.0,
            workers: int = 2) -> Path:
    """A pipeline of one parallel step over ``files`` files, ``per_batch`` a mini-batch;
    files numbered ``n % every == 3`` fail (``ValueError: corrupt header in review_<n>.txt``)
    until ``<folder>/gate`` exists."""
    data = folder / "data"
    data.mkdir(parents=True)
    for number in range(files):
        (data / f"f{number:04d}.txt").write_text(f"{number}\n")
    (folder / "src").mkdir()
    (folder / "src" / "score.py").write_text(SCRIPT.format(every=every))
    yaml = folder / "pipeline.yml"
    yaml.write_text(textwrap.dedent(f"""\
        type: pipeline
        settings:
          default_compute: azureml:cpu
        jobs:
          score:
            type: parallel
            inputs:
              files: {{type: uri_folder, path: ./data}}
            outputs:
              rows: {{type: uri_file}}
            input_data: ${{{{inputs.files}}}}
            mini_batch_size: "{per_batch}"
            max_concurrency_per_instance: {workers}
            mini_batch_error_threshold: {threshold}
            retry_settings: {{max_retries: {retries}, timeout: 60}}
            environment_variables:
              GATE: {folder / "gate"}
              SLEEP: "{sleep}"
            task:
              type: run_function
              code: ./src
              entry_script: score.py
              environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest
              append_row_to: ${{{{outputs.rows}}}}
        """))
    return yaml


@dataclass
class Stated:
    """Every count a job states, by place."""

    totals: dict[str, dict[str, int]]  # place -> the totals (KEYS)
    failed: dict[str, int]  # place -> failed mini-batches stated on their own
    record: dict[str, Any]


def _ints(match: re.Match[str] | None, place: str, text: str) -> dict[str, int]:
    assert match is not None, f"no counts in {place}:\n{text}"
    found = {key: int(value) for key, value in match.groupdict().items() if value is not None}
    found.setdefault("rest", 0)
    return {key: found[key] for key in KEYS if key in found}


def _page_text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def stated(runs: Path, name: str, console: str) -> Stated:
    """Read every place job ``name`` states its counts; ``console`` is what ``job create``
    (or ``job rerun``) printed, stdout and stderr."""
    record = json.loads((runs / name / "job.json").read_text())
    step = record["steps"]["score"]
    logs = Path(step["logs_dir"])
    totals: dict[str, dict[str, int]] = {}
    failed: dict[str, int] = {}

    summary = step["summary"]
    totals["job.json summary"] = {
        "total": summary["mini_batches_total"], "succeeded": summary["mini_batches_succeeded"],
        "failed": summary["mini_batches_failed"],
        "rest": summary.get("mini_batches_not_processed", summary["mini_batches_total"]
                            - summary["mini_batches_succeeded"] - summary["mini_batches_failed"]),
        "items": summary["items_total"], "items_ok": summary["items_succeeded"],
        "items_failed": summary["items_failed"]}
    progress = step["progress"]
    reused = int(progress.get("mini_batches_reused", 0))
    totals["job.json progress"] = {
        "total": progress.get("mini_batches_total", progress["mini_batches_known"]),
        "succeeded": progress["mini_batches_done"] + reused - progress["mini_batches_failed"],
        "failed": progress["mini_batches_failed"], "items_ok": progress["items_succeeded"],
        "items_failed": progress["items_failed"]}
    failed["job.json error groups"] = sum(g["failed"] for g in summary.get("error_groups", []))

    console_totals = [m for m in TOTALS.finditer(console)]
    assert console_totals, console
    totals["console (progress)"] = _ints(console_totals[-1], "the console", console)
    for line in console.splitlines():  # "step score failed: 6 mini-batches failed, more than"
        found = re.search(r"(\d+) mini-batch(?:es)? failed, more than", line)
        if found:
            failed[f"console: {line.strip()[:40]}"] = int(found.group(1))
    groups = re.findall(r"^  \[\w+\] .*: (\d+) mini-batch(?:es)? failed, \d+ failed attempts?$",
                        console, re.MULTILINE)
    if summary["mini_batches_failed"]:
        failed["console error groups"] = sum(map(int, groups))

    job_result = (logs / "job_result.txt").read_text()
    totals["job_result.txt"] = _ints(LINES.search(job_result), "job_result.txt", job_result)
    threshold = re.search(r"failed mini-batches: (\d+)$", job_result, re.MULTILINE)
    assert threshold is not None, job_result
    failed["job_result.txt thresholds"] = int(threshold.group(1))
    for line in job_result.splitlines():
        found = re.search(r"(\d+) mini-batch(?:es)? failed, more than|failed mini-batches \((\d+)\)",
                          line)
        if found:
            failed[f"job_result.txt: {line[:40]}"] = int(found.group(1) or found.group(2))

    error_txt = logs / "user" / "error.txt"
    if summary["mini_batches_failed"]:
        text = error_txt.read_text()
        header = re.match(r"\d+ failed attempts? \((\d+) mini-batch(?:es)? failed\)", text)
        assert header is not None, text
        failed["user/error.txt"] = int(header.group(1))
        failed["user/error.txt groups"] = sum(map(int, re.findall(
            r"^  (\d+) mini-batch(?:es)? failed, ", text, re.MULTILINE)))
    else:
        assert not error_txt.exists(), "user/error.txt of a step where nothing failed"

    overview = next(logs.glob("job_progress_overview.*.txt")).read_text()
    totals["overview"] = _ints(LINES.search(overview), "the overview", overview)
    master = (logs / "sys" / "master_role.txt").read_text()
    last = master[master.rindex("Step score "):]
    totals["master_role.txt"] = _ints(LINES.search(last), "master_role.txt", last)
    runs_json = json.loads((logs / "sys" / "job_report" / "runs.json").read_text())["runs"][-1]
    counts = runs_json["counts"]
    totals["runs.json"] = {
        "total": counts["mini_batches"], "succeeded": counts["succeeded"],
        "failed": counts["failed"],
        "rest": counts.get("not_processed",
                           counts["mini_batches"] - counts["succeeded"] - counts["failed"]),
        "items": counts["items"], "items_ok": counts["items_succeeded"],
        "items_failed": counts["items_failed"]}
    failed["runs.json error groups"] = sum(g.get("failed", g.get("failed_for_good", 0))
                                           for g in runs_json["errors"])

    page = (runs / name / "report.html").read_text()
    text = _page_text(page)
    totals["report.html steps"] = _ints(TOTALS.search(text), "report.html", text)
    cells = re.search(r"attempts \(final run\)\s+reused\s+((?:\d+\s+){8})", text)
    assert cells is not None, text
    values = list(map(int, cells.group(1).split()))
    totals["report.html totals"] = dict(zip(
        ("total", "succeeded", "failed", "rest", "items", "items_ok", "items_failed"),
        values[:7], strict=True))
    listed = re.search(r"Failed mini-batches \((\d+)\)", text)
    failed["report.html failed list"] = int(listed.group(1)) if listed else 0
    headline = re.search(r"Job \S+: \w+, (\d+) of (\d+) mini-batches failed", text)
    failed["report.html headline"] = int(headline.group(1)) if headline else 0

    shown = run_cli("job", "show", name, "--runs-dir", str(runs))
    assert shown.returncode == 0, shown.stderr
    totals["job show"] = _ints(TOTALS.search(shown.stdout), "job show", shown.stdout)
    listing = run_cli("job", "show", name, "--runs-dir", str(runs), "--mini-batches", "--failed")
    assert listing.returncode == 0, listing.stderr
    found = re.search(r"(\d+) failed mini-batch(?:es)? in step score", listing.stdout)
    assert found is not None, listing.stdout
    failed["job show --mini-batches --failed"] = int(found.group(1))
    return Stated(totals, failed, record)


def assert_one_count(counts: Stated) -> dict[str, int]:
    """Every place states the same totals, and every failed count is the failed total;
    returns the totals."""
    reference = counts.totals["job.json summary"]
    for place, values in counts.totals.items():
        assert values == {key: reference[key] for key in values}, (place, values, reference)
    for place, value in counts.failed.items():
        assert value == reference["failed"], (place, value, reference, counts.failed)
    assert reference["succeeded"] + reference["failed"] + reference["rest"] == reference["total"]
    return reference
