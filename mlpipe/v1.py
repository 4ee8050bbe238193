"""``mlpipe.v1``: the v1 ``ParallelRunConfig`` / ``ParallelRunStep`` / ``Pipeline`` API, run
locally.

    from mlpipe.v1 import ParallelRunConfig, ParallelRunStep, Pipeline
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
