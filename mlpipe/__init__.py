"""mlpipe: validate and run Azure ML v2 pipelines with parallel steps locally.

The SDK names (``from mlpipe import Input, Output, load_job, load_component,
pipeline, run, ValidationError``) mirror ``azure.ai.ml``; they are loaded on
first use so the CLI does not pay for them.

Importing mlpipe installs its import hook (:mod:`mlpipe.import_mirrors`): where the real
packages are not installed, ``azureml.core`` / ``azureml.*`` and ``azure.ai.ml`` resolve to
mlpipe's mirrors in this process and in the ones it starts (``MLPIPE_IMPORT_MIRRORS=0``
turns it off). Where the working folder has an ``mlpipe.toml``, its URL stand-ins serve
this process's downloads too (:func:`mlpipe.url_stand_ins.install_url_stand_ins`), as under
``mlpipe run-script``.
"""

from __future__ import annotations

import os
from typing import Any

from mlpipe.import_mirrors import install_from_environment
from mlpipe.version import __version__

install_from_environment()
if os.path.isfile("mlpipe.toml"):  # compiler.assets.ASSETS_FILE, not imported: it is slow
    from mlpipe.url_stand_ins import install_url_stand_ins

    install_url_stand_ins()

_SDK_NAMES = {
    "Input", "Output", "load_job", "load_component", "pipeline", "run", "command",
    "RetrySettings", "JobResourceConfiguration", "RunFunction", "Environment",
    "PipelineJob", "parallel_run_function", "MLClient",
}

__all__ = ["__version__", "MlpipeError", "ValidationError", "dsl", *sorted(_SDK_NAMES)]


def __getattr__(name: str) -> Any:
    if name in _SDK_NAMES:
        from mlpipe import sdk

        return getattr(sdk, name)
    if name == "ValidationError":
        from mlpipe.diagnostics import ValidationError

        return ValidationError
    if name == "MlpipeError":
        from mlpipe.errors import MlpipeError

        return MlpipeError
    if name == "dsl":
        import importlib

        return importlib.import_module("mlpipe.dsl")
    raise AttributeError(f"module 'mlpipe' has no attribute {name!r}")
