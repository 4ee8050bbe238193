"""``mlpipe.parallel``: mirror of ``azure.ai.ml.parallel`` (plus the settings classes).

    from mlpipe.parallel import parallel_run_function, RunFunction

Mirror module: it only re-exports (the code lives in mlpipe.sdk.functions, mlpipe.sdk.nodes and
mlpipe.sdk.entities). Not to be confused with the same-named modules under ``mlpipe.sdk`` /
``mlpipe.schema``; docs/architecture.md lists every mirror.
"""

from __future__ import annotations

from mlpipe.sdk.entities import JobResourceConfiguration, RetrySettings, RunFunction
from mlpipe.sdk.functions import parallel_run_function
from mlpipe.sdk.nodes import ParallelNode

ParallelJob = ParallelNode

__all__ = ["JobResourceConfiguration", "ParallelJob", "RetrySettings", "RunFunction",
           "parallel_run_function"]
