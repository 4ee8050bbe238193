"""``mlpipe.v1``: the v1 ``ParallelRunConfig`` / ``ParallelRunStep`` / ``Pipeline`` API, run
locally.

    from mlpipe.v1 import ParallelRunConfig, ParallelRunStep, Pipeline

Mirror module: it exists so ``azureml.pipeline.steps / azureml.core (SDK v1)`` imports keep
working with ``mlpipe`` in their place; it only re-exports (the code lives in
mlpipe.sdk.v1). Not to be confused with the same-named modules under ``mlpipe.sdk`` /
``mlpipe.schema``; see docs/architecture.md.
"""

from __future__ import annotations

from mlpipe.sdk.v1 import (
    Dataset,
    DatasetConsumptionConfig,
    Experiment,
    FileDataset,
    OutputFileDatasetConfig,
    ParallelRunConfig,
    ParallelRunStep,
    Pipeline,
    PipelineData,
    TabularDataset,
)

__all__ = ["Dataset", "DatasetConsumptionConfig", "Experiment", "FileDataset",
           "OutputFileDatasetConfig", "ParallelRunConfig", "ParallelRunStep", "Pipeline",
           "PipelineData", "TabularDataset"]
