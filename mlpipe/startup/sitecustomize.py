"""Run by Python at start-up when this folder is on ``PYTHONPATH`` (a command step's
processes): installs mlpipe's import hook (:mod:`mlpipe.import_mirrors`) and, when the job
has an ``mlpipe.toml``, its URL stand-ins (:mod:`mlpipe.scripts`), then runs the
``sitecustomize`` this file hides, if there is one. A Python without mlpipe is unaffected."""

from __future__ import annotations

import importlib
import os
import sys


def _run_hidden_sitecustomize() -> None:
    """Import the next ``sitecustomize`` on ``sys.path`` (the one this file shadows)."""
    here = os.path.dirname(os.path.abspath(__file__))
    saved_path, this = list(sys.path), sys.modules.pop(__name__, None)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
        importlib.import_module("sitecustomize")  # the hidden one, run for its effects
    except ImportError:
        if this is not None:
            sys.modules[__name__] = this
    finally:
        sys.path[:] = saved_path


def _install_hook() -> None:
    # mlpipe.scripts only where URL stand-ins are wanted: it costs every Python's start-up
    wanted = os.environ.get("MLPIPE_STAND_INS") or os.environ.get("MLPIPE_IMPORT_MIRRORS") == "1"
    try:
        if wanted:
            from mlpipe.scripts import install_from_environment
        else:
            from mlpipe.import_mirrors import install_from_environment  # type: ignore[assignment]
    except ImportError:  # another Python, without mlpipe
        return
    install_from_environment()


if __name__ == "sitecustomize":
    _install_hook()
    _run_hidden_sitecustomize()
