"""Generated job names: the YAML's display_name or experiment_name, else the folder of a
generically named file, else the file's stem; Azure's name pattern; unique. Every verb and
the SDK check a given name through the one rule (mlpipe.runs.check_job_name)."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from mlpipe.runs import JOB_NAME as NAME_PATTERN
from mlpipe.runs import generate_job_name, job_name_base, slugify
from tests.conftest import run_cli

AT = datetime(2026, 11, 21, 9, 15, 2, tzinfo=timezone.utc)


@pytest.mark.parametrize("source, fields, base", [
    ("samples/file-batch/pipeline.yml", {"display_name": "File Batch: Word-Count (v2)!"},
     "file_batch_word-count_v2"),
    ("samples/file-batch/pipeline.yml", {"display_name": "  ", "experiment_name": "nightly scoring"},
     "nightly_scoring"),
    ("samples/file-batch/pipeline.yml", {}, "file-batch"),
    ("samples/Tabular Scoring/job.yaml", {}, "tabular_scoring"),
    ("samples/x/main.yml", {"display_name": 42}, "x"),
    ("jobs/score-batch.yml", {}, "score-batch"),
    ("/pipeline.yml", {}, "pipeline"),
    ("jobs/---.yml", {"display_name": "äöü"}, "jobs"),
])
def test_name_base(source: str, fields: dict, base: str) -> None:
    assert job_name_base(source, fields.get("display_name"), fields.get("experiment_name")) == base
    name = generate_job_name(source, AT, **fields)
    assert NAME_PATTERN.match(name)
    assert re.fullmatch(re.escape(base) + r"_\d{8}_\d{6}_[0-9a-f]{4}", name)


def test_slugify_keeps_azure_pattern_and_length() -> None:
    assert slugify("__Hello  World__") == "hello_world"
    assert slugify("-a-") == "a"
    assert len(slugify("x" * 400)) == 200
    assert slugify("***") == ""


def test_names_are_unique_against_the_store() -> None:
    taken: set[str] = set()
    for _ in range(50):
        name = generate_job_name("a/pipeline.yml", AT, taken=taken.__contains__)
        assert name not in taken
        taken.add(name)


def test_cli_names_a_job_after_its_display_name(tmp_path: Path) -> None:
    folder = tmp_path / "greeting"
    folder.mkdir()
    named = folder / "pipeline.yml"
    named.write_text("type: pipeline\ndisplay_name: Say Hello\njobs:\n  hi:\n    type: command\n"
                     "    command: echo hi\n", encoding="utf-8")
    proc = run_cli("job", "create", "--file", str(named), "--runs-dir", str(tmp_path / "runs"),
                   "--no-progress")
    assert proc.returncode == 0, proc.stderr
    (record,) = (tmp_path / "runs").glob("*/job.json")
    assert record.parent.name.startswith("say_hello_")
    assert proc.stdout.splitlines()[0] == f"job: {record.parent.name}"


def test_set_display_name_names_the_job(tmp_path: Path) -> None:
    source = tmp_path / "job.yml"
    source.write_text("type: pipeline\ndisplay_name: Old\njobs:\n  hi:\n    type: command\n"
                      "    command: echo hi\n", encoding="utf-8")
    proc = run_cli("job", "create", "--file", str(source), "--runs-dir", str(tmp_path / "runs"),
                   "--no-progress", "--set", "display_name=Nightly Run")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("job: nightly_run_")


VERBS = [["job", "show"], ["job", "stream"], ["job", "cancel"], ["job", "rerun"],
         ["job", "report"], ["job", "debug", "--step", "s", "--mini-batch", "m"],
         ["job", "download"], ["job", "advise"]]


@pytest.mark.parametrize("verb", VERBS, ids=lambda verb: verb[1])
@pytest.mark.parametrize("name", ["j1/../j1", "x" * 300, "datastores"])
def test_every_verb_checks_the_name_through_the_one_rule(tmp_path: Path, verb: list[str],
                                                         name: str) -> None:
    runs = tmp_path / "runs"
    proc = run_cli(*verb, "-n", name, "--runs-dir", str(runs))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc
    assert proc.stderr.count("\n") == 1 and re.match(r"mlpipe( job \w+)?: error: ", proc.stderr)
    assert not runs.exists() or not any(runs.iterdir())


def test_the_sdk_checks_the_name_too(tmp_path: Path) -> None:
    from mlpipe.jobs import JobStore
    from mlpipe.jobs.store import JobNameError

    with pytest.raises(JobNameError, match="invalid job name"):
        JobStore(tmp_path).load("../../etc")
