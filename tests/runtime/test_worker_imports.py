"""A parallel step's worker installs the import mirrors from the lowest floor
(``mlpipe.import_mirrors``), never through the run-script front end: it does not import
``mlpipe.scripts`` nor, through it, the compiler; the URL stand-ins (``mlpipe.url_stand_ins``)
load only in a job that has an ``mlpipe.toml``. A worker of a files step does not load the
listing or the MLTable modules either (each worker paid ~0.08 s of CPU for them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlpipe.cli import main
from tests.cli.support import project

SCRIPT = """\
import json
import sys


def run(mini_batch):
    # what the worker loaded before the entry script imports anything of Azure's
    loaded = sorted(name for name in sys.modules
                    if name.startswith(("mlpipe.compiler", "mlpipe.scripts",
                                        "mlpipe.url_stand_ins", "mlpipe.data.batches",
                                        "mlpipe.data.mltable_spec", "ruamel")))
    hook = [type(finder).__name__ for finder in sys.meta_path
            if type(finder).__module__ == "mlpipe.import_mirrors"]
    return [json.dumps({"mirror": hook, "loaded": loaded}) for _ in mini_batch]
"""


def _rows(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> list[dict[str, object]]:
    source = project(tmp_path, "probe.py", SCRIPT, files=2)
    code = main(["job", "create", "-f", str(source), "-n", name, "--runs-dir",
                 str(tmp_path / "runs"), "--no-progress"])
    assert code == 0, capsys.readouterr()
    rows = tmp_path / "runs" / name / "p" / "outputs" / "o"
    text = (rows if rows.is_file() else rows / "parallel_run_step.txt").read_text()
    return [json.loads(line) for line in text.splitlines() if line]


def test_a_worker_imports_neither_the_run_script_front_end_the_compiler_nor_the_listing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = _rows(tmp_path, capsys, "plain")
    assert len(rows) == 2
    for row in rows:
        assert row == {"mirror": ["MirrorFinder"], "loaded": []}


@pytest.mark.slow  # a second whole job
def test_a_job_with_an_mlpipe_toml_gets_its_url_stand_ins_in_the_workers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mlpipe.toml").write_text('[assets]\n"https://example.invalid/x" = "./x"\n')
    rows = _rows(tmp_path, capsys, "mapped")
    assert rows and all("mlpipe.url_stand_ins" in row["loaded"] for row in rows)  # type: ignore[operator]
    assert all("mlpipe.scripts" not in row["loaded"] for row in rows)  # type: ignore[operator]
