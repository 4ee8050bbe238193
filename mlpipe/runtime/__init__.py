"""The parallel-step runtime: run an entry script over mini-batches as Azure's PRS does.

Public entry: :func:`run_parallel_step` (in :mod:`mlpipe.runtime.parallel_step`).
See docs/runtime.md.
"""

from __future__ import annotations

from mlpipe.runtime.concurrency import default_concurrency, worker_names
from mlpipe.runtime.parallel_step import output_dir, run_parallel_step

__all__ = ["default_concurrency", "output_dir", "run_parallel_step", "worker_names"]
