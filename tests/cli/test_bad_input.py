"""The CLI with bad command lines and bad files: one clear line each, never a traceback.

Exit codes: 0 ok, 1 validation or job failure, 2 usage error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import run_cli

COMMAND_PIPELINE = """\
type: pipeline
display_name: {display_name}
jobs:
  hello:
    type: command
    command: echo hello
"""


def no_traceback(proc) -> None:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def finished_job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A runs folder holding one completed job; returns (runs folder, job name)."""
    root = tmp_path_factory.mktemp("ux_cli")
    source = write(root / "greet" / "pipeline.yml", COMMAND_PIPELINE.format(display_name="Greet Job"))
    proc = run_cli("job", "create", "--file", str(source), "--runs-dir", str(root / "runs"),
                   "--no-progress")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (name,) = [p.parent.name for p in (root / "runs").glob("*/job.json")]
    return root / "runs", name


# -- usage errors: exit 2 ---------------------------------------------------------------------------

def test_job_create_missing_file_or_folder_is_a_usage_error(tmp_path: Path) -> None:
    missing = run_cli("job", "create", "--file", str(tmp_path / "nope.yml"), "--runs-dir", str(tmp_path))
    assert missing.returncode == 2 and missing.stderr.strip() == \
        f"mlpipe: error: {tmp_path / 'nope.yml'}: file not found"
    folder = run_cli("job", "create", "--file", str(tmp_path), "--runs-dir", str(tmp_path / "r"))
    assert folder.returncode == 2 and "is a folder, not a YAML file" in folder.stderr
    for proc in (missing, folder):
        no_traceback(proc)


def test_unusable_runs_folder_is_a_usage_error(tmp_path: Path) -> None:
    source = write(tmp_path / "p.yml", COMMAND_PIPELINE.format(display_name="x"))
    a_file = write(tmp_path / "runs.txt", "not a folder")
    created = run_cli("job", "create", "--file", str(source), "--runs-dir", str(a_file))
    assert created.returncode == 2
    assert f"the runs folder {a_file} is a file, not a folder" in created.stderr
    below_file = run_cli("job", "create", "--file", str(source), "--runs-dir", str(a_file / "runs"))
    assert below_file.returncode == 2
    assert f"cannot create the runs folder {a_file / 'runs'}" in below_file.stderr
    listed = run_cli("job", "list", "--runs-dir", str(a_file))
    assert listed.returncode == 2 and "is a file, not a folder" in listed.stderr
    for proc in (created, below_file, listed):
        no_traceback(proc)


def test_job_names_are_checked_before_reading_a_record(finished_job: tuple[Path, str]) -> None:
    runs, _name = finished_job
    for command in ("show", "stream", "cancel"):
        proc = run_cli("job", command, "../outside", "--runs-dir", str(runs))
        assert proc.returncode == 2, (command, proc.stderr)
        assert "invalid job name '../outside'" in proc.stderr


def test_bad_set_syntax_is_a_usage_error(tmp_path: Path) -> None:
    source = write(tmp_path / "p.yml", COMMAND_PIPELINE.format(display_name="x"))
    for bad in ("jobs.hello", "=3", "jobs..command=x"):
        proc = run_cli("job", "create", "--file", str(source), "--runs-dir", str(tmp_path / "r"),
                       "--set", bad)
        assert proc.returncode == 2, (bad, proc.stderr)
        assert "KEY.PATH=VALUE" in proc.stderr
        no_traceback(proc)


# -- unknown jobs: exit 1 with did-you-mean ---------------------------------------------------------

def test_unknown_job_name_suggests_close_and_prefix_matches(finished_job: tuple[Path, str]) -> None:
    runs, name = finished_job
    typo = run_cli("job", "show", name[:-1], "--runs-dir", str(runs))
    assert typo.returncode == 1
    assert f"no job named '{name[:-1]}' in {runs}; did you mean '{name}'?" in typo.stderr
    empty = run_cli("job", "show", "anything", "--runs-dir", str(runs.parent / "empty"))
    assert empty.returncode == 1 and "no jobs there at all" in empty.stderr


def test_show_prints_the_status_line_and_json(finished_job: tuple[Path, str]) -> None:
    runs, name = finished_job
    table = run_cli("job", "show", name, "--runs-dir", str(runs))
    assert table.returncode == 0
    assert table.stdout.splitlines()[0] == f"job {name}: completed"
    record = json.loads(run_cli("job", "show", name, "--runs-dir", str(runs), "-o", "json").stdout)
    assert record["status"] == "Completed" and record["display_name"] == "Greet Job"


# -- malformed files: exit 1, file:line:col and what was expected -----------------------------------

MALFORMED = {
    "syntax.yml": ("type: pipeline\njobs:\n  a: [1, 2\n",
                   "syntax.yml:4:1: invalid YAML: did not find expected ',' or ']' (while parsing a "
                   "flow sequence that starts at line 3, column 6)"),
    "tabs.yml": ("type: pipeline\njobs:\n\ta: 1\n",
                 "tabs.yml:3:1: invalid YAML: found character that cannot start any token (while "
                 "scanning for the next token) (YAML does not allow tabs for indentation: indent "
                 "with spaces)"),
    "flow.yml": ("type: pipeline\njobs:\n  a:\n    inputs: {d: ${{parent.inputs.d}}}\n",
                 "flow.yml:4:18: invalid YAML: did not find expected ',' or '}' (while parsing a flow "
                 "mapping that starts at line 4, column 13) (inside {...} or [...], quote a binding: "
                 "key: '${{parent.inputs.x}}')"),
    "latin1.yml": (b"type: pipeline\ndisplay_name: caf\xe9\n",
                   "latin1.yml:2:18: not UTF-8 text: byte 0xe9 cannot be decoded (save the file as UTF-8)"),
    "binary.yml": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
                   "binary.yml: not a text file (it contains NUL bytes): expected UTF-8 YAML"),
    "empty.yml": ("", "empty.yml:1:1: the file is empty: expected a YAML mapping"),
    "list.yml": ("- a\n- b\n", "list.yml:1:1: the document must be a mapping of keys to values, got a list"),
}


def test_malformed_yaml_gets_one_located_line(tmp_path: Path) -> None:
    files = [write(tmp_path / name, content) for name, (content, _) in MALFORMED.items()]
    proc = run_cli("job", "validate", *map(str, files), cwd=tmp_path)
    assert proc.returncode == 1
    no_traceback(proc)
    for _content, expected in MALFORMED.values():
        assert expected in proc.stdout.splitlines(), expected
    for name in ("syntax.yml", "latin1.yml"):
        created = run_cli("job", "create", "--file", name, "--runs-dir", str(tmp_path / "r"),
                          cwd=tmp_path)
        assert created.returncode == 1
        no_traceback(created)
        assert created.stderr.splitlines() == [f"{tmp_path / MALFORMED[name][1]}",
                                               f"mlpipe: {name}: 1 problem; nothing was run"]
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_huge_number_is_a_range_error(tmp_path: Path) -> None:
    source = write(tmp_path / "p.yml", COMMAND_PIPELINE.format(display_name="x")
                   + "    resources:\n      instance_count: 99999999999999999999999999\n")
    proc = run_cli("job", "validate", str(source))
    assert proc.returncode == 1
    assert "p.yml:8:7: jobs.hello.resources.instance_count: must be in [1, int.max], got " \
           "99999999999999999999999999" in proc.stdout


def test_component_file_given_to_job_create_is_refused_in_one_line(tmp_path: Path) -> None:
    component = write(tmp_path / "score.yml", "type: parallel\nname: score\n")
    proc = run_cli("job", "create", "--file", str(component), "--runs-dir", str(tmp_path / "r"))
    assert proc.returncode == 1
    no_traceback(proc)
    first = proc.stderr.splitlines()[0]
    assert first.startswith(f"{component}:1:7: this is a parallel component, not a pipeline job")
    assert "mlpipe component validate" in first and len(proc.stderr.splitlines()) == 2
    conda = write(tmp_path / "conda.yml", "name: env\ndependencies: [python=3.11]\n")
    other = run_cli("job", "create", "--file", str(conda), "--runs-dir", str(tmp_path / "r"))
    assert other.returncode == 1
    assert "conda.yml:1:1: not an Azure ML pipeline job: expected 'type: pipeline' and a 'jobs' " \
           "mapping" in other.stderr


def test_pipeline_given_to_component_validate_says_which_command(tmp_path: Path) -> None:
    source = write(tmp_path / "p.yml", COMMAND_PIPELINE.format(display_name="x"))
    proc = run_cli("component", "validate", str(source))
    assert proc.returncode == 1
    assert "p.yml:1:1: type: this is a pipeline job, not a pipeline component (a component has a " \
           "'name' or the pipelineComponent.schema.json $schema) (use 'mlpipe job validate')" \
        in proc.stdout


# -- --set: problems point at --set -----------------------------------------------------------------

def test_set_problems_point_at_the_command_line(tmp_path: Path) -> None:
    source = write(tmp_path / "p.yml", COMMAND_PIPELINE.format(display_name="x"))
    unknown = run_cli("job", "validate", str(source), "--set", "jobs.helo.command=x")
    assert unknown.returncode == 1
    assert "--set: jobs.helo.command: cannot set: no key 'helo' in jobs (did you mean 'hello'?)" \
        in unknown.stdout
    bad_value = run_cli("job", "create", "--file", str(source), "--runs-dir", str(tmp_path / "r"),
                        "--set", "jobs.hello.resources={instance_count: 0}")
    assert bad_value.returncode == 1
    assert "--set: jobs.hello.resources.instance_count: must be in [1, int.max], got 0" \
        in bad_value.stderr
    assert "mlpipe: " + str(source) + ": 1 problem; nothing was run" in bad_value.stderr


def test_help_texts_state_exit_codes_and_schema_out_must_be_a_folder(tmp_path: Path) -> None:
    create = run_cli("job", "create", "--help")
    assert create.returncode == 0
    text = " ".join(create.stdout.split())
    assert "exit codes: 0 the job completed; 1 invalid, failed, canceled or refused; 2 usage error" \
        in text
    assert "display_name, experiment_name" in text
    a_file = write(tmp_path / "schemas", "x")
    proc = run_cli("schema", "export", "--out", str(a_file))
    assert proc.returncode == 2 and proc.stderr.strip() == \
        f"mlpipe: error: --out {a_file} is a file, not a folder"


def test_validate_and_create_word_missing_files_alike(tmp_path: Path) -> None:
    for args in (("job", "validate", "missing.yml"), ("component", "validate", "missing.yml"),
                 ("job", "create", "--file", "missing.yml", "--runs-dir", str(tmp_path / "r"))):
        proc = run_cli(*args, cwd=tmp_path)
        assert proc.returncode == 2 and proc.stderr == "mlpipe: error: missing.yml: file not found\n"
    device = run_cli("job", "validate", "/dev/null")
    assert device.returncode == 2 and device.stderr == "mlpipe: error: /dev/null: is not a regular file\n"
    cancel = run_cli("job", "cancel", "x", "--timeout", "-5", "--runs-dir", str(tmp_path))
    assert cancel.returncode == 2 and "argument --timeout: must be greater than 0, got -5" in cancel.stderr


def test_damaged_records_are_reported_not_raised(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write(runs / "cut" / "job.json", '{"name": "cut", "status": ')
    write(runs / "alist" / "job.json", "[1, 2]")
    listed = run_cli("job", "list", "--runs-dir", str(runs))
    assert listed.returncode == 0
    assert listed.stderr.strip() == (f"mlpipe: skipped 2 unreadable records: {runs / 'alist' / 'job.json'}, "
                                     f"{runs / 'cut' / 'job.json'}")
    for args in (("show", "alist"), ("cancel", "alist"), ("stream", "cut")):
        proc = run_cli("job", *args, "--runs-dir", str(runs))
        assert proc.returncode == 1
        no_traceback(proc)
        assert f"mlpipe: cannot read the record of job '{args[1]}' ({runs / args[1] / 'job.json'}): " \
            in proc.stderr
    source = write(tmp_path / "p.yml", COMMAND_PIPELINE.format(display_name="x"))
    reuse = run_cli("job", "create", "--file", str(source), "--runs-dir", str(runs), "--name", "alist")
    assert reuse.returncode == 1 and "job 'alist' exists but its record cannot be read" in reuse.stderr



def test_records_of_the_wrong_shape_are_reported_not_raised(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write(runs / "fine" / "job.json", '{"status": "completed", "steps": {"a": {"status": "completed"}}, '
                                      '"created_at": "2026-01-02T03:04:05.000+00:00"}')
    write(runs / "steplist" / "job.json", '{"status": "running", "steps": []}')
    write(runs / "stepint" / "job.json", '{"status": "completed", "steps": {"a": 1}}')
    write(runs / "when" / "job.json", '{"status": "completed", "steps": {}, "created_at": 5}')
    listed = run_cli("job", "list", "--runs-dir", str(runs))
    assert listed.returncode == 0 and "fine" in listed.stdout
    assert listed.stderr.startswith("mlpipe: skipped 3 unreadable records: ")
    assert run_cli("job", "show", "fine", "--runs-dir", str(runs)).returncode == 0
    for args in (("show", "steplist"), ("stream", "stepint"), ("cancel", "steplist"),
                 ("show", "when")):
        proc = run_cli("job", *args, "--runs-dir", str(runs))
        assert proc.returncode == 1
        no_traceback(proc)
        assert "not a job record: " in proc.stderr


def test_stream_and_cancel_of_a_record_damaged_meanwhile_end_with_a_message(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys
    import time

    import psutil

    from tests.conftest import REPO

    runs = tmp_path / "runs"
    me = psutil.Process()  # this test process stands in for a live runner
    record = {"status": "running", "steps": {}, "pid": me.pid, "pid_create_time": me.create_time()}
    for args in (("stream", "live"), ("cancel", "live", "--timeout", "60")):
        write(runs / "live" / "job.json", json.dumps(record))
        proc = subprocess.Popen([sys.executable, "-m", "mlpipe", "job", *args, "--runs-dir", str(runs)],
                                env={**os.environ, "PYTHONPATH": str(REPO)}, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(2.0)  # it has read the record and polls it
        write(runs / "live" / "job.json", "[1, 2]")
        _out, err = proc.communicate(timeout=30)
        assert proc.returncode == 1, err
        assert "Traceback" not in err
        assert f"mlpipe: cannot read the record of job 'live' ({runs / 'live' / 'job.json'}): " in err

def test_show_and_list_while_a_job_runs(tmp_path: Path) -> None:
    from tests.jobs.support import spawn_job, wait_for

    runs = tmp_path / "runs"
    flag = tmp_path / "started"
    job = spawn_job(tmp_path, runs, "busy", [("wait", f"touch {flag}; sleep 30")])
    try:
        wait_for(lambda: flag.exists())
        shown = run_cli("job", "show", "busy", "--runs-dir", str(runs))
        assert shown.returncode == 0, shown.stderr
        lines = shown.stdout.splitlines()
        assert lines[0] == "job busy: running"
        row = next(line for line in lines if " wait " in line)
        assert "running" in row and re.search(r"\d+\.\ds", row)  # elapsed, not "-"
        listed = run_cli("job", "list", "--runs-dir", str(runs), "-o", "json")
        assert json.loads(listed.stdout)[0]["status"] == "Running"
        again = run_cli("job", "create", "--file", str(write(tmp_path / "p.yml", "type: pipeline\n")),
                        "--runs-dir", str(runs), "--name", "busy")
        assert again.returncode == 1 and "job busy is being run by process" in again.stderr
    finally:
        assert run_cli("job", "cancel", "busy", "--runs-dir", str(runs)).returncode == 0
        job.wait(timeout=30)
