"""``type: parallel``: the task, run settings, parallel components and parallel steps."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Tag

from mlpipe.schema.common import COMPONENT_DESCRIPTION, ComponentBase, NodeBase, component_kind
from mlpipe.schema.compute import Identity, Resources
from mlpipe.schema.environment import Environment
from mlpipe.schema.fields import (
    CaseInsensitive,
    ErrorThreshold,
    LoggingLevel,
    MaxConcurrency,
    MaxRetries,
    MiniBatchErrorThreshold,
    MiniBatchSize,
    PartitionKeys,
    RetryTimeout,
    StrictModel,
    Text,
)


class RetrySettings(StrictModel):
    """``retry_settings:``: retries of a failed or timed-out mini-batch."""

    max_retries: MaxRetries | None = Field(
        None, description="Retries after the first attempt of a mini-batch. [0, int.max], default 2"
    )
    timeout: RetryTimeout | None = Field(
        None, description="Seconds one run() call may take. (0, 259200], default 60"
    )


class ParallelTask(StrictModel):
    """``task:``: what each worker runs."""

    type: Annotated[Literal["run_function", "function", "model"], CaseInsensitive] = Field(
        "run_function", description="run_function (legacy spelling: function)."
    )
    code: Text | None = Field(None, description="Local code folder (or azureml: code asset).")
    entry_script: Text | None = Field(
        None, description="Python file in the code folder defining init() and run(mini_batch)."
    )
    program_arguments: Text | None = Field(
        None,
        description="Arguments given to the entry script; may bind ${{inputs.x}}/${{outputs.y}}.",
    )
    args: Text | None = Field(None, description="Legacy spelling of program_arguments.")
    environment: Environment | None = Field(
        None, description="Environment (not built locally: the runner's Python is used)."
    )
    append_row_to: Text | None = Field(
        None, description="${{outputs.x}}: collect every returned row into one file of output x."
    )
    model: Text | None = Field(None, description="Model for task type 'model'.")


class ParallelSettings(StrictModel):
    """The run settings shared by parallel components and parallel steps."""

    input_data: Text | None = Field(
        None, description="${{inputs.x}}: the input split into mini-batches."
    )
    mini_batch_size: MiniBatchSize | None = Field(
        None,
        description='Files per mini-batch ("5") or approximate bytes for tabular input '
        '("10kb", "1MB").',
    )
    partition_keys: PartitionKeys | None = Field(
        None, description="Columns whose value combinations form the mini-batches."
    )
    resources: Resources | None = None
    max_concurrency_per_instance: MaxConcurrency | None = Field(
        None, description="Worker processes per node. [1, int.max]"
    )
    retry_settings: RetrySettings | None = None
    error_threshold: ErrorThreshold | None = Field(
        None, description="Failed items tolerated; -1 ignores all. [-1, int.max]"
    )
    mini_batch_error_threshold: MiniBatchErrorThreshold | None = Field(
        None, description="Failed mini-batches tolerated; -1 ignores all. [-1, int.max]"
    )
    logging_level: LoggingLevel | None = Field(None, description="DEBUG, INFO or WARNING.")
    task: ParallelTask | None = None


class ParallelComponent(ComponentBase, ParallelSettings):
    """A parallel component file (``type: parallel``)."""

    type: Annotated[Literal["parallel"], CaseInsensitive] = Field(description="Always 'parallel'.")
    environment_variables: dict[str, Text] | None = Field(
        None, description="Not applied: azure-ai-ml drops a component's environment_variables "
        "(set them on the step).")
    additional_includes: list[Text] | None = Field(
        None, description="Not applied: azure-ai-ml takes additional_includes only in command and "
        "Spark components and drops a parallel component's (put the files in task.code).")


class ParallelNode(NodeBase, ParallelSettings):
    """A ``type: parallel`` step of a pipeline: inline, or a ``component:`` plus overrides."""

    type: Annotated[Literal["parallel"], CaseInsensitive]
    identity: Identity | None = None
    environment_variables: dict[str, Text] | None = Field(
        None, description="Environment variables of the step's processes.")
    component: (Annotated[Annotated[Text, Tag("reference")] | Annotated[ParallelComponent,
                                                                        Tag("inline")],
                          component_kind(ParallelComponent)] | None) = Field(None,
                                                                             description=COMPONENT_DESCRIPTION)
