"""``mlpipe run-script`` on a malformed notebook: one clear line and exit 1, never a
traceback (a cell source that is not text, nesting past the limits, not JSON at all)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlpipe.limits import MAX_JSON_DEPTH
from tests.conftest import run_cli

CASES = {
    "ints": json.dumps({"cells": [{"cell_type": "code", "source": [1, 2, 3]}]}),
    "dict-source": json.dumps({"cells": [{"cell_type": "code", "source": {"a": 1}}]}),
    "deep-brackets": "[" * 100_000,
    "deep-cells": '{"cells": [' + "[" * 50_000 + "]" * 50_000 + "]}",
    "deep-string-is-fine-but-bad-json": '{"cells": "[[[[[[" ',
    "not-utf8": b"\xff\xfe{".decode("latin-1"),
    "cells-not-a-list": json.dumps({"cells": {"cell_type": "code"}}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_malformed_notebook_is_one_line(tmp_path: Path, case: str) -> None:
    notebook = tmp_path / f"{case}.ipynb"
    notebook.write_text(CASES[case], encoding="latin-1" if case == "not-utf8" else "utf-8")
    proc = run_cli("run-script", str(notebook))
    assert proc.returncode == 1, proc
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"mlpipe run-script: {notebook}")


def test_the_messages_say_what_is_wrong(tmp_path: Path) -> None:
    ints = tmp_path / "ints.ipynb"
    ints.write_text(CASES["ints"])
    assert "cells[0].source: expected text or a list of text lines, got a list holding int" \
        in run_cli("run-script", str(ints)).stderr
    deep = tmp_path / "deep.ipynb"
    deep.write_text(CASES["deep-brackets"])
    assert f"{deep}:1:{MAX_JSON_DEPTH + 1}: nested more than {MAX_JSON_DEPTH} levels deep" \
        in run_cli("run-script", str(deep)).stderr


def test_a_well_formed_notebook_still_runs(tmp_path: Path) -> None:
    notebook = tmp_path / "ok.ipynb"
    notebook.write_text(json.dumps({"cells": [
        {"cell_type": "markdown", "source": ["# title"]},
        {"cell_type": "code", "source": ["x = [[[1]]]\n", "print(x[0][0][0] + 1)"]}]}))
    proc = run_cli("run-script", str(notebook))
    assert proc.returncode == 0 and proc.stdout == "2\n", proc


@pytest.mark.parametrize(("call", "code", "said"), [
    ("sys.exit()", 0, ""),
    ("sys.exit(0)", 0, ""),
    ("sys.exit(4)", 4, ""),
    ("sys.exit('no workspace configured')", 1, "no workspace configured\n"),
])
def test_the_scripts_own_exit_is_the_exit_code_as_python_makes_it(
        tmp_path: Path, call: str, code: int, said: str) -> None:
    """``sys.exit(...)`` in the script ends ``mlpipe run-script`` as it ends ``python FILE``:
    a message is printed on stderr (exit 1), and mlpipe adds nothing of its own."""
    script = tmp_path / "script.py"
    script.write_text(f"import sys\nprint('ran')\n{call}\nprint('not reached')\n")
    proc = run_cli("run-script", str(script))
    assert (proc.returncode, proc.stdout, proc.stderr) == (code, "ran\n", said), proc
