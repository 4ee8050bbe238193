"""Where each output is written locally.

Defaults follow the run-folder layout of :mod:`mlpipe.plan`:
``<run_dir>/<step>/outputs/<name>``. A ``uri_file`` output is a file inside that
folder, named after the basename of its declared path template
(``aggregated_returns.csv``), else ``parallel_run_step.txt`` when it is the
``append_row_to`` target, else the output's name. A declared datastore path
``azureml://datastores/<ds>/paths/<rest>`` (after ``${{name}}``,
``${{output_name}}`` and ``${{default_datastore}}`` are substituted) is written
to ``<runs-dir>/datastores/<ds>/<rest>``; a local path is taken relative to the
YAML file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from mlpipe.compiler.assets import is_remote
from mlpipe.compiler.bindings import Reference, references_in, substitute
from mlpipe.runs import DATASTORES_DIR

APPEND_ROW_FILE = "parallel_run_step.txt"
_DATASTORE = re.compile(r"^azureml://datastores/([^/]+)/paths/(.*)$")


@dataclass(frozen=True)
class OutputPlace:
    """Names and folders needed to place an output."""

    runs_dir: Path
    run_dir: Path
    job_name: str
    datastore: str
    base_dir: Path


def template_problems(template: str) -> list[str]:
    """Bindings an output path template may not use."""
    return [ref.text for ref in references_in(template) if ref.scope != "template"]


def output_path(place: OutputPlace, step: str, name: str, type_: str, template: str | None,
                append_target: bool) -> str:
    """The absolute local path of output ``name`` of ``step``."""
    default_dir = place.run_dir / step / "outputs" / name
    if template:
        concrete = _fill(template, place, name)
        match = _DATASTORE.match(concrete)
        if match:
            target = place.runs_dir / DATASTORES_DIR / match.group(1) / match.group(2)
            return _finish(target, type_, append_target, name, concrete)
        if not is_remote(concrete):
            local = Path(concrete).expanduser()
            local = local if local.is_absolute() else place.base_dir / local
            return _finish(local, type_, append_target, name, concrete)
        # Any other remote URI: write to the default place, keeping the file name.
        if type_ == "uri_file":
            base = concrete.rstrip("/").rsplit("/", 1)[-1]
            if base and not concrete.endswith("/"):
                return _norm(default_dir / base)
    if type_ == "uri_file":
        return _norm(default_dir / (APPEND_ROW_FILE if append_target else name))
    return _norm(default_dir)


def _fill(template: str, place: OutputPlace, name: str) -> str:
    values = {"name": place.job_name, "output_name": name, "default_datastore": place.datastore}

    def render(ref: Reference) -> str:
        return values.get(ref.name, ref.text) if ref.scope == "template" else ref.text

    return substitute(template, render)


def _finish(target: Path, type_: str, append_target: bool, name: str, concrete: str) -> str:
    if type_ == "uri_file" and concrete.endswith("/"):
        target = target / (APPEND_ROW_FILE if append_target else name)
    return _norm(target)


def outside_runs(place: OutputPlace, path: str) -> bool:
    """True when the output ``path`` lies outside the runs folder (also through a symlink)."""
    runs = Path(_norm(place.runs_dir))
    for candidate, root in ((Path(path), runs),
                            (Path(os.path.realpath(path)), Path(os.path.realpath(runs)))):
        if candidate != root and root not in candidate.parents:
            return True
    return False


def _norm(path: Path) -> str:
    return os.path.normpath(str(path.absolute()))


__all__ = ["APPEND_ROW_FILE", "OutputPlace", "output_path", "outside_runs", "template_problems"]
