"""The driver log ``logs/sys/master_role.txt``, in Azure's ``time|LEVEL|pid|thread|message``
format."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from mlpipe.runtime.textio import file_handler

MASTER_ROLE_FORMAT = "%(asctime)s|%(levelname)s|%(process)d|%(thread)d|%(message)s"


class _UtcFormatter(logging.Formatter):
    """Times in UTC, as Azure writes them."""

    def converter(self, timestamp: float | None) -> time.struct_time:
        return time.gmtime(timestamp)


def log_level(name: str | None) -> int:
    """``logging_level`` of a step ("DEBUG", "info", ...) as a :mod:`logging` level; INFO if
    unknown."""
    level = logging.getLevelName((name or "INFO").strip().upper())
    return level if isinstance(level, int) else logging.INFO


def master_role_logger(path: Path, level: str | None, name: str = "master_role") -> logging.Logger:
    """A logger that writes only to ``path`` (created now, even if nothing is logged), at ``level``.

    The logger is not registered in :mod:`logging`'s global tree (nothing leaks
    from one step to the next, nothing reaches the root logger's handlers);
    close it with :func:`close_logger`.
    """
    logger = logging.Logger(name, log_level(level))
    logger.propagate = False
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = file_handler(path)
    handler.setFormatter(_UtcFormatter(MASTER_ROLE_FORMAT))
    logger.addHandler(handler)
    return logger


def close_logger(logger: logging.Logger) -> None:
    """Flush and close every handler of ``logger`` (idempotent); later records are dropped."""
    for handler in list(logger.handlers):
        handler.close()
        logger.removeHandler(handler)
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
