"""How mlpipe writes (and reads back) its text logs, reports and state files.

File names are bytes on POSIX: one that is not valid UTF-8 (``caf\\xe9.txt``) reaches
Python as ``'caf\\udce9.txt'``, which a plain UTF-8 writer refuses with
``UnicodeEncodeError``. Every log and report writer goes through :func:`open_text`,
:func:`write_text` or :func:`file_handler`, which write such characters as the
escape ``\\udce9`` (``errors="backslashreplace"``): the files stay valid UTF-8 for any
reader and the name stays recoverable. Data (append_row rows) is written with
``errors=DATA_ERRORS`` (``surrogateescape``): the original bytes, as the user's code
produced them.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import IO, Any

ENCODING = "utf-8"
ERRORS = "backslashreplace"  # logs and reports: always valid UTF-8
DATA_ERRORS = "surrogateescape"  # append_row data: the bytes the user's code produced


def open_text(path: str | Path, mode: str = "r", *, errors: str = ERRORS,
              **options: Any) -> IO[str]:
    """:func:`open` in text ``mode`` with the project's encoding and error handler."""
    return open(path, mode, encoding=ENCODING, errors=errors, **options)  # noqa: SIM115


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` (replacing it)."""
    with open_text(path, "w") as handle:
        handle.write(text)


def replace_text(path: str | Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` (a name of its own: two writers at
    once never share it), then rename it over ``path``: readers see the old file or the new
    one, and a failed write (a full disk) leaves neither a torn file nor the temporary one."""
    target = Path(path)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    temporary = Path(name)
    try:
        with open(fd, "w", encoding=ENCODING, errors=ERRORS) as handle:
            handle.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def file_handler(path: str | Path) -> logging.FileHandler:
    """A :class:`logging.FileHandler` writing ``path`` like :func:`open_text`."""
    return logging.FileHandler(path, encoding=ENCODING, errors=ERRORS)


def encodable(text: str) -> str:
    """``text`` with undecodable bytes as ``\\udcXX`` escapes, for consoles and streams whose
    own error handler is strict."""
    return text.encode(ENCODING, ERRORS).decode(ENCODING)


__all__ = ["DATA_ERRORS", "ENCODING", "ERRORS", "encodable", "file_handler", "open_text",
           "replace_text", "write_text"]
