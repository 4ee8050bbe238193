"""``mlpipe job validate`` and ``mlpipe component validate``.

Both take one or more files (``--file F`` or plain paths, so a pre-commit hook can
pass many) and print every problem as ``file:line:col: key.path: message``,
warnings too, then one status line per file (and a total when there are several).
Exit code: 0 all valid, 1 something invalid, 2 usage error (no file given, a file
that does not exist, a malformed ``--set``).

``job validate`` accepts component files too (validated as components), so a
hook can see every YAML of a repository. A YAML that is not an Azure ML pipeline
job or component (conda files, CI workflows, prompt flows, standalone command or
sweep jobs, YAML whose ``type`` means something else) is an error, or is skipped
with ``--skip-unknown`` (the hook's mode). See docs/validation.md.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mlpipe.cli.arguments import OUTPUT_FORMATS, add_output_format, add_overrides, emit
from mlpipe.compiler.containment import unusable_path
from mlpipe.diagnostics import Diagnostic, Location
from mlpipe.errors import UsageError
from mlpipe.schema.kinds import STANDALONE_TYPES, file_kind, job_type
from mlpipe.wording import plural


@dataclass
class FileReport:
    """The outcome for one file."""

    file: str
    kind: str  # pipeline | component | skipped | unknown | job | yaml
    diagnostics: list[Diagnostic] = field(default_factory=list)
    summary: str = ""
    plan: Any = None

    @property
    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return sum(d.severity != "error" for d in self.diagnostics)

    @property
    def valid(self) -> bool:
        return self.kind == "skipped" or self.errors == 0


def register(groups: dict[str, argparse._SubParsersAction[argparse.ArgumentParser]]) -> None:
    """Add ``job validate`` and ``component validate``."""
    job = groups["job"].add_parser(
        "validate", help="validate pipeline job YAML files offline",
        description="Validate pipeline job YAML files (component files are validated as "
                    "components).",
        epilog="exit codes: 0 all valid; 1 a problem was found; 2 usage error")
    _common_arguments(job)
    job.add_argument("--show-plan", action="store_true",
                     help="print the execution plan of each valid pipeline")
    job.add_argument("--no-path-checks", action="store_true",
                     help="do not require local data paths to exist (code, entry scripts and "
                          "component files are still checked)")
    add_overrides(job, "override a value before validating, e.g. "
                       "jobs.score.mini_batch_size=5 (repeatable)")
    job.add_argument("--runs-dir",
                     help="the runs folder outputs are checked against (default: "
                          "$MLPIPE_RUNS_DIR or ./mlpipe-runs)")
    job.add_argument("--allow-external-outputs", action="store_true",
                     help="accept outputs whose declared 'path' lies outside the runs folder "
                          "(as job create --allow-external-outputs)")
    job.set_defaults(handler=run_job_validate)
    comp = groups["component"].add_parser(
        "validate", help="validate parallel and command component YAML files offline",
        description="Validate parallel and command component YAML files.",
        epilog="exit codes: 0 all valid; 1 a problem was found; 2 usage error")
    _common_arguments(comp)
    comp.set_defaults(handler=run_component_validate)


def _common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="FILE", help="YAML files to validate")
    parser.add_argument("--file", "-f", dest="files", action="append", default=[], metavar="FILE",
                        help="a YAML file to validate (repeatable)")
    add_output_format(parser, ("text", *OUTPUT_FORMATS), default="text")  # table = text
    parser.add_argument("--skip-unknown", action="store_true",
                        help="skip YAML files that are not Azure ML jobs or components "
                             "(for pre-commit)")
    parser.add_argument("--only-show-errors", "--quiet", "-q", dest="quiet",
                        action="store_true",
                        help="print only the errors, each invalid file's status and one total "
                             "(no OK or skipped lines, no warnings; for pre-commit)")


def run_job_validate(args: argparse.Namespace) -> int:
    return _run(args, component_only=False)


def run_component_validate(args: argparse.Namespace) -> int:
    return _run(args, component_only=True)


def _run(args: argparse.Namespace, component_only: bool) -> int:
    files = [*args.files, *args.paths]
    overrides = getattr(args, "overrides", [])
    if not files:
        raise UsageError("give at least one file: --file FILE or FILE ...")
    problem = next(filter(None, map(file_problem, files)), None)
    if problem:
        raise UsageError(problem)
    from mlpipe.compiler.overrides import parse_override  # noqa: PLC0415

    for item in overrides:
        parse_override(item)  # OverrideSyntaxError: a usage error
    reports = [_validate_file(f, args, component_only) for f in files]
    emit(args, lambda: _json(reports), human=lambda: _print_text(reports, quiet=args.quiet))
    return 0 if all(r.valid for r in reports) else 1


def file_problem(file: str) -> str | None:
    """Why ``file`` cannot be read as a YAML file (``None`` when it is a regular file)."""
    unusable = unusable_path(file)
    if unusable:
        shown = file if len(file) <= 80 else file[:77] + "..."
        return f"{shown}: not a usable path: {unusable}"
    path = Path(file)
    try:
        if path.is_file():
            return None
        what = ("is a folder, not a YAML file" if path.is_dir()
                else "is not a regular file" if path.exists() else "file not found")
    except OSError as exc:  # a path the OS refuses to look up
        what = f"cannot be read: {exc.strerror or exc}"
    return f"{file}: {what}"


def is_pipeline_job(data: dict[str, Any]) -> bool:
    """A ``type: pipeline`` file is a job unless its ``$schema`` names a component, or it has
    a ``name`` and none of the job-only keys (``settings``, ``experiment_name``, ``compute``)."""
    schema = str(data.get("$schema") or "").lower()
    if "pipelinejob.schema.json" in schema:
        return True
    if "component" in schema:
        return False
    return "name" not in data or any(key in data for key in ("settings", "experiment_name",
                                                               "compute"))


def _validate_file(file: str, args: argparse.Namespace, component_only: bool) -> FileReport:
    # the models and the compiler load here, not when the command line is read
    from mlpipe.compiler import check_pipeline, validate_component, validate_job  # noqa: PLC0415
    from mlpipe.schema import (  # noqa: PLC0415
        load_component_data,
        load_job_data,
        load_pipeline_data,
        load_yaml_file,
    )

    shown = _display(file)
    doc = load_yaml_file(file)
    if doc.data is None:
        return FileReport(shown, "yaml", _relative(doc.diagnostics), "invalid YAML")
    kind = file_kind(doc.data)
    if kind == "job" and job_type(doc.data) in STANDALONE_TYPES and not component_only:
        diagnostics = validate_job(load_job_data(doc.data, doc.source, doc.positions),
                                   check_paths=not args.no_path_checks,
                                   runs_dir=getattr(args, "runs_dir", None))
        return FileReport(shown, "job", _relative(doc.diagnostics + diagnostics),
                          f"{job_type(doc.data)} job")
    if kind in ("unknown", "job"):
        what = ("a standalone (non-pipeline) Azure ML job" if kind == "job"
                else "not an Azure ML job or component")
        if args.skip_unknown:
            return FileReport(shown, "skipped", summary=f"skipped: {what}")
        message = (_not_validated(job_type(doc.data)) if kind == "job" else
                   "not an Azure ML pipeline job or component: no Azure ML 'type' or '$schema'")
        problem = Diagnostic(message, location=Location(doc.source, 1, 1), code="not-azureml",
                             hint="pass --skip-unknown to skip such files")
        return FileReport(shown, kind, _relative([problem]))
    if component_only and kind == "pipeline" and is_pipeline_job(doc.data):
        key = "$schema" if "$schema" in doc.data else "type"
        problem = Diagnostic("this is a pipeline job, not a pipeline component (a component has "
                             "a 'name' or the pipelineComponent.schema.json $schema)",
                             key_path=key, location=doc.positions.locate((key,)),
                             code="not-a-component", hint="use 'mlpipe job validate'")
        return FileReport(shown, "component", _relative([problem]))
    if component_only or kind == "component":
        component = load_component_data(doc.data, doc.source, doc.positions)
        component.diagnostics = doc.diagnostics + component.diagnostics
        diagnostics = validate_component(component)
        label = (f"{doc.data.get('type') or 'command'} component" if isinstance(doc.data, dict)
                 else "component")
        return FileReport(shown, "component", _relative(diagnostics), label)
    loaded = load_pipeline_data(doc.data, doc.source, doc.positions)
    loaded.diagnostics = doc.diagnostics + loaded.diagnostics
    result = check_pipeline(loaded, overrides=args.overrides, check_paths=not args.no_path_checks,
                            submission=True, runs_dir=getattr(args, "runs_dir", None),
                            allow_external_outputs=getattr(args, "allow_external_outputs", False))
    report = FileReport(shown, "pipeline", _relative(result.diagnostics), "pipeline job")
    if result.plan is not None:
        steps = len(result.plan.steps)
        report.summary = f"pipeline job, {steps} step{'s' if steps != 1 else ''}"
        report.plan = result.plan.to_dict() if getattr(args, "show_plan", False) else None
    return report


def _not_validated(kind: str | None) -> str:
    """Why a standalone job of type ``kind`` is not validated."""
    if kind == "parallel":
        return ("a standalone parallel job: Azure ML runs parallel steps only inside a pipeline "
                "job (azure-ai-ml: 'Unsupported job type: parallel'); make it a step of a "
                "pipeline job, or a parallel component (no compute, inputs declared)")
    return (f"a standalone {kind or 'Azure ML'} job: mlpipe validates pipeline jobs, components "
            f"and standalone {', '.join(STANDALONE_TYPES)} jobs")


def _display(file: str) -> str:
    """A path relative to the working directory when it is below it."""
    absolute = os.path.abspath(file)
    relative = os.path.relpath(absolute)
    return absolute if relative.startswith("..") else relative


def _relative(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    out = []
    for d in diagnostics:
        loc = d.location
        if loc is not None and loc.file and os.path.isabs(loc.file):
            d = replace(d, location=replace(loc, file=_display(loc.file)))
        out.append(d)
    return out


def _status(report: FileReport) -> str:
    if report.kind == "skipped":
        return f"{report.file}: {report.summary}"
    warn = f", {plural(report.warnings, 'warning')}" if report.warnings else ""
    if report.valid:
        return f"{report.file}: OK ({report.summary}{warn})"
    return f"{report.file}: invalid: {plural(report.errors, 'error')}{warn}"


def _print_text(reports: list[FileReport], *, quiet: bool = False) -> None:
    """Each file's problems and status, then a total when there are several files; with
    ``quiet`` only the errors and invalid files' statuses, then the total always."""
    for report in reports:
        if quiet and report.valid:
            continue
        for d in report.diagnostics:
            if not quiet or d.severity == "error":
                print(d.format())
        print(_status(report))
        if report.plan is not None:
            print(json.dumps(report.plan, indent=2, default=str))
    if len(reports) > 1 or quiet:
        checked = [r for r in reports if r.kind != "skipped"]
        bad = [r for r in checked if not r.valid]
        skipped = len(reports) - len(checked)
        tail = f", {skipped} skipped" if skipped else ""
        print(f"{plural(len(checked), 'file')} checked: {len(checked) - len(bad)} valid, "
              f"{len(bad)} invalid"
              f"{tail} ({plural(sum(r.errors for r in reports), 'error')}, "
              f"{plural(sum(r.warnings for r in reports), 'warning')})")


def _json(reports: list[FileReport]) -> dict[str, Any]:
    return {
        "valid": all(r.valid for r in reports),
        "files": [
            {"file": r.file, "kind": r.kind, "valid": r.valid, "errors": r.errors,
             "warnings": r.warnings,
             "diagnostics": [d.to_dict() for d in r.diagnostics],
             **({"plan": r.plan} if r.plan is not None else {})}
            for r in reports
        ],
    }


__all__ = ["file_kind", "file_problem", "register", "run_component_validate", "run_job_validate"]
