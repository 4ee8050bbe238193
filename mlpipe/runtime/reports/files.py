"""Which files of a step's ``logs/`` folder are reports (the runtime owns that layout).

The files at the top of ``logs`` (``job_result.txt``, ``readme.txt``,
``job_progress_overview.*.txt``), ``sys/job_report/*`` and ``sys/*.html``; the job
runner puts them on each step's result so callers never walk the layout themselves.
"""

from __future__ import annotations

from pathlib import Path


def report_files(logs_dir: str) -> dict[str, str]:
    """A step's report files: path relative to ``logs_dir`` (posix) -> absolute path."""
    root = Path(logs_dir)
    if not logs_dir or not root.is_dir():
        return {}
    found = [p for p in root.iterdir() if p.is_file()]
    found += [p for p in (root / "sys" / "job_report").glob("*") if p.is_file()]
    found += [p for p in (root / "sys").glob("*.html") if p.is_file()]
    return {p.relative_to(root).as_posix(): str(p) for p in sorted(found)
            if not p.name.endswith(".tmp")}  # a report being rewritten (textio.replace_text)
