"""Azure's ``mltable`` package, as published entry scripts use it, resolves to mlpipe's mirror
where it is not installed (azureml-examples' oj-sales partition step imports it; the AutoML
preprocess steps read their inputs with ``mltable.load(path).to_pandas_dataframe()``)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import mlpipe  # noqa: F401  (installs the import hook)
from mlpipe.unavailable import NotAvailableLocally
from tests.conftest import run_cli

TABLE = "region,units\nnorth,3\nsouth,5\nnorth,7\n"
MLTABLE = ("paths:\n  - file: ./sales.csv\ntransformations:\n  - read_delimited:\n"
           "      delimiter: \",\"\n      encoding: utf8\n      header: all_files_same_headers\n")


@pytest.fixture
def mirrored() -> None:
    if not getattr(importlib.import_module("mltable"), "__mlpipe_mirror__", False):
        pytest.skip("the real mltable package is installed here")


def _table(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sales.csv").write_text(TABLE)
    (folder / "MLTable").write_text(MLTABLE)
    return folder


def test_load_take_columns_save_and_from_files(tmp_path: Path, mirrored: None) -> None:
    import mltable

    table = mltable.load(str(_table(tmp_path / "data")))
    assert table.to_pandas_dataframe()["units"].tolist() == [3, 5, 7]
    assert table.take(2).drop_columns("region").to_pandas_dataframe().to_dict("list") == \
        {"units": [3, 5]}
    built = mltable.from_delimited_files([{"file": str(tmp_path / "data" / "sales.csv")}])
    saved = built.save(tmp_path / "data" / "copy")
    assert mltable.load(tmp_path / "data" / "copy").to_pandas_dataframe().shape == (3, 2)
    assert saved.paths == [{"file": str(tmp_path / "data" / "sales.csv")}]
    files = mltable.from_paths([{"folder": str(tmp_path / "data")}]).to_pandas_dataframe()
    assert sorted(Path(p).name for p in files["Path"]) == ["MLTable", "MLTable", "sales.csv"]
    with pytest.raises(NotAvailableLocally, match=r"mltable\.load\('azureml://"):
        mltable.load("azureml://datastores/blob/paths/sales")


PIPELINE = """\
type: pipeline
settings: {default_compute: azureml:cpu-cluster}
inputs:
  sales: {type: mltable, path: ./sales}
jobs:
  count:
    type: command
    code: ./src
    command: python count.py ${{inputs.table}} ${{outputs.out}}
    environment: azureml:env:1
    inputs: {table: "${{parent.inputs.sales}}"}
    outputs: {out: {type: uri_folder}}
  score:
    type: parallel
    inputs: {table: "${{parent.inputs.sales}}"}
    outputs: {scored: {type: uri_file}}
    input_data: ${{inputs.table}}
    mini_batch_size: "1kb"
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      environment: azureml:env:1
      append_row_to: ${{outputs.scored}}
"""

COUNT = """\
import sys
import mltable

frame = mltable.load(sys.argv[1]).to_pandas_dataframe()
open(sys.argv[2] + "/rows.txt", "w").write(str(frame["units"].sum()))
"""

SCORE = """\
import mltable  # imported by the published scripts, not used


def init():
    pass


def run(mini_batch):
    return [f"{r} {u}" for r, u in zip(mini_batch["region"], mini_batch["units"])]
"""


@pytest.mark.slow
def test_entry_scripts_of_command_and_parallel_steps_import_mltable(tmp_path: Path,
                                                                     mirrored: None) -> None:
    _table(tmp_path / "sales")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "count.py").write_text(COUNT)
    (tmp_path / "src" / "score.py").write_text(SCORE)
    (tmp_path / "pipeline.yml").write_text(PIPELINE)
    proc = run_cli("job", "create", "-f", str(tmp_path / "pipeline.yml"), "-n", "sales",
                   "--runs-dir", str(tmp_path / "runs"), "--no-progress")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    job = tmp_path / "runs" / "sales"
    assert (job / "count" / "outputs" / "out" / "rows.txt").read_text() == "15"
    (scored,) = (job / "score" / "outputs" / "scored").rglob("*.txt")
    assert sorted(scored.read_text().split("\n")[:-1]) == ["north 3", "north 7", "south 5"]
