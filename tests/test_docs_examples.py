"""Every example of README.md and docs/*.md runs as written against the samples.

The ``console``, ``sh``/``bash`` and ``python`` blocks are extracted and run (as pytest's
own documentation is tested), each in a fresh folder holding a copy of ``samples/`` with
its own runs folder: ``console`` blocks command by command (``$ `` lines), ``sh`` blocks
as one bash script, ``python`` blocks as a script (``python example.py``, so a missing
``if __name__ == "__main__":`` guard fails as it would for a user). A block that cannot
run says why on the line before it::

    <!-- not-tested: reason -->
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow  # every docs example runs as written: CI's second stage

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUN = ("console", "sh", "bash", "python")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
NOT_TESTED = re.compile(r"<!-- not-tested: (?P<reason>[^>]+?) -->\s*\Z")
MOST_NOT_TESTED = 11  # keep the set small: a new example should run


@dataclass(frozen=True)
class Example:
    where: str  # file:line of the opening fence
    lang: str
    body: str
    not_tested: str | None  # the reason, when marked


def examples() -> list[Example]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group("lang") not in RUN:
                continue
            line = text.count("\n", 0, match.start()) + 1
            marker = NOT_TESTED.search(text[:match.start()].rstrip() + "\n")
            found.append(Example(f"{doc.relative_to(REPO)}:{line}", match.group("lang"),
                                 match.group("body"), marker.group("reason") if marker else None))
    return found


EXAMPLES = examples()
RUNNABLE = [e for e in EXAMPLES if e.not_tested is None]


def test_few_examples_are_marked_not_tested() -> None:
    marked = [e.where for e in EXAMPLES if e.not_tested]
    assert len(RUNNABLE) >= 5, [e.where for e in RUNNABLE]
    assert len(marked) <= MOST_NOT_TESTED, marked


def commands(example: Example) -> list[str]:
    """What the example runs, one shell command each (a python block: one script)."""
    if example.lang == "console":
        return [line[2:] for line in example.body.splitlines() if line.startswith("$ ")]
    return [example.body]


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A folder like the repository's root: a copy of samples/, a runs folder, and the
    environment of a user whose `python` and `mlpipe` are this test's."""
    shutil.copytree(REPO / "samples", tmp_path / "samples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "MLPIPE_RUNS_DIR": str(tmp_path / "mlpipe-runs"),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return tmp_path, env


@pytest.mark.parametrize("example", RUNNABLE, ids=[e.where for e in RUNNABLE])
def test_example_runs_as_written(example: Example, workspace: tuple[Path, dict[str, str]]) -> None:
    folder, env = workspace
    for command in commands(example):
        if example.lang == "python":
            script = folder / "example.py"
            script.write_text(command, encoding="utf-8")
            argv = [sys.executable, str(script)]
        else:
            argv = ["bash", "-e", "-o", "pipefail", "-c", command]
        proc = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True,
                              timeout=240, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, (
            f"{example.where}: `{command.strip()}` exited {proc.returncode}\n"
            f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        assert "Traceback" not in proc.stderr, f"{example.where}:\n{proc.stderr[-3000:]}"
