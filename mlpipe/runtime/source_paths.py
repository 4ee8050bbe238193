"""Tracebacks that name the user's files, not the run's snapshot copies of them.

A step runs a snapshot of its code folder (``<runs>/<job>/<step>/code/``) so a job is
not disturbed by edits made while it runs; the user edits the original, so that is
the path an error should point at.
"""

from __future__ import annotations

import re
from pathlib import Path


def to_user_paths(text: str, snapshot_dir: str | None, source_dir: str | None) -> str:
    """``text`` with each traceback frame's ``File "<snapshot_dir>/..."`` naming the
    same file under ``source_dir`` (unchanged when either is unknown)."""
    if not text or not snapshot_dir or not source_dir:
        return text
    snapshot, source = str(Path(snapshot_dir)), str(Path(source_dir))
    frame = re.compile(r'(File ")' + re.escape(snapshot) + r'(?=[/\\"])')
    return frame.sub(lambda match: match.group(1) + source, text)


__all__ = ["to_user_paths"]
