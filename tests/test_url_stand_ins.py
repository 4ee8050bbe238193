"""Downloads in the processes a job starts (a command step's Python, a parallel step's entry
script) read the URL stand-ins of the job's ``mlpipe.toml`` however the job was started
(they used to work only under ``mlpipe run-script``, in the notebook's own process), and a
URL that cannot be reached says which one and how to map it instead of a bare
``URLError: Name or service not known``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.jobs.support import run_here, write

TOML = """\
[assets]
"https://data.example.invalid/mnist" = "./blob"
"""

PIPELINE = """\
type: pipeline
jobs:
  fetch:
    type: command
    code: ./src
    command: python fetch.py {url} ${{{{outputs.data}}}}
    environment: azureml:e:1
    outputs:
      data: {{type: uri_folder}}
  score:
    type: parallel
    inputs:
      files: ${{{{parent.jobs.fetch.outputs.data}}}}
    outputs:
      rows: {{type: uri_file}}
    input_data: ${{{{inputs.files}}}}
    mini_batch_size: "1"
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      environment: azureml:e:1
      append_row_to: ${{{{outputs.rows}}}}
"""

FETCH = """\
import os, sys, urllib.request
urllib.request.urlretrieve(sys.argv[1], os.path.join(sys.argv[2], "images.txt"))
"""

SCORE = """\
import urllib.request

def init():
    global LABELS
    LABELS = urllib.request.urlopen("https://data.example.invalid/mnist/labels.txt").read()

def run(mini_batch):
    return [LABELS.decode().strip() + " " + open(path).read().strip() for path in mini_batch]
"""


def job(tmp_path: Path, url: str) -> Path:
    write(tmp_path / "mlpipe.toml", TOML)
    write(tmp_path / "blob" / "images.txt", "seven\n")
    write(tmp_path / "blob" / "labels.txt", "7\n")
    write(tmp_path / "src" / "fetch.py", FETCH)
    write(tmp_path / "src" / "score.py", SCORE)
    return write(tmp_path / "pipeline.yml", PIPELINE.format(url=url))


def test_step_processes_read_the_jobs_url_stand_ins(tmp_path: Path) -> None:
    ran = run_here(job(tmp_path, "https://data.example.invalid/mnist/images.txt"),
                   tmp_path / "runs", "fetched")
    assert ran.proc.returncode == 0, ran.record
    assert ran.append_lines("score") == ["7 seven"]


def test_an_unreachable_url_names_itself_and_the_stand_in(tmp_path: Path) -> None:
    url = "https://elsewhere.example.invalid/t10k-images.gz"
    ran = run_here(job(tmp_path, url), tmp_path / "runs", "offline")
    assert ran.record is not None and ran.record["status"] == "failed"
    error = ran.step("fetch")["error"]
    assert (f"{url} cannot be reached from here; to run offline, map it (or a prefix of it) "
            f"to a local file in mlpipe.toml [assets] in {tmp_path}: "
            f'"{url}" = "./local/path"') in error


URLLIB3_CLIENT = """\
import shutil, urllib3
from mlpipe.url_stand_ins import install_url_stand_ins
install_url_stand_ins()
pool = urllib3.PoolManager()
with pool.request("GET", "https://data.example.invalid/mnist/images.txt",
                  preload_content=False) as response, open("got.txt", "wb") as out:
    shutil.copyfileobj(response, out)
print(response.status, pool.request("GET", "https://data.example.invalid/mnist/none").status)
"""


def test_urllib3_reads_the_stand_ins_too(tmp_path: Path) -> None:
    """azureml-examples' 2e notebook downloads MNIST with ``urllib3.PoolManager`` itself."""
    pytest.importorskip("urllib3")
    job(tmp_path, "unused")
    ran = subprocess.run([sys.executable, "-c", URLLIB3_CLIENT], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "200 404\n"
    assert (tmp_path / "got.txt").read_text() == "seven\n"


SWITCHED = """\
import urllib.request
import mlpipe  # a notebook whose imports were switched to mlpipe
print(urllib.request.urlopen("https://data.example.invalid/mnist/labels.txt").read().decode())
"""


def test_importing_mlpipe_where_an_mlpipe_toml_is_serves_its_stand_ins(tmp_path: Path) -> None:
    """A notebook run with plain ``python`` and its imports switched downloads its data itself
    (MachineLearningNotebooks' MNIST and batch-scoring notebooks), as under ``run-script``."""
    job(tmp_path, "unused")
    ran = subprocess.run([sys.executable, "-c", SWITCHED], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert (ran.returncode, ran.stdout) == (0, "7\n\n"), ran.stderr
