"""The parallel-step runtime: run an entry script over mini-batches as Azure's PRS does.

Public entry: :func:`run_parallel_step` (in :mod:`mlpipe.runtime.parallel_step`).
See docs/runtime.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mlpipe.runtime.concurrency import default_concurrency, worker_names
    from mlpipe.runtime.parallel_step import output_dir, run_parallel_step

# Imported on first use: ``import mlpipe.runtime.<module>`` must not pay for the driver.
_EXPORTS = {"default_concurrency": "concurrency", "worker_names": "concurrency",
            "output_dir": "parallel_step", "run_parallel_step": "parallel_step"}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib  # noqa: PLC0415

        return getattr(importlib.import_module(f"mlpipe.runtime.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["default_concurrency", "output_dir", "run_parallel_step", "worker_names"]
