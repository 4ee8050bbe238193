"""The fail-fix loop: the commands that follow a job with failed mini-batches (see them, run
one in the foreground, run the failed ones again) or a canceled job (resume it).

The console of ``mlpipe job create`` and report.html both name them, from the job's record
(``job.json``): :func:`fix_commands`, :func:`resume_command`.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from mlpipe.jobs.record import JobRecord, SummaryRecord
from mlpipe.runs import resolve_runs_dir


def shown(path: str | Path) -> str:
    """``path`` for a command line: relative to the current folder when inside it, quoted."""
    absolute = Path(path).absolute()
    try:
        text = str(absolute.relative_to(Path.cwd()))
    except ValueError:
        text = str(absolute)
    return shlex.quote(text)


def runs_dir_option(runs_dir: str | Path) -> str:
    """`` --runs-dir R`` unless ``R`` is where a command run here looks anyway."""
    if Path(runs_dir).resolve() == resolve_runs_dir().resolve():
        return ""
    return f" --runs-dir {shown(runs_dir)}"


def _job(record: JobRecord) -> tuple[str, str]:
    """The job's name and the ``--runs-dir`` option its commands need."""
    option = runs_dir_option(Path(record.run_dir).parent) if record.run_dir else ""
    return shlex.quote(record.name or ""), option


def failed_steps(record: JobRecord) -> list[tuple[str, SummaryRecord]]:
    """The parallel steps of the job with failed mini-batches: ``(name, summary)``."""
    return [(name, step.summary) for name, step in record.steps.items()
            if step.kind == "parallel" and step.summary is not None
            and step.summary.mini_batches_failed]


def fix_commands(record: JobRecord) -> list[str]:
    """``mlpipe job show NAME --mini-batches --failed``, ``mlpipe job debug NAME
    --mini-batch ID`` (a failed one) and ``mlpipe job rerun NAME --failed-only``; ``--step``
    where the job has several parallel steps; nothing when no mini-batch failed."""
    failed = failed_steps(record)
    if not failed:
        return []
    name, option = _job(record)
    parallel = record.parallel_steps()
    lines = []
    for step, summary in failed:
        which = f" --step {shlex.quote(step)}" if len(parallel) > 1 else ""
        lines.append(f"mlpipe job show {name} --mini-batches --failed{which}{option}")
        example = summary.failed_example
        if example:
            lines.append(f"mlpipe job debug {name} --mini-batch {example}{which}{option}")
    lines.append(f"mlpipe job rerun {name} --failed-only{option}")
    return lines


def resume_command(record: JobRecord) -> str:
    """``mlpipe job create --file F --name N``: what resumes the job (finished mini-batches
    and completed steps are kept)."""
    name, option = _job(record)
    source = shown(record.source or "pipeline.yml")
    return f"mlpipe job create --file {source} --name {name}{option}"


def next_lines(record: JobRecord) -> list[str]:
    """What to do after the job ``record`` ended: resume it when it was canceled (a resume
    runs its failed mini-batches again too); else list, debug and rerun its failed
    mini-batches when some failed."""
    if record.status == "canceled":
        return [f"canceled; resume with: {resume_command(record)}"]
    fix = fix_commands(record)
    if not fix:
        return []
    return ["next: list the failed mini-batches, run one in the foreground (breakpoint() and "
            "--pdb work), then, fixed, run the failed ones again:",
            *(f"  {command}" for command in fix)]


__all__ = ["failed_steps", "fix_commands", "next_lines", "resume_command", "runs_dir_option",
           "shown"]
