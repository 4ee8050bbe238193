"""job.json written by earlier versions stays readable, typed, and byte-compatible: every
reader takes it (``job show``, ``job list``, the machine output, report.html, a resume's
record), and a record read and written back is the same file, byte for byte, but for what
was changed (``tests/jobs/record_shapes/README.md`` says how each was made)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mlpipe.cli import main
from mlpipe.jobs.atomic_json import write_json_atomic
from mlpipe.jobs.ownership import request_cancel
from mlpipe.jobs.record import JobRecord, StepRecord, SummaryRecord
from mlpipe.jobs.recorder import JobRecorder
from mlpipe.jobs.report import render_job_report
from mlpipe.jobs.store import JobStore

SHAPES = Path(__file__).parent / "record_shapes"
FIXTURES = sorted(SHAPES.glob("*.json"))


def _stored(tmp_path: Path, fixture: Path) -> tuple[JobStore, str]:
    """A runs folder holding ``fixture`` as its job's record; the store and the job's name."""
    name = json.loads(fixture.read_text())["name"]
    (tmp_path / "runs" / name).mkdir(parents=True)
    shutil.copy(fixture, tmp_path / "runs" / name / "job.json")
    return JobStore(tmp_path / "runs"), name


def test_there_is_a_fixture_of_each_earlier_shape() -> None:
    assert len(FIXTURES) >= 7
    keys = {tuple(json.loads(f.read_text())) for f in FIXTURES}
    assert len(keys) >= 3  # the job-level keys changed twice (allow_external_outputs, kind)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda path: path.stem)
def test_an_earlier_record_is_read_typed(tmp_path: Path, fixture: Path) -> None:
    data = json.loads(fixture.read_text())
    store, name = _stored(tmp_path, fixture)
    record = store.load(name)
    assert isinstance(record, JobRecord) and record.status == data["status"]
    assert record.name == data["name"] and record.attempt == data["attempt"]
    assert list(record.steps) == list(data["steps"])
    for name, step in record.steps.items():
        assert isinstance(step, StepRecord) and step.status == data["steps"][name]["status"]
        if step.kind == "parallel":
            assert isinstance(step.summary, SummaryRecord)
            assert step.summary.mini_batches_total == 3 and step.summary.items_failed == 1
            assert step.summary.top_errors[0][:2] == ("ValueError: bad record", 1)
    assert not record.stale  # a record that ended is never stale


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda path: path.stem)
def test_an_earlier_record_is_written_back_byte_for_byte(tmp_path: Path, fixture: Path) -> None:
    store, name = _stored(tmp_path, fixture)
    path = store.record_path(name)
    write_json_atomic(path, store.load(name).to_json())
    assert path.read_bytes() == fixture.read_bytes()
    recorder = JobRecorder(store, name, store.load(name))
    recorder.save()  # how the runner writes it
    assert path.read_bytes() == fixture.read_bytes()


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda path: path.stem)
def test_every_reader_takes_an_earlier_record(
        tmp_path: Path, fixture: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, name = _stored(tmp_path, fixture)
    runs = str(store.runs_dir)
    assert main(["job", "show", name, "--runs-dir", runs]) == 0
    out = capsys.readouterr().out
    assert f"job {name}:" in out and "run folder: /home/user/project" in out
    assert main(["job", "show", name, "-o", "json", "--runs-dir", runs]) == 0
    shown = json.loads(capsys.readouterr().out)
    original = json.loads(fixture.read_text())
    assert shown["status"] == original["status"].capitalize()
    assert {k: v for k, v in shown.items() if k not in ("status", "steps", "type", "services")} \
        == {k: v for k, v in original.items() if k not in ("status", "steps", "type")}
    assert main(["job", "list", "-o", "json", "--runs-dir", runs]) == 0
    assert [job["name"] for job in json.loads(capsys.readouterr().out)] == [original["name"]]
    assert main(["job", "list", "--parent-job-name", name, "-o", "json",
                 "--runs-dir", runs]) == 0
    assert [step["name"] for step in json.loads(capsys.readouterr().out)] == \
        [f"{name}_{step}" for step in original["steps"]]  # child jobs: <job>_<step>
    page = render_job_report(store.load(name), tmp_path)
    assert f"Job {original['name']}:" in page


def test_a_change_rewrites_only_what_changed(tmp_path: Path) -> None:
    """job cancel of a job whose runner is gone marks it canceled: the rest of the record,
    its unknown keys and the order of its keys stay as the earlier version wrote them."""
    fixture = SHAPES / "2026-11-21_62e7a7d_first_cli.json"
    data = json.loads(fixture.read_text())
    data["status"], data["ended_at"], data["pid"] = "running", None, None
    data["steps"]["report"]["status"] = "running"
    data["a_key_of_a_later_version"] = {"kept": True}
    (tmp_path / "runs" / "shapes").mkdir(parents=True)
    path = tmp_path / "runs" / "shapes" / "job.json"
    path.write_text(json.dumps(data, indent=2) + "\n")
    store = JobStore(tmp_path / "runs")
    assert store.load("shapes").stale
    assert request_cancel(store, "shapes").status == "canceled"
    written = json.loads(path.read_text())
    assert list(written) == list(data)  # same keys, same order, nothing added (no "stale")
    changed = {key for key in data if written[key] != data[key]}
    assert changed == {"status", "ended_at", "steps"}
    assert written["status"] == "canceled" and written["steps"]["report"]["status"] == "canceled"
    assert written["steps"]["score"] == data["steps"]["score"]
    assert written["a_key_of_a_later_version"] == {"kept": True}
