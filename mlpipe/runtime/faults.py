"""Faults of mlpipe's own machinery (not of user code), told in one line.

An I/O error names its path and its cause (``/runs/j/job.json: No space left on
device [ENOSPC]``); anything else is ``<type>: <message>``. The driver, the job
runner and the CLI use :func:`describe_fault` for every error they did not expect,
so job_result.txt, job.json and the console say the same thing.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def describe_fault(error: BaseException) -> str:
    """One line naming what failed, where and why."""
    if isinstance(error, OSError) and (error.strerror or error.errno):
        cause = error.strerror or os.strerror(error.errno or 0)
        code = errno.errorcode.get(error.errno or 0)
        where = error.filename if error.filename is not None else None
        text = f"{os.fsdecode(where)}: {cause}" if where is not None else cause
        if error.filename2 is not None:
            text += f" (-> {os.fsdecode(error.filename2)})"
        return f"{text} [{code}]" if code else text
    message = str(error).strip().splitlines()
    first = message[0] if message else ""
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


@contextmanager
def naming(path: str | Path) -> Iterator[None]:
    """Give an :class:`OSError` raised inside the block ``path`` as its file name when it has
    none (``write()`` and ``close()`` errors such as ENOSPC do not say which file)."""
    try:
        yield
    except OSError as error:
        if error.filename is None:
            error.filename = str(path)
        raise


__all__ = ["describe_fault", "naming"]
