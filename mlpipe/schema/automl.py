"""``type: automl``: AutoML steps, one model per ``task`` (azure-ai-ml's automl node schemas,
``_schema/pipeline/automl_node.py``). The settings of each task are in
:mod:`mlpipe.schema.automl_settings`; AutoML trains in Azure only."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, Tag

from mlpipe.schema.automl_settings import (
    ClassificationTask,
    ForecastingTask,
    ImageClassificationMultilabelTask,
    ImageClassificationTask,
    ImageInstanceSegmentationTask,
    ImageObjectDetectionTask,
    RegressionTask,
    TextClassificationMultilabelTask,
    TextClassificationTask,
    TextNerTask,
)
from mlpipe.schema.common import NodeBase
from mlpipe.schema.compute import Identity, JobService, QueueSettings, Resources
from mlpipe.schema.fields import StrictModel, Text, chosen_by, one_of

AUTOML_TASKS = ("classification", "regression", "forecasting", "image_classification",
                "image_classification_multilabel", "image_object_detection",
                "image_instance_segmentation", "text_classification",
                "text_classification_multilabel", "text_ner")


class AutoMLBase(NodeBase):
    """The keys every AutoML step has, besides its task's settings."""

    type: Annotated[str, one_of("automl", bindable=False)]
    environment_variables: dict[str, Text] | None = None
    resources: Resources | None = None
    queue_settings: QueueSettings | None = None
    identity: Identity | None = None
    services: dict[str, JobService] | None = None


class ClassificationNode(AutoMLBase, ClassificationTask):
    """``task: classification`` (tabular)."""


class RegressionNode(AutoMLBase, RegressionTask):
    """``task: regression`` (tabular)."""


class ForecastingNode(AutoMLBase, ForecastingTask):
    """``task: forecasting`` (tabular time series)."""


class ImageClassificationNode(AutoMLBase, ImageClassificationTask):
    """``task: image_classification`` (multi-class)."""


class ImageClassificationMultilabelNode(AutoMLBase, ImageClassificationMultilabelTask):
    """``task: image_classification_multilabel``."""


class ImageObjectDetectionNode(AutoMLBase, ImageObjectDetectionTask):
    """``task: image_object_detection``."""


class ImageInstanceSegmentationNode(AutoMLBase, ImageInstanceSegmentationTask):
    """``task: image_instance_segmentation``."""


class TextClassificationNode(AutoMLBase, TextClassificationTask):
    """``task: text_classification``."""


class TextClassificationMultilabelNode(AutoMLBase, TextClassificationMultilabelTask):
    """``task: text_classification_multilabel``."""


class TextNerNode(AutoMLBase, TextNerTask):
    """``task: text_ner`` (named entities)."""


AutoMLNode = Annotated[
    Annotated[ClassificationNode, Tag("classification")]
    | Annotated[RegressionNode, Tag("regression")]
    | Annotated[ForecastingNode, Tag("forecasting")]
    | Annotated[ImageClassificationNode, Tag("image_classification")]
    | Annotated[ImageClassificationMultilabelNode, Tag("image_classification_multilabel")]
    | Annotated[ImageObjectDetectionNode, Tag("image_object_detection")]
    | Annotated[ImageInstanceSegmentationNode, Tag("image_instance_segmentation")]
    | Annotated[TextClassificationNode, Tag("text_classification")]
    | Annotated[TextClassificationMultilabelNode, Tag("text_classification_multilabel")]
    | Annotated[TextNerNode, Tag("text_ner")],
    chosen_by(AUTOML_TASKS, what="AutoML", key="task", snake=True),
]
"""A ``type: automl`` step, chosen by its ``task``."""

__all__ = ["AUTOML_TASKS", "AutoMLBase", "AutoMLNode", "StrictModel", "Field"]
