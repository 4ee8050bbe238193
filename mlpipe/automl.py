"""``mlpipe.automl``: mirror of ``azure.ai.ml.automl``, whose names import but never train.

AutoML trains its models in Azure ML only. Each name is
:class:`~mlpipe.unavailable.Unavailable`: a published notebook imports as written and
stops at the first use (``classification(...)``, ``regression(...)``) with one
``NotAvailableLocally`` line saying what to do. A ``type: automl`` step in a pipeline YAML is
validated, and skipped with ``--skip-step`` (docs/running.md).
Mirror module: docs/architecture.md lists every mirror.
"""

from __future__ import annotations

from mlpipe.unavailable import unavailable_module

HINT = ("AutoML trains its models in Azure ML only; run the job with azure-ai-ml against a "
        "workspace, or write the step in a pipeline YAML and run the rest here with "
        "`mlpipe job create --skip-step NAME --set jobs.NAME.outputs.OUTPUT.path=./local`.")

# azure-ai-ml's public names of the module (any other name resolves the same way).
NAMES = ("ClassificationJob", "ForecastingJob", "ForecastingSettings", "RegressionJob",
         "TabularFeaturizationSettings", "TabularLimitSettings", "TrainingSettings",
         "classification", "forecasting", "image_classification",
         "image_classification_multilabel", "image_instance_segmentation",
         "image_object_detection", "regression", "text_classification",
         "text_classification_multilabel", "text_ner")

__all__ = ["HINT", "NAMES", *NAMES]

__getattr__ = unavailable_module("azure.ai.ml.automl", HINT)
