"""How failures are grouped: the same error counts once, whatever object, number, path or
name it mentions.

:func:`signature` is the one rule (job_result.txt, user/error.txt, the console's top errors
and report.html all group by it): the exception type, the message with numbers, paths,
quoted names and object addresses masked, and the user's frame that raised it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# ``<generator object run at 0x7f3a...>``, ``<Foo object at 0x...>``: a new address each time.
_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]+\b")
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*):(?:\s|$)")
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.~-]*[/\\])+[\w.~-]*")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)',
                    re.MULTILINE)
_LIBRARY = ("site-packages", "dist-packages", "/lib/python", "<frozen", "\\lib\\")
_MLPIPE_DIR = str(Path(__file__).resolve().parents[1])
MESSAGE_WIDTH = 300


@dataclass(frozen=True)
class Signature:
    """What makes two failures the same error."""

    category: str  # UserError, Timeout, ProcessDied, ...
    exception: str  # "ValueError" ("" when the message names none)
    pattern: str  # the message after the exception type, masked
    frame: str  # "score.py:12 in run": the user's frame that raised ("" when unknown)

    @property
    def text(self) -> str:
        """``ValueError: cannot score rec_<n>.txt``."""
        return f"{self.exception}: {self.pattern}" if self.exception else self.pattern


def signature(category: str, message: str, traceback: str | None = None) -> Signature:
    """The signature of a failure: ``message`` is the attempt's error message (its
    significant line is used), ``traceback`` the full traceback when there is one."""
    line = message_line(message)
    match = _EXCEPTION.match(line)
    exception, rest = (match.group(1), line[match.end():].strip()) if match else ("", line)
    return Signature(category, exception, mask(rest), user_frame(traceback or message))


def message_line(message: str) -> str:
    """The line of ``message`` that says what went wrong (a traceback's last line), at most
    ``MESSAGE_WIDTH`` characters."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    line = lines[-1] if lines and lines[0].startswith("Traceback") else (lines[0] if lines else "")
    return line if len(line) <= MESSAGE_WIDTH else line[: MESSAGE_WIDTH - 3] + "..."


def mask(text: str) -> str:
    """``text`` with addresses, quoted names, paths and numbers replaced by placeholders."""
    text = _ADDRESS.sub("at <address>", text)
    text = _QUOTED.sub("'…'", text)
    text = _PATH.sub("<path>", text)
    return _NUMBER.sub("<n>", text)


def user_frame(traceback: str) -> str:
    """``file.py:12 in run`` of the last frame of ``traceback`` in the user's code (not
    mlpipe's, the standard library's or an installed package's); else of the last frame."""
    frames = list(_FRAME.finditer(traceback))
    for found in reversed(frames):
        file = found.group("file")
        if not file.startswith(_MLPIPE_DIR) and not any(part in file for part in _LIBRARY):
            return f"{Path(file).name}:{found.group('line')} in {found.group('func')}"
    if frames:
        last = frames[-1]
        return f"{Path(last.group('file')).name}:{last.group('line')} in {last.group('func')}"
    return ""


__all__ = ["Signature", "mask", "message_line", "signature", "user_frame"]
