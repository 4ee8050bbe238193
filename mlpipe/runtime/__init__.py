"""The parallel-step runtime: run an entry script over mini-batches as Azure's PRS does.

Public entry: :func:`run_parallel_step` (in :mod:`mlpipe.runtime.parallel_step`).
See docs/runtime.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlpipe.exports import exports_on_first_use

if TYPE_CHECKING:
    from mlpipe.runtime.concurrency import default_concurrency, worker_names
    from mlpipe.runtime.parallel_step import output_dir, run_parallel_step

# Imported on first use: ``import mlpipe.runtime.<module>`` must not pay for the driver.
_EXPORTS = {"default_concurrency": "mlpipe.runtime.concurrency",
            "worker_names": "mlpipe.runtime.concurrency",
            "output_dir": "mlpipe.runtime.parallel_step",
            "run_parallel_step": "mlpipe.runtime.parallel_step"}
__getattr__ = exports_on_first_use(__name__, _EXPORTS)

__all__ = ["default_concurrency", "output_dir", "run_parallel_step", "worker_names"]
