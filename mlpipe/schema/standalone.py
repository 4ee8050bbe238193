"""Standalone (non-pipeline) job files: ``type: command``, ``sweep``, ``spark`` and ``automl``
jobs (azure-ai-ml's ``CommandJobSchema``, ``SweepJobSchema``, ``SparkJobSchema`` and AutoML
job schemas). Each is its step model plus the job's own ``$schema`` and ``name``; imported
when a document is a standalone job."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, Tag, create_model

from mlpipe.schema.automl import (
    ClassificationNode,
    ForecastingNode,
    ImageClassificationMultilabelNode,
    ImageClassificationNode,
    ImageInstanceSegmentationNode,
    ImageObjectDetectionNode,
    RegressionNode,
    TextClassificationMultilabelNode,
    TextClassificationNode,
    TextNerNode,
)
from mlpipe.schema.command import CommandNode, CommandSettings
from mlpipe.schema.compute import Identity
from mlpipe.schema.environment import Environment
from mlpipe.schema.fields import JobName, StrictModel, Text, camel_to_snake
from mlpipe.schema.spark import SparkNode
from mlpipe.schema.sweep import SweepNode


class JobFields(StrictModel):
    """The keys a standalone job has besides its type's settings."""

    schema_: Text | None = Field(None, alias="$schema", description="JSON Schema URL (ignored).")
    name: JobName | None = Field(
        None, description="Job name: ^[a-zA-Z0-9][a-zA-Z0-9_-]{0,254}$.")


class CommandJob(JobFields, CommandNode):
    """A command job file (``type: command``, or the ``commandJob`` ``$schema``)."""


class TrialCommand(CommandSettings):
    """A sweep job's ``trial``: the command each trial runs (azure-ai-ml's
    ``ParameterizedCommandSchema``: no ``type``, no declared inputs)."""

    command: Text = Field(description="Shell command; binds ${{inputs.x}} and "
                                      "${{search_space.y}}.")
    environment: Environment = Field(description="The trial's environment.")


class SweepJob(JobFields, SweepNode):
    """A sweep job file (``type: sweep``): trials of ``trial`` over ``search_space``."""

    trial: Annotated[TrialCommand, Tag("inline")] = Field(  # type: ignore[assignment]
        description="The command each trial runs.")
    identity: Identity | None = Field(None, description="Cloud only: the identity the trials "
                                                        "run as.")


class SparkJob(JobFields, SparkNode):
    """A Spark job file (``type: spark``)."""


def _automl_job(node: type[BaseModel]) -> type[BaseModel]:
    name = node.__name__.removesuffix("Node") + "Job"
    return create_model(name, __base__=(JobFields, node), __module__=__name__,
                        __doc__=f"An AutoML job file: {node.__doc__}")


# ``task`` -> the AutoML job model of that task.
AUTOML_JOBS: dict[str, type[BaseModel]] = {
    task: _automl_job(node) for task, node in (
        ("classification", ClassificationNode), ("regression", RegressionNode),
        ("forecasting", ForecastingNode), ("image_classification", ImageClassificationNode),
        ("image_classification_multilabel", ImageClassificationMultilabelNode),
        ("image_object_detection", ImageObjectDetectionNode),
        ("image_instance_segmentation", ImageInstanceSegmentationNode),
        ("text_classification", TextClassificationNode),
        ("text_classification_multilabel", TextClassificationMultilabelNode),
        ("text_ner", TextNerNode))}

# ``type`` -> the job model (AutoML: chosen by ``task``, see :data:`AUTOML_JOBS`).
JOB_MODELS: dict[str, type[BaseModel]] = {
    "command": CommandJob, "sweep": SweepJob, "spark": SparkJob}


def job_model(kind: str, data: dict[str, Any]) -> type[BaseModel] | None:
    """The model of a standalone job of type ``kind`` (an AutoML job's by its ``task``)."""
    if kind == "automl":
        task = data.get("task")
        return AUTOML_JOBS.get(camel_to_snake(task)) if isinstance(task, str) else None
    return JOB_MODELS.get(kind)


__all__ = ["AUTOML_JOBS", "JOB_MODELS", "CommandJob", "JobFields", "SparkJob", "SweepJob",
           "TrialCommand", "job_model"]
