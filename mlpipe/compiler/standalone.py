"""Validate a standalone (non-pipeline) job file: ``type: command``, ``sweep``, ``spark`` or
``automl`` (``mlpipe job validate``; such a job runs in Azure ML, not here)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mlpipe.compiler.context import Doc, Reporter
from mlpipe.compiler.pipeline import _Compiler, sort_diagnostics
from mlpipe.diagnostics import Diagnostic
from mlpipe.schema import Loaded, load_job
from mlpipe.schema.kinds import job_type
from mlpipe.schema.submission import job_rules

# The job types whose document is compiled as its one step (bindings, code, entry script,
# data paths; a sweep job's trial as the command component it runs), AutoML's data by the
# schema layer only.
COMPILED_TYPES = ("command", "spark", "sweep")


def validate_job(source: str | Path | Loaded[Any], *, check_paths: bool = True,
                 runs_dir: str | os.PathLike[str] | None = None) -> list[Diagnostic]:
    """Every problem and warning of a standalone job file, with what Azure ML rejects when
    the job is submitted as errors (as ``mlpipe job validate`` reports them)."""
    reporter = Reporter()
    loaded = source if isinstance(source, Loaded) else load_job(Path(source))
    reporter.extend(loaded.diagnostics)
    if not isinstance(loaded.data, dict) or loaded.parts is None:
        return reporter.items
    reporter.extend(job_rules(loaded.data, loaded.positions))
    doc = Doc.validated(loaded.parts, loaded.data, Path(loaded.source).resolve(),
                        loaded.positions)
    if job_type(loaded.data) in (*COMPILED_TYPES, None):
        _Compiler(doc, reporter, runs_dir, None, check_paths, standalone=True).run()
    return sort_diagnostics(reporter.items)


__all__ = ["COMPILED_TYPES", "validate_job"]
