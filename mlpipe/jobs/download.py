"""``az ml job download`` / ``ml_client.jobs.download``: a finished job's files copied as
azure-ai-ml lays them out.

- ``--output-name X``: output ``X`` to ``<download_path>/named-outputs/X``: a pipeline
  output, or a step's as ``step.output`` (how ``job show`` and the error below name them);
- ``--all``: every output, and the job's logs;
- neither: the job's logs (Azure's default artifacts) to ``<download_path>/artifacts``
  (here: the job's run folder, without its lock and mlpipe's hidden state).

A child job (a step, named ``<job>_<step>`` as ``job list --parent-job-name`` names it, or
by the step's name alone when one job has such a step) downloads the step's own outputs
by their names and the step's folder as its artifacts.

What is copied is what the job wrote: a link is copied as a link, never followed (a link
the job wrote to ``..`` or ``/etc/shadow`` copies no file), an output that is itself a link
is refused with its name, and a file already in the download folder is never replaced by
a different one (refused with its name before anything is copied). A job that has not
ended cannot be downloaded (as in Azure).
"""

from __future__ import annotations

import filecmp
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlpipe.compiler.outputs import child_job_name
from mlpipe.errors import MlpipeError
from mlpipe.jobs.azure_view import azure_status
from mlpipe.jobs.record import TERMINAL, StepRecord
from mlpipe.jobs.store import JobNotFound, JobStore, RecordError
from mlpipe.runs import JOB_LOCK_FILE, JOB_PROCESSES_FILE
from mlpipe.runtime.faults import describe_fault

ARTIFACTS = "artifacts"
NAMED_OUTPUTS = "named-outputs"
_SHOWN = 5


class DownloadError(MlpipeError, LookupError):
    """A download that cannot be made: the job runs, it has no such output, or a file in the
    way."""


@dataclass(frozen=True)
class _Job:
    """What a download reads: the record's status, its outputs and its artifacts folder."""

    name: str
    status: Any
    outputs: dict[str, str]  # name -> local path
    artifacts: str | None
    other_names: str  # the outputs' names for an error message


def download_job(store: JobStore, name: str, download_path: str | Path = ".",
                 output_name: str | None = None, all: bool = False) -> list[Path]:
    """Copy job ``name``'s files (see the module doc); returns the folders written."""
    job = _resolve(store, name)
    if job.status not in TERMINAL:
        raise DownloadError(
            f"job {name!r} is {azure_status(job.status)}; download is allowed once it "
            "has ended (Completed, Failed or Canceled)")
    target = Path(download_path)
    _check_target(target, job)
    if output_name is not None and output_name not in job.outputs:
        raise DownloadError(f"job {name!r} has no output {output_name!r} ({job.other_names})")
    copies = [(Path(job.outputs[output]), target / NAMED_OUTPUTS / output)
              for output in ([output_name] if output_name else list(job.outputs) if all else [])]
    if output_name is None and job.artifacts:
        copies.append((Path(job.artifacts), target / ARTIFACTS))
    plans = [list(_plan(source, folder, artifacts=folder.name == ARTIFACTS
                        and folder.parent == target)) for source, folder in copies]
    _refuse_clashes([item for plan in plans for item in plan])
    for (source, folder), plan in zip(copies, plans, strict=True):
        try:
            _copy(plan)
        except OSError as error:
            raise DownloadError(f"cannot copy {source} to {folder}: "
                                f"{describe_fault(error)}") from None
    return [folder for _, folder in copies]


def copy_into(source: Path, target: Path) -> None:
    """A folder's files into ``target``, or a file into the folder ``target``, links below
    it kept as links (nothing when ``source`` does not exist)."""
    plan = list(_plan(Path(os.path.realpath(source)), target, artifacts=False))
    _refuse_clashes(plan)
    _copy(plan)


def _resolve(store: JobStore, name: str) -> _Job:
    """Job ``name``, or the child job (step) it names."""
    try:
        record = store.load(name)
    except JobNotFound:
        found = _child(store, name)
        if found is None:
            raise
        return found
    outputs: dict[str, str] = {out: str(output.path) for out, output in record.outputs.items()}
    steps = {f"{step}.{out}": str(output.path) for step, entry in record.steps.items()
             for out, output in entry.outputs.items()}
    names = (f"pipeline outputs: {', '.join(outputs) or 'none'}; step outputs: "
             f"{', '.join(steps) or 'none'}")
    return _Job(name, record.status, {**steps, **outputs}, record.run_dir, names)


def _child(store: JobStore, name: str) -> _Job | None:
    """The step ``name`` stands for: ``<job>_<step>`` (a child job's name), or a step's
    name that one job alone has; :class:`DownloadError` when several jobs have it."""
    matches = []
    for job in store.names():
        try:
            record = store.load(job)
        except (JobNotFound, RecordError):
            continue
        for step, entry in record.steps.items():
            if name in (child_job_name(job, step), step):
                matches.append((job, step, entry, name == child_job_name(job, step)))
    exact = [match for match in matches if match[3]]
    if len(exact) == 1:
        matches = exact
    if not matches:
        return None
    if len(matches) > 1:
        names = ", ".join(sorted(child_job_name(job, step) for job, step, _f, _e in matches))
        raise DownloadError(f"{name!r} is a step of {len(matches)} jobs; name the child job: "
                            f"{names}")
    job, step, entry, _exact = matches[0]
    return _step_job(job, step, entry)


def _step_job(job: str, step: str, entry: StepRecord) -> _Job:
    outputs = {out: str(output.path) for out, output in entry.outputs.items()}
    return _Job(child_job_name(job, step), entry.status, outputs, entry.step_dir,
                f"outputs of step {step} of job {job}: {', '.join(outputs) or 'none'}")


def _check_target(target: Path, job: _Job) -> None:
    """A download path is a folder (made when missing), never inside what it copies
    (copying a folder into itself would never end)."""
    if target.exists() and not target.is_dir():
        raise DownloadError(f"--download-path {target} is a file, not a folder")
    for source in [job.artifacts, *job.outputs.values()]:
        if source and target.resolve().is_relative_to(Path(source).resolve()):
            what = "the job's own folder" if source == job.artifacts else "an output it copies"
            raise DownloadError(f"--download-path {target} is inside {what} {source}: give a "
                                "folder outside it")


# (source, target, kind): kind "dir", "file" or "link"
_Item = tuple[Path, Path, str]


def _plan(source: Path, target: Path, *, artifacts: bool) -> Iterator[_Item]:
    """What copying ``source`` to ``target`` writes, links not followed; the artifacts of a
    job leave out its lock and mlpipe's hidden state."""
    if source.is_symlink():
        raise DownloadError(f"{source} is a link to {os.path.realpath(source)}, not the job's "
                            "own folder or file: not copied")
    if not source.exists():
        return
    if not source.is_dir():
        yield target, target, "dir"
        yield source, target / source.name, "file"
        return
    yield source, target, "dir"
    for folder, dirs, files in os.walk(source):
        base = Path(folder)
        dest = target / base.relative_to(source)
        if artifacts:
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            files = [f for f in files if not f.startswith(".")
                     and not (base == source and f in (JOB_LOCK_FILE, JOB_PROCESSES_FILE))]
        for name in sorted(dirs):
            kind = "link" if (base / name).is_symlink() else "dir"
            yield base / name, dest / name, kind
        dirs[:] = [d for d in dirs if not (base / d).is_symlink()]
        for name in sorted(files):
            kind = "link" if (base / name).is_symlink() else "file"
            yield base / name, dest / name, kind


def _refuse_clashes(plan: list[_Item]) -> None:
    """Refuse, before anything is copied, a copy that would replace a different file (or
    write through a link) already in the download folder."""
    clashes = [str(target) for source, target, kind in plan if _replaces(source, target, kind)]
    if clashes:
        more = f" and {len(clashes) - _SHOWN} more" if len(clashes) > _SHOWN else ""
        raise DownloadError(f"{', '.join(clashes[:_SHOWN])}{more} already exist in the download "
                            "folder and differ from the job's: nothing was copied; download to "
                            "a new folder")


def _replaces(source: Path, target: Path, kind: str) -> bool:
    if not (target.is_symlink() or target.exists()):
        return False
    if kind == "dir":
        return target.is_symlink() or not target.is_dir()
    if kind == "link":
        return not target.is_symlink() or os.readlink(target) != os.readlink(source)
    return target.is_symlink() or not target.is_file() or not filecmp.cmp(source, target,
                                                                            shallow=False)


def _copy(plan: list[_Item]) -> None:
    for source, target, kind in plan:
        if kind == "dir":
            target.mkdir(parents=True, exist_ok=True)
        elif target.is_symlink() or target.exists():
            continue  # the same file or link, from an earlier download
        elif kind == "link":
            os.symlink(os.readlink(source), target)
        else:
            shutil.copy2(source, target)


__all__ = ["ARTIFACTS", "NAMED_OUTPUTS", "DownloadError", "copy_into", "download_job"]
