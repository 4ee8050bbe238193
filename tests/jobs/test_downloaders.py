"""``curl`` and ``wget`` in a command step serve the URLs the job's ``mlpipe.toml`` maps from
their local stand-ins (azureml-examples' CIFAR-10 ``wget URL; tar -xzf ...`` and 1d's
``curl ${{inputs.url}} > out/file``), and a URL that is not mapped runs the real program,
whose "could not resolve host" is followed by the ``mlpipe.toml`` line that would serve it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.jobs.support import run_here, write

TOML = '[assets]\n"https://data.example.invalid/sets" = "./blob"\n'

PIPELINE = """\
type: pipeline
jobs:
  fetch:
    type: command
    command: >-
      curl -sL https://data.example.invalid/sets/a.csv > ${{outputs.out}}/piped.csv &&
      curl -o ${{outputs.out}}/named.csv https://data.example.invalid/sets/a.csv &&
      wget -q https://data.example.invalid/sets/b.tar.gz -P ${{outputs.out}} &&
      cd ${{outputs.out}} && wget https://data.example.invalid/sets/a.csv &&
      curl -O --output-dir sub https://data.example.invalid/sets/b.tar.gz
    environment: azureml:e:1
    outputs:
      out: {type: uri_folder}
"""

UNMAPPED = """\
type: pipeline
jobs:
  fetch:
    type: command
    command: curl -sS https://elsewhere.example.invalid/x.csv -o x.csv
    environment: azureml:e:1
"""


@pytest.mark.slow  # five downloads, each a Python start
def test_curl_and_wget_copy_mapped_urls(tmp_path: Path) -> None:
    write(tmp_path / "mlpipe.toml", TOML)
    write(tmp_path / "blob" / "a.csv", "x,y\n1,2\n")
    write(tmp_path / "blob" / "b.tar.gz", "not really a tarball\n")
    ran = run_here(write(tmp_path / "pipeline.yml", PIPELINE), tmp_path / "runs", "dl")
    assert ran.proc.returncode == 0, ran.record
    out = tmp_path / "runs" / "dl" / "fetch" / "outputs" / "out"
    found = {str(p.relative_to(out)): p.read_text() for p in out.rglob("*") if p.is_file()}
    assert found == {"piped.csv": "x,y\n1,2\n", "named.csv": "x,y\n1,2\n", "a.csv": "x,y\n1,2\n",
                     "b.tar.gz": "not really a tarball\n",
                     "sub/b.tar.gz": "not really a tarball\n"}


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_an_unmapped_url_runs_the_real_program_and_says_how_to_map_it(tmp_path: Path) -> None:
    ran = run_here(write(tmp_path / "pipeline.yml", UNMAPPED), tmp_path / "runs", "off")
    assert ran.record is not None and ran.record["status"] == "failed"
    error = ran.step("fetch")["error"]
    assert "curl: (6)" in error  # the real curl ran (there is no network here)
    assert ("curl: https://elsewhere.example.invalid/x.csv cannot be reached from here; to run "
            "offline, map it (or a prefix of it) to a local file in mlpipe.toml [assets]") in error


@pytest.mark.parametrize(("argv", "where"), [
    (["curl", "-sSLo", "got.csv", "https://data.example.invalid/sets/a.csv"], "got.csv"),
    (["curl", "-fsSL", "https://data.example.invalid/sets/a.csv", "--output=got.csv"],
     "got.csv"),
    (["wget", "-qO-", "https://data.example.invalid/sets/a.csv"], None),
    (["wget", "-qP", "sub", "https://data.example.invalid/sets/a.csv"], "sub/a.csv"),
], ids=["curl -sSLo", "curl --output=", "wget -qO-", "wget -qP"])
def test_bundled_short_options_say_where_the_data_goes(tmp_path: Path, argv: list[str],
                                                       where: str | None) -> None:
    write(tmp_path / "mlpipe.toml", TOML)
    write(tmp_path / "blob" / "a.csv", "x,y\n1,2\n")
    ran = subprocess.run([sys.executable, "-m", "mlpipe.jobs.downloaders", *argv],
                         cwd=tmp_path, capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    if where is None:
        assert ran.stdout == "x,y\n1,2\n"
    else:
        assert ran.stdout == ""
        assert (tmp_path / where).read_text() == "x,y\n1,2\n"
