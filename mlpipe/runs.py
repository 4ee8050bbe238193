"""Job names and the runs folder: the one owner of these rules.

A job runs in ``<runs-dir>/<job name>/`` (:func:`job_dir`), its own files there named
``JOB_RECORD_FILE`` (job.json), ``JOB_LOCK_FILE``, ``CANCEL_FILE``, ``JOB_REPORT_FILE``.
The runs folder is ``--runs-dir`` (or the SDK's ``runs_dir=``), else
``$MLPIPE_RUNS_DIR``, else ``./mlpipe-runs``; a job name follows Azure ML's rule
(:data:`JOB_NAME`) and, when not given, is generated from the YAML's ``display_name``,
``experiment_name`` or file name (:func:`generate_job_name`).
The compiler, the job store, the front door (:mod:`mlpipe.jobs.front_door`) and the CLI
all read these rules from here.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

RUNS_DIR_ENV = "MLPIPE_RUNS_DIR"
DEFAULT_RUNS_DIR = "mlpipe-runs"
JOB_NAME_PATTERN = r"^[a-zA-Z0-9][a-zA-Z0-9_-]{0,254}$"  # Azure ML's job-name rule
JOB_NAME = re.compile(JOB_NAME_PATTERN)
GENERIC_STEMS = frozenset({"pipeline", "job", "main"})
DATASTORES_DIR = "datastores"  # <runs-dir>/datastores/<ds>/...: outputs at azureml://datastores/
ASSETS_DIR = "assets"  # <runs-dir>/assets/registry.json: assets registered from Python
RESERVED_NAMES = frozenset({DATASTORES_DIR, ASSETS_DIR})
# The files of a job's folder <runs-dir>/<name>/ that are the job's own (not a step's).
JOB_RECORD_FILE = "job.json"  # its record (mlpipe.jobs.record)
JOB_LOCK_FILE = "job.lock"  # held by the process that owns it (mlpipe.jobs.ownership)
CANCEL_FILE = "cancel-requested"  # present once `mlpipe job cancel` asked it to stop
# the processes its steps started, noted by pid and start time while it runs (one that
# clears its environment has no tag): `job cancel` of a job whose runner is gone reads it
JOB_PROCESSES_FILE = "processes.txt"
JOB_REPORT_FILE = "report.html"  # its report (mlpipe.jobs.report)
# a hidden file that marks a folder as a runs folder: input listings never enter one
RUNS_MARKER = ".mlpipe-runs"
NAME_BASE_LIMIT = 200
# What a step's processes learn of the run they belong to (set by the runner, read by the
# v1 ``Run.get_context()``): the job's name, the step's name and folder, the experiment.
JOB_NAME_ENV = "MLPIPE_JOB_NAME"
STEP_NAME_ENV = "MLPIPE_STEP_NAME"
STEP_DIR_ENV = "MLPIPE_STEP_DIR"
EXPERIMENT_ENV = "MLPIPE_EXPERIMENT_NAME"
# Where the job's mlpipe.toml is (its folder), for the URL stand-ins of the step's processes
# (mlpipe.url_stand_ins; set per step by mlpipe.compiler.steps).
STAND_INS_ENV = "MLPIPE_STAND_INS"


def resolve_runs_dir(runs_dir: str | os.PathLike[str] | None = None) -> Path:
    """``runs_dir`` if given, else ``$MLPIPE_RUNS_DIR``, else ``./mlpipe-runs`` (absolute)."""
    chosen = runs_dir or os.environ.get(RUNS_DIR_ENV) or DEFAULT_RUNS_DIR
    return Path(chosen).expanduser().resolve()


def job_dir(runs_dir: str | os.PathLike[str], name: str) -> Path:
    """``<runs-dir>/<name>``: the folder of job ``name`` (the one place that says so; the job
    store refuses a name :func:`check_job_name` refuses before it touches the folder)."""
    return Path(runs_dir) / name


def runs_dir_problem(runs_dir: Path, *, create: bool = False) -> str | None:
    """What is wrong with the runs folder (``None`` when usable); ``create`` makes it."""
    if runs_dir.exists() and not runs_dir.is_dir():
        return f"the runs folder {runs_dir} is a file, not a folder (--runs-dir or ${RUNS_DIR_ENV})"
    if not create:
        return None
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return (f"cannot create the runs folder {runs_dir}: {exc.strerror or exc} "
                f"(choose another with --runs-dir or ${RUNS_DIR_ENV})")
    if not os.access(runs_dir, os.W_OK | os.X_OK):
        return (f"cannot write to the runs folder {runs_dir}: permission denied "
                f"(choose another with --runs-dir or ${RUNS_DIR_ENV})")
    return None


def mark_runs_dir(runs_dir: Path) -> None:
    """Mark ``runs_dir`` as a runs folder (:data:`RUNS_MARKER`), so a job whose input holds
    it (``path: .`` with the default ``./mlpipe-runs``) never reads its records and logs as
    data (:func:`is_runs_dir`); a folder that cannot be marked is left as it is."""
    with contextlib.suppress(OSError):
        (runs_dir / RUNS_MARKER).touch(exist_ok=True)


def is_runs_dir(folder: str) -> bool:
    """Whether ``folder`` is a runs folder (it holds :data:`RUNS_MARKER`)."""
    return os.path.lexists(os.path.join(folder, RUNS_MARKER))


def job_name_base(source: str | os.PathLike[str], display_name: Any = None,
                  experiment_name: Any = None) -> str:
    """What a generated job name starts with: the YAML's ``display_name``, else its
    ``experiment_name``, else the file's folder when its stem is generic
    (``pipeline``, ``job``, ``main``), else the file's stem; slugified to Azure's pattern."""
    path = Path(source)
    folder = path.resolve().parent.name
    generic = path.stem.lower() in GENERIC_STEMS
    candidates = [display_name, experiment_name, folder if generic else path.stem, folder,
                  path.stem]
    for candidate in candidates:
        slug = slugify(candidate) if isinstance(candidate, str) else ""
        if slug:
            return slug
    return "job"


def slugify(text: str) -> str:
    """``"Word Count (v2)"`` -> ``"word_count_v2"``: lower case, runs of anything but
    letters, digits, ``_`` and ``-`` become one ``_``, trimmed to start with a letter or digit."""
    slug = re.sub(r"[^a-z0-9_-]+", "_", text.lower())
    slug = re.sub(r"^[^a-z0-9]+", "", slug)[:NAME_BASE_LIMIT]
    return slug.rstrip("_-")


def generate_job_name(source: str | os.PathLike[str], at: datetime | None = None, *,
                      display_name: Any = None, experiment_name: Any = None,
                      taken: Callable[[str], bool] | None = None) -> str:
    """A unique Azure-like name: ``<base>_<yyyymmdd_hhmmss>_<4 hex>``, ``<base>`` from
    :func:`job_name_base`; ``taken(name)`` (e.g. ``JobStore.exists``) rejects names in use."""
    base = job_name_base(source, display_name, experiment_name)
    stamp = (at or datetime.now(timezone.utc)).astimezone().strftime("%Y%m%d_%H%M%S")
    while True:
        name = f"{base}_{stamp}_{secrets.token_hex(2)}"
        if taken is None or not taken(name):
            return name


def check_job_name(name: str) -> str | None:
    """``None`` when ``name`` is a valid Azure ML job name that can name a job folder, else
    what is wrong with it (every command and API that takes a job name asks here)."""
    if not JOB_NAME.fullmatch(name):
        shown = repr(name) if len(name) <= 80 else f"{name[:60]!r}... ({len(name)} characters)"
        return (f"invalid job name {shown}: use letters, digits, '_' and '-', starting with a "
                "letter or digit, at most 255 characters")
    if name.lower() in RESERVED_NAMES:
        return (f"job name {name!r} is reserved: the runs folder keeps its {name.lower()} "
                "there; choose another name")
    return None
