"""Run by Python at start-up when this folder is on ``PYTHONPATH`` (a command step's
processes): installs mlpipe's import hook (:mod:`mlpipe.import_mirrors`) and, when the job
has an ``mlpipe.toml``, its URL stand-ins (:mod:`mlpipe.url_stand_ins`), then runs the
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
    try:
        from mlpipe.import_mirrors import ENV_FLAG, install_from_environment
        from mlpipe.runs import STAND_INS_ENV
    except ImportError:  # another Python, without mlpipe
        return
    install_from_environment()
    # the URL stand-ins (and the compiler they read mlpipe.toml with) only where wanted:
    # they cost every Python's start-up
    if os.environ.get(STAND_INS_ENV) or os.environ.get(ENV_FLAG) == "1":
        from mlpipe.url_stand_ins import install_url_stand_ins

        install_url_stand_ins()


if __name__ == "sitecustomize":
    _install_hook()
    _run_hidden_sitecustomize()
