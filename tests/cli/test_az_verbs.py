"""az ml's verbs as users type them: ``--name/-n``, ``--max-results/-r``, ``-o yaml``, and
usage errors that print the sub-command's usage (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_cli

PIPELINE = """\
type: pipeline
display_name: {name}
settings:
  default_compute: azureml:cpu-cluster
jobs:
  hello:
    type: command
    command: echo hello
    environment: azureml:env:1
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A runs folder with three completed jobs; returns it and their names, oldest first."""
    root = tmp_path_factory.mktemp("az_verbs")
    names = []
    for index in range(3):
        source = root / f"p{index}" / "pipeline.yml"
        source.parent.mkdir()
        source.write_text(PIPELINE.format(name=f"job{index}"), encoding="utf-8")
        name = f"az_job_{index}"
        proc = run_cli("job", "create", "-f", str(source), "-n", name, "--runs-dir",
                       str(root / "runs"), "--no-progress")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        names.append(name)
    return root / "runs", names


def test_show_takes_the_name_as_option_or_positional_and_prints_yaml(runs) -> None:
    runs_dir, names = runs
    by_option = run_cli("job", "show", "-n", names[0], "-o", "yaml", "--runs-dir", str(runs_dir))
    assert by_option.returncode == 0, by_option.stderr
    record = yaml.safe_load(by_option.stdout)
    assert record["name"] == names[0] and record["status"] == "Completed"  # Azure's words
    assert record["steps"]["hello"]["status"] == "Completed"
    long_form = run_cli("job", "show", "--name", names[0], "--output", "json",
                        "--runs-dir", str(runs_dir))
    positional = run_cli("job", "show", names[0], "-o", "json", "--runs-dir", str(runs_dir))
    assert json.loads(long_form.stdout) == json.loads(positional.stdout) == record


def test_stream_and_cancel_take_name_option(runs) -> None:
    runs_dir, names = runs
    stream = run_cli("job", "stream", "-n", names[1], "--runs-dir", str(runs_dir))
    assert stream.returncode == 0 and f"job {names[1]}: completed" in stream.stdout
    cancel = run_cli("job", "cancel", "--name", names[1], "--runs-dir", str(runs_dir))
    assert cancel.returncode == 1 and f"job {names[1]} is completed" in cancel.stdout


def test_list_max_results_keeps_the_newest(runs) -> None:
    runs_dir, names = runs
    proc = run_cli("job", "list", "-r", "2", "-o", "yaml", "--runs-dir", str(runs_dir))
    listed = [job["name"] for job in yaml.safe_load(proc.stdout)]
    assert listed == [names[2], names[1]]
    every = run_cli("job", "list", "--max-results", "10", "-o", "json", "--runs-dir", str(runs_dir))
    assert [job["name"] for job in json.loads(every.stdout)] == names[::-1]
    table = run_cli("job", "list", "-r", "1", "--runs-dir", str(runs_dir))
    assert names[2] in table.stdout and names[1] not in table.stdout


@pytest.mark.parametrize("argv, command, message", [
    (["job", "show"], "job show", "the job's name is required"),
    (["job", "show", "a", "-n", "b"], "job show", "two job names given"),
    (["job", "show", "-n", "a", "--bogus"], "job show", "unrecognized arguments: --bogus"),
    (["job", "stream", "--nme", "a"], "job stream", "unrecognized arguments: --nme"),
    (["job", "cancel", "-n", "a", "extra"], "job cancel", "two job names given"),
    (["job", "cancel", "a", "extra"], "job cancel", "unrecognized arguments: extra"),
    (["job", "list", "-r", "0"], "job list", "must be 1 or more"),
    (["job", "list", "-o", "xml"], "job list", "invalid choice: 'xml'"),
    (["job", "validate", "-o", "csv", "x.yml"], "job validate", "invalid choice: 'csv'"),
    (["job", "bogus"], "job", "invalid choice: 'bogus'"),
])
def test_usage_errors_print_the_sub_commands_usage(argv: list[str], command: str,
                                                   message: str) -> None:
    proc = run_cli(*argv)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith(f"usage: mlpipe {command} "), proc.stderr
    assert lines[-1].startswith(f"mlpipe {command}: error: ") and message in lines[-1]
    assert "Traceback" not in proc.stderr


def test_validate_prints_yaml(tmp_path: Path) -> None:
    source = tmp_path / "pipeline.yml"
    source.write_text(PIPELINE.format(name="v"), encoding="utf-8")
    proc = run_cli("job", "validate", "-o", "yaml", str(source))
    assert proc.returncode == 0, proc.stderr
    assert yaml.safe_load(proc.stdout) == json.loads(
        run_cli("job", "validate", "-o", "json", str(source)).stdout)
    table = run_cli("job", "validate", "-o", "table", str(source))  # az's default name: the text
    assert table.returncode == 0 and table.stdout == run_cli("job", "validate", str(source)).stdout


def test_only_show_errors_prints_errors_and_one_total(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "prep.py").write_text("print('hi')\n")
    good = tmp_path / "good.yml"
    good.write_text("type: pipeline\nsettings:\n  default_compute: azureml:cpu\n"
                    "jobs:\n  hello:\n    type: command\n    command: echo hi\n"
                    "    environment: azureml:env:1\n"
                    "    resources:\n      instance_type: Standard_D2\n")  # valid, one warning
    bad = tmp_path / "bad.yml"
    bad.write_text("type: command\nname: bad\ncode: ./src\ncommand: python prep.py ${{inputs.nope}}\n"
                   "environment: azureml:env:1\n")
    other = tmp_path / "environment.yml"
    other.write_text("name: env\ndependencies:\n  - pandas\n")
    proc = run_cli("job", "validate", "--skip-unknown", "--only-show-errors", "good.yml", "bad.yml",
                   "environment.yml", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        "bad.yml:4:1: command: ${{inputs.nope}} names no input of this step (declared inputs: none)",
        "bad.yml: invalid: 1 error",
        "2 files checked: 1 valid, 1 invalid, 1 skipped (1 error, 1 warning)",
    ]
    single = run_cli("job", "validate", "-q", "good.yml", cwd=tmp_path)
    assert single.returncode == 0
    assert single.stdout.splitlines() == ["1 file checked: 1 valid, 0 invalid (0 errors, 1 warning)"]
