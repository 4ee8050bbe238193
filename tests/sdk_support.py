"""Helpers for the SDK tests: loading sample twins and comparing plans."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

from mlpipe.plan import ExecutionPlan

from .conftest import REPO

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
