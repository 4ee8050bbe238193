"""``mlpipe component|data|model create --file F``, as published ``az ml`` walkthroughs
register assets before ``az ml job create``: a job over the same runs folder then reads
``azureml:name@latest`` / ``azureml:name:version`` as the registered files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

COMPONENT = """\
name: upper
version: "3"
type: command
code: ./src
command: python upper.py ${{inputs.text}} ${{outputs.out}}
environment: azureml:e:1
inputs:
  text: {type: uri_folder}
outputs:
  out: {type: uri_folder}
"""

UPPER = """\
import pathlib, sys
text = (pathlib.Path(sys.argv[1]) / "words.txt").read_text()
(pathlib.Path(sys.argv[2]) / "words.txt").write_text(text.upper())
"""

DATA = """\
name: words
type: uri_folder
path: ./data
"""

PIPELINE = """\
type: pipeline
jobs:
  shout:
    type: command
    component: azureml:upper@latest
    inputs:
      text: {type: uri_folder, path: azureml:words:1}
"""


@pytest.mark.slow  # four CLI runs and a job
def test_registered_assets_are_what_a_job_reads(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "upper.py").write_text(UPPER)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "words.txt").write_text("hello\n")
    (tmp_path / "upper.yml").write_text(COMPONENT)
    (tmp_path / "words.yml").write_text(DATA)
    (tmp_path / "pipeline.yml").write_text(PIPELINE)
    runs = str(tmp_path / "runs")

    made = run_cli("component", "create", "--file", "upper.yml", "--runs-dir", runs,
                   "-o", "json", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout) == {
        "id": "azureml:upper:3", "name": "upper", "version": "3", "type": "command",
        "source": str(tmp_path / "upper.yml")}
    data = run_cli("data", "create", "-f", "words.yml", "--runs-dir", runs,
                   "--query", "id", "-o", "tsv", cwd=tmp_path)
    assert (data.returncode, data.stdout) == (0, "azureml:words:1\n"), data.stderr

    job = run_cli("job", "create", "-f", "pipeline.yml", "--runs-dir", runs, "--name", "j",
                  "--no-progress", cwd=tmp_path)
    assert job.returncode == 0, job.stderr
    out = tmp_path / "runs" / "j" / "shout" / "outputs" / "out" / "words.txt"
    assert out.read_text() == "HELLO\n"


@pytest.mark.slow  # three CLI runs
def test_an_asset_without_a_name_or_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "anon.yml").write_text("type: uri_folder\npath: ./data\n")
    nameless = run_cli("data", "create", "-f", "anon.yml", cwd=tmp_path)
    assert nameless.returncode == 1
    assert nameless.stderr == ("mlpipe data create: anon.yml: a data asset needs a 'name' to "
                               "be registered (or give --name)\n")
    named = run_cli("model", "create", "-f", "anon.yml", "--name", "m", "--version", "7",
                    "--runs-dir", "runs", cwd=tmp_path)
    assert named.returncode == 0, named.stderr
    assert named.stdout == "registered model m:7 (azureml:m:7) from anon.yml\n"
    missing = run_cli("component", "create", "-f", "nope.yml", cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (
        2, "mlpipe component create: nope.yml: no such file\n")


@pytest.mark.slow  # three CLI runs
def test_a_component_az_ml_would_refuse_is_not_registered(tmp_path: Path) -> None:
    (tmp_path / "words.yml").write_text(DATA)  # a data asset, not a component
    wrong = run_cli("component", "create", "-f", "words.yml", "--runs-dir", "runs", cwd=tmp_path)
    assert wrong.returncode == 1
    assert "type: must be one of parallel, command" in wrong.stderr
    assert not (tmp_path / "runs" / "assets" / "registry.json").exists()
    (tmp_path / "anon.yml").write_text(COMPONENT.replace("name: upper\n", "")
                                       .replace("code: ./src\n", ""))
    named = run_cli("component", "create", "-f", "anon.yml", "--name", "loud", "--runs-dir",
                    "runs", cwd=tmp_path)
    assert named.returncode == 0, named.stderr
    assert named.stdout == "registered component loud:3 (azureml:loud:3) from anon.yml\n"
    folder = run_cli("component", "create", "-f", ".", cwd=tmp_path)
    assert (folder.returncode, folder.stderr) == (
        2, "mlpipe component create: .: not a file\n")
