"""Helpers for the SDK tests: loading sample twins and comparing plans."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

from mlpipe.plan import ExecutionPlan
from tests.conftest import REPO

SAMPLES = REPO / "samples"
SAMPLE_NAMES = ("file-batch", "tabular-scoring", "many-models", "command-parallel-command")


def sample_job(name: str) -> Any:
    """The ``pipeline_job`` built by ``samples/<name>/pipeline.py`` (not run)."""
    return runpy.run_path(str(SAMPLES / name / "pipeline.py"))["pipeline_job"]


def plan_view(plan: ExecutionPlan) -> dict[str, Any]:
    """The plan as a dict without ``source`` and ``location`` (the parts that name files/lines)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("source", "location")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    data = strip(plan.to_dict())
    data["warnings"] = [{k: v for k, v in w.items() if k not in ("file", "line", "column")}
                        for w in data.get("warnings", [])]
    return data


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


ECHO_SCRIPT = '''\
"""Returns one line per file: its name, $FOO and the --tag argument."""
import argparse
import os

TAG = None


def init():
    global TAG
    parser = argparse.ArgumentParser()
    parser.add_argument("--tag", default="none")
    TAG = parser.parse_known_args()[0].tag


def run(mini_batch):
    return [f"{os.path.basename(p)} {os.environ.get('FOO', '-')} {TAG}" for p in mini_batch]
'''


def make_file_project(root: Path, files: int = 6) -> Path:
    """``root/data`` with ``files`` text files and ``root/src/echo.py``; returns ``root``."""
    for index in range(files):
        write(root / "data" / f"f{index:02d}.txt", f"file {index}\n")
    write(root / "src" / "echo.py", ECHO_SCRIPT)
    return root
