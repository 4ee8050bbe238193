"""``EntryScript``: the helper Azure gives entry scripts, as mlpipe workers provide it.

Entry scripts import it as ``from azureml_user.parallel_run import EntryScript``;
the ``azureml_user`` package is a shim under ``mlpipe/runtime/shim`` that only
mlpipe workers put on ``sys.path``. The worker calls :func:`configure` before
``init()``; outside a worker ``EntryScript()`` raises a clear error.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from mlpipe.runtime.textio import file_handler

LOG_FORMAT = "%(asctime)s|%(levelname)s|%(process)d|%(threadName)s|%(message)s"


@dataclass(frozen=True)
class EntryScriptContext:
    """Where the current worker's entry script logs and writes."""

    log_file: str  # logs/user/entry_script_log/<node>/processNNN.log.txt
    log_dir: str
    output_dir: str  # AZUREML_BI_OUTPUT_PATH
    working_dir: str
    agent_name: str
    logging_level: str = "INFO"


_context: EntryScriptContext | None = None
_instance: EntryScript | None = None


def configure(context: EntryScriptContext) -> None:
    """Set up the singleton for this worker process (called by the worker before init())."""
    global _context, _instance
    _context = context
    _instance = None


class EntryScript:
    """Singleton giving an entry script its logger and folders (Azure's API)."""

    logger: logging.Logger
    log_dir: str
    output_dir: str
    working_dir: str
    agent_name: str

    def __new__(cls) -> EntryScript:
        global _instance
        if _instance is None:
            if _context is None:
                raise RuntimeError(
                    "EntryScript is only available inside a parallel step worker "
                    "(run the step with `mlpipe job create` or mlpipe.runtime.run_parallel_step)."
                )
            instance = super().__new__(cls)
            instance._setup(_context)
            _instance = instance
        return _instance

    def _setup(self, context: EntryScriptContext) -> None:
        self.log_dir = context.log_dir
        self.output_dir = context.output_dir
        self.working_dir = context.working_dir
        self.agent_name = context.agent_name
        Path(context.log_file).parent.mkdir(parents=True, exist_ok=True)
        Path(context.working_dir).mkdir(parents=True, exist_ok=True)
        logger = logging.getLogger(f"azureml_user.entry_script.{context.agent_name}")
        logger.setLevel(getattr(logging, context.logging_level.upper(), logging.INFO))
        logger.propagate = False
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
            handler.close()
        handler = file_handler(context.log_file)
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        logger.addHandler(handler)
        self.logger = logger


__all__ = ["EntryScript", "EntryScriptContext", "configure"]
