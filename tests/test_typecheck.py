"""mypy, with the project's ``[tool.mypy]`` settings, finds no error in the ``mlpipe`` package,
nor in ``bench/`` and ``tools/`` (scripts no test imports).

Skipped when mypy is not installed. The cache lives in ``.mypy_cache`` at the repo root,
so only the first run pays the full check (about 10 s on one core).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow,  # mypy over the package: CI's second stage
              pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                reason="mypy is not installed")]


def _mypy(*targets: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", *targets], cwd=ROOT,
                          capture_output=True, text=True, timeout=240)


def test_the_whole_package_is_clean() -> None:
    result = _mypy("mlpipe")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout


def test_the_benchmarks_and_tools_are_clean() -> None:
    # bench/ and tools/ are run by hand, imported by no test: mypy (the project's settings)
    # is what notices when the package changes under them (a typed record read by key, a
    # function renamed) before someone runs them.
    result = _mypy("bench", "tools")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout


def test_project_settings_check_untyped_functions(tmp_path: Path) -> None:
    # check_untyped_defs is on: an error inside a function without annotations is found.
    bad = tmp_path / "untyped.py"
    bad.write_text("def total(items):\n    return len(items) + 'x'\n", encoding="utf-8")
    result = _mypy(str(bad))
    assert result.returncode == 1
    assert 'Unsupported operand types for + ("int" and "str")' in result.stdout


def test_the_package_is_held_to_strict_settings(tmp_path: Path) -> None:
    # The project's settings check any package named mlpipe as `mypy --strict` does: an Any
    # returned where a type is promised, a call of an unannotated function, a name imported
    # from a module that does not export it, a comparison that can never be true.
    package = tmp_path / "mlpipe"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "base.py").write_text("from typing import Any\n\nVALUE: Any = 1\n",
                                     encoding="utf-8")
    (package / "loose.py").write_text(
        "import json\n\nfrom mlpipe.base import Any\n\n\n"
        "def count(text: str) -> int:\n    return json.loads(text)\n\n\n"
        "def untyped(x):  # type: ignore[no-untyped-def]\n    return x\n\n\n"
        "def call() -> None:\n    untyped(1)\n\n\n"
        "def never(x: int) -> bool:\n    return x == 'x'\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(tmp_path / "cache"), "mlpipe"],
        cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert result.returncode == 1, result.stdout + result.stderr
    for code in ("no-any-return", "no-untyped-call", "attr-defined", "comparison-overlap"):
        assert f"[{code}]" in result.stdout, result.stdout
