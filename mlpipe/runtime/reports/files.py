"""Which files of a step's ``logs/`` folder are reports (the runtime owns that layout).

The files at the top of ``logs`` (``job_result.txt``, ``readme.txt``,
``job_progress_overview.*.txt``), ``sys/job_report/*`` and ``sys/*.html``; the job
runner puts them on each step's result so callers never walk the layout themselves.
"""

from __future__ import annotations

from mlpipe.runtime.step_logs import StepLogs


def report_files(logs_dir: str) -> dict[str, str]:
    """A step's report files: path relative to ``logs_dir`` (posix) -> absolute path."""
    logs = StepLogs.of(logs_dir)
    root = logs.root
    if not logs_dir or not root.is_dir():
        return {}
    found = [p for p in root.iterdir() if p.is_file()]
    found += [p for p in logs.job_report.glob("*") if p.is_file()]
    found += [p for p in logs.sys.glob("*.html") if p.is_file()]
    return {p.relative_to(root).as_posix(): str(p) for p in sorted(found)
            if not p.name.endswith(".tmp")}  # a report being rewritten (textio.replace_text)
