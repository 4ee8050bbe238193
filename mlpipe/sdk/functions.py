"""``parallel_run_function`` and ``command``: inline steps with azure-ai-ml's keyword signatures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from mlpipe.diagnostics import Diagnostic, ValidationError
from mlpipe.sdk.building import current_builder
from mlpipe.sdk.callsite import call_site
from mlpipe.sdk.entities import JobResourceConfiguration, RunFunction
from mlpipe.sdk.io import Input, Output
from mlpipe.sdk.nodes import CommandNode, Node, ParallelNode

N = TypeVar("N", bound=Node)


def _wrong(message: str) -> ValidationError:
    return ValidationError([Diagnostic(message, location=call_site(), code="type")])


def _split_inputs(inputs: Mapping[str, Any] | None) -> tuple[dict[str, Input], dict[str, Any]]:
    """``Input`` objects declare inputs; any other value is a literal input's value."""
    if inputs is not None and not isinstance(inputs, Mapping):
        raise _wrong(f"inputs must be a dict of input name to Input or value, got "
                     f"{type(inputs).__name__} {inputs!r}")
    declarations: dict[str, Input] = {}
    values: dict[str, Any] = {}
    for key, value in (inputs or {}).items():
        if isinstance(value, Input):
            declarations[key] = value
        elif value is not None:
            values[key] = value
    return declarations, values


def _outputs(outputs: Mapping[str, Any] | None) -> dict[str, Output]:
    if outputs is not None and not isinstance(outputs, Mapping):
        raise _wrong(f"outputs must be a dict of output name to Output, got "
                     f"{type(outputs).__name__} {outputs!r}")
    out: dict[str, Output] = {}
    for key, value in (outputs or {}).items():
        if isinstance(value, Output):
            out[key] = value
        elif isinstance(value, Mapping):
            out[key] = Output(**dict(value))
        elif isinstance(value, str):
            out[key] = Output(type=value)
        elif value is None:
            out[key] = Output()
        else:
            raise _wrong(f"outputs[{key!r}] must be an Output (or a dict of its settings, or its "
                         f"type), got {type(value).__name__} {value!r}")
    return out


def _resources(instance_count: Any, instance_type: Any, docker_args: Any, shm_size: Any,
               **more: Any) -> JobResourceConfiguration | None:
    given = dict(instance_count=instance_count, instance_type=instance_type,
                 docker_args=docker_args, shm_size=shm_size, **more)
    if all(value is None for value in given.values()):
        return None
    return JobResourceConfiguration(**{k: v for k, v in given.items() if v is not None})


def _finish(node: N, declarations: dict[str, Input], values: dict[str, Any]) -> N:
    names = [*declarations, *(key for key in values if key not in declarations)]
    object.__setattr__(node, "_declared_inputs", names)
    object.__setattr__(node._inputs, "_names", names)
    node._inputs._values.update(values)
    object.__setattr__(node, "_definition_site", node._origin)
    object.__setattr__(node, "_call_site", node._origin)
    builder = current_builder()
    if builder is not None:  # made inside @pipeline: it is a step itself (azure-ai-ml does so)
        builder.add(node)
    return node


def parallel_run_function(
    *,
    name: str | None = None,
    description: str | None = None,
    tags: dict[str, str] | None = None,
    properties: dict[str, Any] | None = None,
    display_name: str | None = None,
    experiment_name: str | None = None,
    compute: str | None = None,
    retry_settings: Any = None,
    environment_variables: dict[str, str] | None = None,
    logging_level: str | None = None,
    max_concurrency_per_instance: int | None = None,
    error_threshold: int | None = None,
    mini_batch_error_threshold: int | None = None,
    task: RunFunction | None = None,
    mini_batch_size: str | None = None,
    partition_keys: list[str] | None = None,
    input_data: str | None = None,
    inputs: dict[str, Any] | None = None,
    outputs: dict[str, Any] | None = None,
    instance_count: int | None = None,
    instance_type: str | None = None,
    docker_args: str | None = None,
    shm_size: str | None = None,
    identity: Any = None,
    is_deterministic: bool = True,
    **kwargs: Any,
) -> ParallelNode:
    """A parallel step (azure-ai-ml's ``parallel_run_function``); call it in ``@pipeline``.

    Every argument is written to the step's YAML; those that only matter in the
    cloud (``instance_type``, ``docker_args``, ``shm_size``, ``identity``,
    ``is_deterministic``, ...) are recorded, not acted on.
    """
    declarations, values = _split_inputs(inputs)
    node = ParallelNode(
        name=name, description=description, tags=tags, properties=properties,
        display_name=display_name, experiment_name=experiment_name, compute=compute,
        retry_settings=retry_settings, environment_variables=environment_variables,
        logging_level=logging_level, max_concurrency_per_instance=max_concurrency_per_instance,
        error_threshold=error_threshold, mini_batch_error_threshold=mini_batch_error_threshold,
        task=task, mini_batch_size=mini_batch_size, partition_keys=partition_keys,
        input_data=input_data, input_declarations=declarations, outputs=_outputs(outputs),
        resources=_resources(instance_count, instance_type, docker_args, shm_size),
        identity=identity, is_deterministic=None if is_deterministic is True else is_deterministic,
        extra=kwargs)
    return _finish(node, declarations, values)


def command(
    *,
    name: str | None = None,
    description: str | None = None,
    tags: dict[str, str] | None = None,
    properties: dict[str, Any] | None = None,
    display_name: str | None = None,
    command: str | None = None,
    experiment_name: str | None = None,
    environment: Any = None,
    environment_variables: dict[str, str] | None = None,
    distribution: Any = None,
    compute: str | None = None,
    inputs: dict[str, Any] | None = None,
    outputs: dict[str, Any] | None = None,
    instance_count: int | None = None,
    instance_type: str | None = None,
    locations: list[str] | None = None,
    docker_args: str | None = None,
    shm_size: str | None = None,
    timeout: int | None = None,
    code: str | None = None,
    identity: Any = None,
    is_deterministic: bool = True,
    **kwargs: Any,
) -> CommandNode:
    """A command step (azure-ai-ml's ``command``); call it in ``@pipeline`` to bind inputs."""
    declarations, values = _split_inputs(inputs)
    extra = dict(kwargs)
    if distribution is not None:
        extra["distribution"] = distribution
    if timeout is not None:
        extra["limits"] = {"timeout": timeout}
    if is_deterministic is not True:
        extra["is_deterministic"] = is_deterministic
    node = CommandNode(
        name=name, description=description, tags=tags, properties=properties,
        display_name=display_name, command=command, experiment_name=experiment_name,
        environment=environment, environment_variables=environment_variables, compute=compute,
        input_declarations=declarations, outputs=_outputs(outputs),
        resources=_resources(instance_count, instance_type, docker_args, shm_size,
                             locations=locations),
        code=None if code is None else str(code), identity=identity, extra=extra)
    return _finish(node, declarations, values)
