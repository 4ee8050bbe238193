"""Where each output is written locally.

Defaults follow the run-folder layout of :mod:`mlpipe.plan`:
``<run_dir>/<step>/outputs/<name>``. A ``uri_file`` output is a file inside that
folder, named after the basename of its declared path template
(``aggregated_returns.csv``), else ``parallel_run_step.txt`` when it is the
``append_row_to`` target, else the output's name. A declared datastore path
``azureml://datastores/<ds>/paths/<rest>`` (after ``${{name}}``,
``${{output_name}}`` and ``${{default_datastore}}`` are substituted) is written
to ``<runs-dir>/datastores/<ds>/<rest>``; a local path is taken relative to the
YAML file (``~`` is never expanded).

Where an output may land is one rule, :func:`place_problem`, used by ``job validate`` and
``job create`` (every attempt: a resume compiles again) alike: inside this job's folder
(not over the job's own files), or below ``<runs-dir>/datastores/<datastore>/``; never in
another job's folder or elsewhere in the runs folder, never a path starting with ``~``,
never a folder holding the runs folder, the pipeline's own folder or a datastore's root,
never through a link inside the runs folder (a default output too: one planted after a
kill); outside the runs folder only when the job allows external outputs
(``--allow-external-outputs``, or ``[outputs] allow_external = true`` in the
``mlpipe.toml`` beside the pipeline).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mlpipe.compiler.assets import is_remote
from mlpipe.compiler.bindings import Reference, references_in, substitute
from mlpipe.plan import PlanOutput, Step
from mlpipe.runs import DATASTORES_DIR, job_dir

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
    allow_external: bool = False  # outputs may be written outside the runs folder
    # steps not run (--skip-step): their outputs are given by the user, read, never written
    given_steps: frozenset[str] = frozenset()


def template_problems(template: str) -> list[str]:
    """Bindings an output path template may not use."""
    return [ref.text for ref in references_in(template) if ref.scope != "template"]


def output_path(place: OutputPlace, step: str, name: str, type_: str, template: str | None,
                append_target: bool) -> str:
    """The absolute local path of output ``name`` of ``step`` (``""``: a pipeline output no
    step writes). As in Azure ML, ``${{name}}`` in the path of an output a step writes is
    that step's job name (:func:`child_job_name`), not the pipeline job's: two steps'
    ``.../${{name}}/${{output_name}}`` outputs never share a path."""
    default_dir = place.run_dir / step / "outputs" / name
    if template:
        concrete = filled_template(place, step, name, template)
        match = _DATASTORE.match(concrete)
        if match:
            target = place.runs_dir / DATASTORES_DIR / match.group(1) / match.group(2)
            return _finish(target, type_, append_target, name, concrete)
        if not is_remote(concrete):
            local = Path(concrete)  # never expanduser(): '~' is refused by place_problem
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


def filled_template(place: OutputPlace, step: str, name: str, template: str) -> str:
    """The output path ``template`` of output ``name`` of ``step`` with ``${{name}}``,
    ``${{output_name}}`` and ``${{default_datastore}}`` filled in."""
    return _fill(template, place, name,
                 child_job_name(place.job_name, step) if step else place.job_name)


def child_job_name(job_name: str, step: str) -> str:
    """The name ``${{name}}`` stands for in a step's own output path: ``<job>_<step>``."""
    return f"{job_name}_{step}"


def _fill(template: str, place: OutputPlace, name: str, job_name: str) -> str:
    values = {"name": job_name, "output_name": name, "default_datastore": place.datastore}

    def render(ref: Reference) -> str:
        return values.get(ref.name, ref.text) if ref.scope == "template" else ref.text

    return substitute(template, render)


def _finish(target: Path, type_: str, append_target: bool, name: str, concrete: str) -> str:
    if type_ == "uri_file" and concrete.endswith("/"):
        target = target / (APPEND_ROW_FILE if append_target else name)
    return _norm(target)


@dataclass(frozen=True)
class PlaceProblem:
    """Why a declared output path may not be written: ``external`` problems (outside the
    runs folder) are allowed with external outputs, the others never are."""

    message: str
    hint: str
    external: bool = False


STATE_FOLDER = ".mlpipe"  # a step's journal and working folders
LOGS_FOLDER = "logs"


def place_problem(place: OutputPlace, name: str, template: str, path: str) -> PlaceProblem | None:
    """Why output ``name``, declared as ``template`` and placed at ``path``, may not be
    written there (``None``: it may); the one rule of the module docstring."""
    if template.strip().startswith("~"):
        return PlaceProblem(f"output '{name}' path '{template}' starts with '~', which mlpipe "
                            "does not expand (Azure ML has no home folder)",
                            "write the path out, or leave out 'path' to write under the run's "
                            "folder")
    runs = Path(_norm(place.runs_dir))
    seen = ((Path(path), runs, Path(_norm(place.base_dir))),
            (Path(os.path.realpath(path)), Path(os.path.realpath(runs)),
             Path(os.path.realpath(place.base_dir))))
    found = [_holds_problem(place, name, candidate, root, base) for candidate, root, base in seen]
    found += [_in_runs_problem(place, name, candidate, root) for candidate, root, _ in seen]
    found.append(_link_problem(name, Path(path), runs))
    problems = [problem for problem in found if problem is not None]
    # as written or through a link: a place never allowed wins over "outside the runs folder"
    return min(problems, key=lambda problem: problem.external, default=None)


def _holds_problem(place: OutputPlace, name: str, path: Path, runs: Path,
                   base: Path) -> PlaceProblem | None:
    """An output folder that holds what is not the job's: the runs folder (every job), the
    pipeline's own folder (its YAML, code and data) or a datastore's root."""
    hint = ("give the output a folder of its own (a new, empty one), or leave out 'path' to "
            "write under the run's folder")
    if _within(runs, path):
        return PlaceProblem(f"output '{name}' would be written over the runs folder {runs} "
                            f"(every job's record and outputs): {path}", hint)
    if _within(base, path):
        return PlaceProblem(f"output '{name}' would be written over the pipeline's own folder "
                            f"{base} (its YAML, code and data): {path}", hint)
    if path.parent == runs / DATASTORES_DIR:
        return PlaceProblem(f"output '{name}' would be written over the root of datastore "
                            f"'{path.name}' (where every job's outputs on it are): {path}",
                            f"give a folder below it: azureml://datastores/{path.name}/paths/"
                            "<folder>/")
    return None


def _link_problem(name: str, path: Path, runs: Path) -> PlaceProblem | None:
    """A path inside the runs folder that a link leads elsewhere (one planted in a job's
    folder after a kill): mlpipe never writes through it."""
    if not _within(path, runs):
        return None
    inside = path.relative_to(runs)
    real_runs = Path(os.path.realpath(runs))
    real = Path(os.path.realpath(path))
    if _within(real, real_runs) and real.relative_to(real_runs) == inside:
        return None
    link = next((runs / Path(*inside.parts[:count]) for count in range(1, len(inside.parts) + 1)
                 if (runs / Path(*inside.parts[:count])).is_symlink()), path)
    return PlaceProblem(f"output '{name}' would be written through a link: {link} leads to "
                        f"{os.path.realpath(link)} (mlpipe never follows a link in the runs "
                        f"folder): {path}",
                        f"remove the link ({link}) and run the job again")


def _in_runs_problem(place: OutputPlace, name: str, path: Path, runs: Path) -> PlaceProblem | None:
    """The rule for ``path`` seen against the runs folder ``runs`` (as written or resolved)."""
    if not _within(path, runs):
        return PlaceProblem(
            f"output '{name}' is written outside the runs folder {place.runs_dir}: to {path}",
            "mlpipe creates and writes it there (allowed for this job)" if place.allow_external
            else "allow it for this job with --allow-external-outputs (or [outputs] "
                 "allow_external = true in mlpipe.toml beside the pipeline), or leave out "
                 "'path' to write under the run's folder", external=True)
    run_dir = job_dir(runs, place.job_name)
    if _within(path, run_dir):
        # the top level holds the job's record, lock and report and the steps' folders; a
        # step folder its logs and state
        inside = path.relative_to(run_dir).parts
        if len(inside) < 2 or inside[1] == LOGS_FOLDER or STATE_FOLDER in inside:
            return PlaceProblem(f"output '{name}' would be written over the job's own files "
                                f"(its record, a step's folder, logs or state): {path}",
                                "leave out 'path' to write under the run's folder")
        return None
    datastores = runs / DATASTORES_DIR
    if _within(path, datastores) and path != datastores:
        return None
    first = path.relative_to(runs).parts[0] if path != runs else ""
    what = f"job {first}'s folder ({runs / first})" if first and first != DATASTORES_DIR \
        else "the runs folder itself"
    return PlaceProblem(f"output '{name}' would be written into {what}: {path}",
                        f"an output goes under this job's folder ({run_dir}) or a datastore "
                        "path (azureml://datastores/<datastore>/paths/...)")


def clashes(steps: Sequence[Step]) -> list[tuple[PlanOutput, str]]:
    """Outputs with a declared path that land on (or inside, or around) another output of
    the job, or on a local input's data: ``(output, what it clashes with)``."""
    written = [(step.name, output) for step in steps for output in step.outputs.values()]
    read = [(step.name, data) for step in steps for data in step.inputs.values()
            if data.path and data.source is None]
    found = []
    for index, (step, output) in enumerate(written):
        if output.declared_path is None:
            continue
        other = next((f"output {s}.{o.name} ({o.path})" for n, (s, o) in enumerate(written)
                      if n != index and _overlap(output.path, o.path)), None) or next(
            (f"the data of input {s}.{i.name} ({i.path})" for s, i in read
             if i.path and _overlap(output.path, i.path)), None)
        if other is not None:
            found.append((output, f"output {step}.{output.name} would be written over {other}"))
    return found


def _overlap(first: str, second: str) -> bool:
    for a, b in ((Path(first), Path(second)),
                 (Path(os.path.realpath(first)), Path(os.path.realpath(second)))):
        if _within(a, b) or _within(b, a):
            return True
    return False


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _norm(path: Path) -> str:
    return os.path.normpath(str(path.absolute()))


__all__ = ["APPEND_ROW_FILE", "OutputPlace", "PlaceProblem", "child_job_name", "clashes",
           "filled_template",
           "output_path",
           "place_problem", "template_problems"]
