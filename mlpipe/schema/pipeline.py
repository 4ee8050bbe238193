"""``type: pipeline``: the pipeline job, its settings and its steps (``jobs:``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import ConfigDict, Discriminator, Field, GetJsonSchemaHandler, Tag, model_validator

from mlpipe.schema.command import CommandNode
from mlpipe.schema.common import COMPONENT_DESCRIPTION, ComponentBase, NodeBase, component_kind
from mlpipe.schema.compute import Identity, JobService
from mlpipe.schema.fields import (
    CaseInsensitive,
    Flag,
    Identifier,
    JobName,
    Scalar,
    StrictModel,
    Text,
    fail,
)
from mlpipe.schema.inputs_outputs import JobInput, JobOutput
from mlpipe.schema.lazy import LazyModel
from mlpipe.schema.parallel import ParallelNode

if TYPE_CHECKING:
    from mlpipe.schema.automl import AutoMLNode
    from mlpipe.schema.data_transfer import DataTransferNode
    from mlpipe.schema.import_job import ImportNode
    from mlpipe.schema.spark import SparkNode
    from mlpipe.schema.sweep import SweepNode

# Step types of a pipeline, as azure-ai-ml's ``PipelineJobsField`` knows them (compared
# lower-cased, as it does).
NODE_TYPES = ("parallel", "command", "pipeline", "sweep", "spark", "automl", "data_transfer",
              "import")
# Types mlpipe checks but cannot run here (spark runs where pyspark is installed).
CLOUD_NODE_TYPES = ("spark", "automl", "data_transfer", "import")


class PipelineSettings(StrictModel):
    """``settings:`` of a pipeline job."""

    default_compute: Text | None = Field(None, description="Compute of steps that name none.")
    default_datastore: Text | None = Field(None, description="Datastore of outputs (cloud).")
    continue_on_step_failure: Flag | None = Field(
        None, description="Keep running independent steps after a step fails.")
    force_rerun: Flag | None = Field(None, description="Ignore reusable results of earlier runs.")
    default_environment: Text | None = None
    continue_run_on_failed_optional_input: Flag | None = None
    on_init: Text | None = Field(None, description="Step run before all others.")
    on_finalize: Text | None = Field(None, description="Step run after all others.")
    priority: Text | None = None
    timeout: Annotated[int | None, Field(ge=1)] = None


# A step without ``type`` is a command step: azure-ai-ml's ``PipelineJobsField`` tries the
# command schemas first and they do not require ``type`` (published examples rely on it).
DEFAULT_NODE_TYPE = "command"


def step_kind(value: Any) -> str | None:
    """The lower-cased ``type`` of a step mapping, ``command`` when it has none."""
    if isinstance(value, dict) and "type" not in value:
        return DEFAULT_NODE_TYPE
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind.lower() if isinstance(kind, str) else None


def node_type(value: Any) -> str | None:
    """The step type of a step mapping or model (``command`` when it has no ``type``)."""
    kind = step_kind(value)
    return kind if kind in NODE_TYPES else None


class _ChosenByType:
    """The JSON Schema of the step union: ``if``/``then`` on ``type`` (none: command), so an
    editor or a JSON validator checks a step against its own type's schema and reports a
    wrong value at its key (an ``anyOf`` reported every key as unexpected by the other members)."""

    def __get_pydantic_json_schema__(self, core: Any, handler: GetJsonSchemaHandler) -> Any:
        members = handler(core)["oneOf"]  # one schema per Tag, in the union's order
        choices = [{"if": {"properties": {"type": {"enum": [kind]}}, "required": ["type"]},
                    "then": member} for kind, member in zip(NODE_TYPES, members, strict=True)]
        command = members[NODE_TYPES.index(DEFAULT_NODE_TYPE)]
        choices.append({"if": {"not": {"required": ["type"]}}, "then": command})
        return {"type": "object",
                "properties": {"type": {"enum": list(NODE_TYPES),
                                        "description": "The step's type (default: command)."}},
                "allOf": choices}


# Sweep steps and the types only Azure runs are built when a document has one (schema/lazy.py).
LAZY_NODES = {"sweep": "mlpipe.schema.sweep:SweepNode", "spark": "mlpipe.schema.spark:SparkNode",
              "automl": "mlpipe.schema.automl:AutoMLNode",
              "data_transfer": "mlpipe.schema.data_transfer:DataTransferNode",
              "import": "mlpipe.schema.import_job:ImportNode"}
if TYPE_CHECKING:
    Node = Union[ParallelNode, CommandNode, "PipelineNode", SweepNode,  # noqa: UP007
                 SparkNode, AutoMLNode, DataTransferNode, ImportNode]
else:
    Node = Annotated[
        Annotated[ParallelNode, Tag("parallel")]
        | Annotated[CommandNode, Tag("command")]
        | Annotated["PipelineNode", Tag("pipeline")]
        | Annotated[Any, LazyModel(LAZY_NODES["sweep"]), Tag("sweep")]
        | Annotated[Any, LazyModel(LAZY_NODES["spark"]), Tag("spark")]
        | Annotated[Any, LazyModel(LAZY_NODES["automl"]), Tag("automl")]
        | Annotated[Any, LazyModel(LAZY_NODES["data_transfer"]), Tag("data_transfer")]
        | Annotated[Any, LazyModel(LAZY_NODES["import"]), Tag("import")],
        Discriminator(node_type, custom_error_type="node_type",
                      custom_error_message="a step needs a 'type'"),
        _ChosenByType(),
    ]
"""One step of ``jobs:``, chosen by its ``type``."""


class PipelineComponent(ComponentBase):
    """A pipeline component file (``type: pipeline`` with the ``pipelineComponent`` schema):
    declared inputs and outputs, and steps that bind them as ``${{parent.inputs.x}}`` /
    ``${{parent.outputs.y}}``."""

    type: Annotated[Literal["pipeline"], CaseInsensitive] = Field(
        description="Always 'pipeline'.")
    jobs: Annotated[dict[Identifier, Node],
                    Field(min_length=1, description="The steps, by name; at least one.")]


class PipelineNode(NodeBase):
    """A ``type: pipeline`` step: a pipeline component (file or inline) run as a sub-graph."""

    type: Annotated[Literal["pipeline"], CaseInsensitive]
    component: Annotated[Annotated[Text, Tag("reference")]
                         | Annotated[PipelineComponent, Tag("inline")],
                         component_kind(PipelineComponent)] = Field(
        description=COMPONENT_DESCRIPTION)
    settings: dict[str, Any] | None = Field(None, description="Cloud only: sub-pipeline settings.")


class PipelineJob(StrictModel):
    """A pipeline job file (``type: pipeline``)."""

    schema_: Text | None = Field(None, alias="$schema", description="JSON Schema URL (ignored).")
    type: Annotated[Literal["pipeline"], CaseInsensitive] = Field(description="Always 'pipeline'.")
    name: JobName | None = Field(
        None, description="Job name: ^[a-zA-Z0-9][a-zA-Z0-9_-]{0,254}$ (also the run folder name)."
    )
    display_name: Text | None = None
    description: Text | None = None
    experiment_name: Text | None = None
    tags: dict[str, Scalar | None] | None = None
    properties: dict[str, Any] | None = None
    compute: Text | None = Field(None, description="Default compute (ignored locally).")
    identity: Identity | None = None
    services: dict[str, JobService] | None = None
    settings: PipelineSettings | None = None
    inputs: dict[Identifier, JobInput] | None = Field(
        None, description="Pipeline inputs, bound in steps as ${{parent.inputs.<name>}}."
    )
    outputs: dict[Identifier, JobOutput | None] | None = Field(
        None, description="Pipeline outputs, bound in steps as ${{parent.outputs.<name>}}."
    )
    jobs: Annotated[dict[Identifier, Node],
                    Field(min_length=1, description="The steps, by name; at least one.")]
    component: Text | None = Field(
        None, description="Instead of jobs: a pipeline component (./x.yml or azureml:) whose "
                          "steps the job runs, its inputs and outputs the job's.")
    model_config = ConfigDict(json_schema_extra=lambda schema: _jobs_or_component(schema))

    @model_validator(mode="after")
    def _not_both(self) -> PipelineJob:
        if self.component is not None and "jobs" in self.model_fields_set:
            raise fail("conflict", "'jobs' and 'component' are mutually exclusive fields in "
                                   "pipeline job", "keep the steps (jobs) or the pipeline "
                                                   "component that holds them (component)")
        return self


class ComponentPipelineJob(PipelineJob):
    """A pipeline job made from a pipeline component: ``component:`` instead of ``jobs:``
    (azure-ai-ml's PipelineJobSchema); the loader picks it when there is no ``jobs``."""

    jobs: dict[Identifier, Node] | None = None  # type: ignore[assignment]
    component: Text = Field(description="The pipeline component whose steps the job runs.")


def _jobs_or_component(schema: dict[str, Any]) -> None:
    """JSON Schema: ``jobs`` or ``component``, one of them."""
    schema["required"] = [key for key in schema.get("required", []) if key != "jobs"]
    schema["oneOf"] = [{"required": ["jobs"]}, {"required": ["component"]}]


PipelineComponent.model_rebuild()
PipelineNode.model_rebuild()
PipelineJob.model_rebuild()
ComponentPipelineJob.model_rebuild()
