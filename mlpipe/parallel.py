"""``mlpipe.parallel``: the names of ``azure.ai.ml.parallel`` (plus the settings classes).

    from mlpipe.parallel import parallel_run_function, RunFunction
"""

from __future__ import annotations

from mlpipe.sdk.entities import JobResourceConfiguration, RetrySettings, RunFunction
from mlpipe.sdk.functions import parallel_run_function
from mlpipe.sdk.nodes import ParallelNode

ParallelJob = ParallelNode

__all__ = ["JobResourceConfiguration", "ParallelJob", "RetrySettings", "RunFunction",
           "parallel_run_function"]
