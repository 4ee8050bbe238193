"""Tracebacks that name the user's files, not the run's snapshot copies of them.

A step runs a snapshot of its code folder (``<runs>/<job>/<step>/code/``) so a job is
not disturbed by edits made while it runs; the user edits the original, so that is
the path an error should point at.
"""

from __future__ import annotations

import re
import traceback
from pathlib import Path

_MLPIPE_DIR = str(Path(__file__).resolve().parents[1])


def to_user_paths(text: str, snapshot_dir: str | None, source_dir: str | None) -> str:
    """``text`` with each traceback frame's ``File "<snapshot_dir>/..."`` naming the
    same file under ``source_dir`` (unchanged when either is unknown)."""
    if not text or not snapshot_dir or not source_dir:
        return text
    snapshot, source = str(Path(snapshot_dir)), str(Path(source_dir))
    frame = re.compile(r'(File ")' + re.escape(snapshot) + r'(?=[/\\"])')
    return frame.sub(lambda match: match.group(1) + source, text)


def user_traceback(error: BaseException, *, runner_frames: bool = False) -> str:
    """The traceback of ``error`` without mlpipe's own calling frames on top (and, with
    ``runner_frames``, Python's ``<frozen runpy>`` frames that ran a script); the last
    frame is always kept."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None and _calling(tb.tb_frame.f_code.co_filename,
                                                                   runner_frames):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(error), error, tb))


def _calling(filename: str, runner_frames: bool) -> bool:
    if runner_frames and filename.startswith("<frozen"):
        return True
    return str(Path(filename).resolve()).startswith(_MLPIPE_DIR)


__all__ = ["to_user_paths", "user_traceback"]
