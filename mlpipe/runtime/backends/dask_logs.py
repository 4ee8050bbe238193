"""Dask's own log lines go to the steps' driver logs, never onto the console.

While mlpipe uses Dask in this process (a step on the dask backend, or the job's
LocalCluster), the scheduler's, client's and event loop's messages ("Couldn't gather
keys", "Task exception was never retrieved ... AllExit" when a worker dies) would land
in the middle of the progress display. :class:`DaskLogRoute` takes the console stream
handlers off those loggers for as long as any route is open, and sends the records to
each running step's ``logs/sys/master_role.txt`` instead.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
import threading
from types import TracebackType
from typing import Any

# distributed's loggers (and its dashboard's), and asyncio's (its loop reports a task's
# unretrieved exception)
DASK_LOGGERS: tuple[str, ...] = ("distributed", "asyncio", "tornado", "bokeh")

_lock = threading.Lock()
_open = 0
_saved: list[tuple[logging.Logger, logging.Handler]] = []  # console handlers taken off
_saved_propagate: dict[str, bool] = {}
_null = logging.NullHandler()  # keeps logging's last-resort stderr handler away


def _is_console(handler: logging.Handler) -> bool:
    return (isinstance(handler, logging.StreamHandler)
            and not isinstance(handler, logging.FileHandler)
            and handler.stream in (sys.stderr, sys.stdout, sys.__stderr__, sys.__stdout__))


def _take_off_the_console() -> None:
    """Remove the console handlers of Dask's loggers and of their children (Dask's
    logging set-up, done when ``distributed`` is imported, gives some children their own
    handler and ``propagate = False``): children pass their records up to the top-level
    loggers, which keep them from the root logger's handlers."""
    with contextlib.suppress(ImportError):
        import distributed  # noqa: F401, PLC0415 - its logging set-up first, then ours
    names = [name for name in list(logging.root.manager.loggerDict)
             if any(name == top or name.startswith(top + ".") for top in DASK_LOGGERS)]
    for name in sorted(set(names) | set(DASK_LOGGERS)):
        logger = logging.getLogger(name)
        for handler in [h for h in logger.handlers if _is_console(h)]:
            logger.removeHandler(handler)
            _saved.append((logger, handler))
        _saved_propagate[name] = logger.propagate
        top = name in DASK_LOGGERS
        logger.propagate = not top
        if top:
            logger.addHandler(_null)


class Tagged(logging.Handler):
    """Hands ``target`` one line for each distinct problem Dask logs (``Dask
    distributed.scheduler: Couldn't gather keys ...``): a record whose message (numbers
    aside) was handed on already is counted, not repeated, and an exception is said by
    its type and message, never its traceback (a lost scheduler makes Dask log the same
    failure every few seconds). :meth:`summarize` says how often each repeated line came."""

    def __init__(self, target: logging.Handler) -> None:
        super().__init__()
        self.target = target
        self._seen: dict[tuple[str, str], list[Any]] = {}  # -> [repeats, the first record]
        self._seen_lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            text += f" ({type(error).__name__}: {error})" if str(error) else \
                f" ({type(error).__name__})"
        line = text.strip().splitlines()[0] if text.strip() else record.name
        key = (record.name, _NUMBERS.sub("#", line))
        with self._seen_lock:
            seen = self._seen.get(key)
            if seen is not None:
                seen[0] += 1
                return
            self._seen[key] = [0, record]
        self._hand_on(record, line)

    def _hand_on(self, record: logging.LogRecord, line: str) -> None:
        copy = logging.makeLogRecord(record.__dict__)
        copy.msg, copy.args = f"Dask {record.name}: {line}", None
        copy.exc_info, copy.exc_text, copy.stack_info = None, None, None
        self.target.handle(copy)

    def summarize(self) -> None:
        """One line for each line that came again: how many more times."""
        with self._seen_lock:
            repeated = [(key, seen) for key, seen in self._seen.items() if seen[0]]
            self._seen.clear()
        for (_name, line), (count, record) in repeated:
            self._hand_on(record, f"{line} [said {count} more "
                                  f"time{'s' if count != 1 else ''} since]")


_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|\d+(\.\d+)*")  # counts, addresses, object ids


class DaskLogRoute:
    """A context (or :meth:`open`/:meth:`close`) routing Dask's logs to ``handlers``
    (none: they are only kept off the console)."""

    def __init__(self, handlers: tuple[logging.Handler, ...] = ()) -> None:
        self.handlers = handlers
        self._is_open = False

    def open(self) -> DaskLogRoute:
        global _open
        with _lock:
            if self._is_open:
                return self
            self._is_open = True
            if _open == 0:
                _take_off_the_console()
            _open += 1
            for name in DASK_LOGGERS:
                for handler in self.handlers:
                    logging.getLogger(name).addHandler(handler)
        return self

    def close(self) -> None:
        global _open
        with _lock:
            if not self._is_open:
                return
            self._is_open = False
            for name in DASK_LOGGERS:
                for handler in self.handlers:
                    logging.getLogger(name).removeHandler(handler)
            for handler in self.handlers:
                if isinstance(handler, Tagged):
                    handler.summarize()
            _open -= 1
            if _open == 0:
                for logger, handler in _saved:
                    logger.addHandler(handler)
                _saved.clear()
                for name, propagate in _saved_propagate.items():
                    logging.getLogger(name).propagate = propagate
                    logging.getLogger(name).removeHandler(_null)
                _saved_propagate.clear()

    def __enter__(self) -> DaskLogRoute:
        return self.open()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


__all__ = ["DASK_LOGGERS", "DaskLogRoute", "Tagged"]
