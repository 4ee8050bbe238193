"""``mlpipe.sweep``: mirror of ``azure.ai.ml.sweep``, whose names import but are not built.

A sweep built in code (``Choice``, ``Uniform``, ``BanditPolicy``, ``node.sweep(...)``) is not
mirrored: each name is :class:`~mlpipe.sdk.unavailable.Unavailable`, so a published notebook
imports as written and stops at the first use with one ``NotAvailableLocally`` line saying
what to do. mlpipe runs ``type: sweep`` steps written in a pipeline YAML (docs/running.md).
Mirror module: docs/architecture.md lists every mirror.
"""

from __future__ import annotations

from mlpipe.sdk.unavailable import unavailable_module

HINT = ("mlpipe does not build sweeps in code; write the sweep as a `type: sweep` step of a "
        "pipeline YAML (mlpipe runs it: docs/running.md, Sweep steps), or run this node here "
        "with fixed values (node.inputs.<name> = value).")

# azure-ai-ml's public names of the module (any other name resolves the same way).
NAMES = ("BanditPolicy", "BayesianSamplingAlgorithm", "Choice", "GridSamplingAlgorithm",
         "LogNormal", "LogUniform", "MedianStoppingPolicy", "Normal", "Objective",
         "QLogNormal", "QLogUniform", "QNormal", "QUniform", "Randint",
         "RandomSamplingAlgorithm", "SamplingAlgorithm", "SweepJob", "SweepJobLimits",
         "TruncationSelectionPolicy", "Uniform")

__all__ = ["HINT", "NAMES", *NAMES]

__getattr__ = unavailable_module("azure.ai.ml.sweep", HINT)
