"""``mlpipe.sweep``: mirror of ``azure.ai.ml.sweep``, the settings of a sweep built in code.

``Choice``, ``Uniform``, ... (the search space), ``RandomSamplingAlgorithm``, ...,
``BanditPolicy``, ``MedianStoppingPolicy``, ``TruncationSelectionPolicy``, ``Objective`` and
``SweepJobLimits`` are azure-ai-ml's classes (constructors, defaults, the YAML they write):
a node called with a distribution for an input and then ``node.sweep(...)`` is the
``type: sweep`` step (or standalone sweep job) azure-ai-ml builds, and runs here through
mlpipe's sweep runner (docs/running.md, Sweep steps). The code is in ``mlpipe/sdk/sweep.py``
and ``mlpipe/sdk/nodes.py`` (``SweepNode``). ``SweepJob(...)`` made by hand is not mirrored:
it stops with one ``NotAvailableLocally`` line saying what to do (:data:`HINT`).
Mirror module: docs/architecture.md lists every mirror.
"""

from __future__ import annotations

from mlpipe.sdk.sweep import (
    BanditPolicy,
    BayesianSamplingAlgorithm,
    Choice,
    GridSamplingAlgorithm,
    LogNormal,
    LogUniform,
    MedianStoppingPolicy,
    Normal,
    Objective,
    QLogNormal,
    QLogUniform,
    QNormal,
    QUniform,
    Randint,
    RandomSamplingAlgorithm,
    SamplingAlgorithm,
    SweepJobLimits,
    TruncationSelectionPolicy,
    Uniform,
)
from mlpipe.unavailable import Unavailable, unavailable_module

HINT = ("mlpipe builds sweeps the way published programs do: call the command with a "
        "distribution for each swept input and sweep it, "
        "node(lr=Uniform(0.01, 0.1)).sweep(primary_metric=..., goal=...), then set_limits(...); "
        "a SweepJob(...) made by hand is not mirrored.")

SweepJob = Unavailable("azure.ai.ml.sweep.SweepJob", HINT)

# azure-ai-ml's public names of the module.
NAMES = ("BanditPolicy", "BayesianSamplingAlgorithm", "Choice", "GridSamplingAlgorithm",
         "LogNormal", "LogUniform", "MedianStoppingPolicy", "Normal", "Objective",
         "QLogNormal", "QLogUniform", "QNormal", "QUniform", "Randint",
         "RandomSamplingAlgorithm", "SamplingAlgorithm", "SweepJob", "SweepJobLimits",
         "TruncationSelectionPolicy", "Uniform")

__all__ = ["BanditPolicy", "BayesianSamplingAlgorithm", "Choice", "GridSamplingAlgorithm",
           "HINT", "LogNormal", "LogUniform", "MedianStoppingPolicy", "NAMES", "Normal",
           "Objective", "QLogNormal", "QLogUniform", "QNormal", "QUniform", "Randint",
           "RandomSamplingAlgorithm", "SamplingAlgorithm", "SweepJob", "SweepJobLimits",
           "TruncationSelectionPolicy", "Uniform"]

# Any other name resolves to an Unavailable that says what to do.
__getattr__ = unavailable_module("azure.ai.ml.sweep", HINT)
