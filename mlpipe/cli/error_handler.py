"""The one error handler around every ``mlpipe`` command (as pre-commit's ``error_handler``).

A command handler returns its outcome's exit code (0, or 1 when the job it ran failed or a
file it validated is invalid) and raises for everything else; only this module prints an
error or chooses the code it ends with:

============================  ====  ==========================================================
raised                        exit  said on stderr
============================  ====  ==========================================================
:class:`~mlpipe.errors.UsageError`  2   ``mlpipe: error: <summary>``
:class:`~mlpipe.errors.MlpipeError`  1  its details (diagnostics), then ``mlpipe: <summary>``
:class:`OSError`              1     ``mlpipe: <path>: <cause> [ERRNO]`` (the machine refused)
``KeyboardInterrupt``         130   ``mlpipe: interrupted``
``BrokenPipeError``           1     nothing (the reader of stdout went away)
anything else                 3     one line naming the error and the log file holding its
                                    traceback (a defect of mlpipe: please report it)
============================  ====  ==========================================================

A command whose messages name it (``mlpipe run-script: ...``, ``mlpipe data create: ...``)
sets ``error_prefix`` in its parser's defaults; its errors are said after that prefix.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

from mlpipe.errors import MlpipeError
from mlpipe.version import __version__

UNEXPECTED_EXIT = 3
INTERRUPTED_EXIT = 130
LOG_DIR_ENV = "MLPIPE_LOG_DIR"  # where the traceback of an unexpected error is kept

Handler = Callable[[argparse.Namespace], int]


def run_handler(handler: Handler, args: argparse.Namespace,
                argv: list[str] | None = None) -> int:
    """``handler(args)``'s exit code, or the exit code of what it raised (said on stderr)."""
    prefix: str | None = getattr(args, "error_prefix", None)
    try:
        code = handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        return _stdout_closed()
    except KeyboardInterrupt:
        _say("mlpipe: interrupted")
        return INTERRUPTED_EXIT
    except MlpipeError as error:
        for line in error.details():
            _say(line)
        _say(_prefixed(error.summary(), prefix, error.exit_code))
        return error.exit_code
    except OSError as error:
        from mlpipe.runtime.faults import describe_fault  # noqa: PLC0415

        _say(_prefixed(describe_fault(error), prefix, 1))
        return 1
    except Exception as error:  # noqa: BLE001 - a defect: one line, the traceback in a file
        log = write_crash_log(error, argv)
        where = f"its traceback is in {log}" if log else "its traceback could not be saved"
        _say(f"mlpipe: unexpected error: {_one_line(error)} (a defect of mlpipe; {where}; "
             "please report it)")
        return UNEXPECTED_EXIT


def _prefixed(summary: str, prefix: str | None, code: int) -> str:
    if prefix is not None:
        return f"{prefix}: {summary}"
    return f"mlpipe: error: {summary}" if code == 2 else f"mlpipe: {summary}"


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def _say(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # stderr itself may be gone
        print(line, file=sys.stderr, flush=True)


def log_dir() -> Path:
    """``$MLPIPE_LOG_DIR``, else ``$XDG_CACHE_HOME/mlpipe`` (``~/.cache/mlpipe``)."""
    chosen = os.environ.get(LOG_DIR_ENV)
    if chosen:
        return Path(chosen)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "mlpipe"


def write_crash_log(error: BaseException, argv: list[str] | None = None) -> Path | None:
    """Keep ``error``'s traceback, the command line and the versions in a new file of
    :func:`log_dir` (the temporary folder when that cannot be written); ``None`` when no
    file could be written."""
    text = "".join([
        f"mlpipe {__version__} on Python {platform.python_version()} ({platform.platform()})\n",
        f"command: mlpipe {' '.join(sys.argv[1:] if argv is None else argv)}\n",
        f"when: {time.strftime('%Y-%m-%d %H:%M:%S %z')}\n\n",
        *traceback.format_exception(type(error), error, error.__traceback__),
    ])
    for folder in _log_folders():
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
            fd, path = tempfile.mkstemp(prefix=f"mlpipe-error-{time.strftime('%Y%m%d-%H%M%S')}-",
                                        suffix=".log", dir=folder)
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
                handle.write(text)
            return Path(path)
    return None


def _log_folders() -> Iterator[Path]:
    yield log_dir()
    yield Path(tempfile.gettempdir())


def _stdout_closed() -> int:
    """The reader of stdout went away (``mlpipe ... | head``): as Python's docs recommend,
    point stdout at devnull so the exit flush cannot fail again, and exit quietly (1)."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1


__all__ = ["INTERRUPTED_EXIT", "LOG_DIR_ENV", "UNEXPECTED_EXIT", "log_dir", "run_handler",
           "write_crash_log"]
