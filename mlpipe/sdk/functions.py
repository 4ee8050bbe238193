"""``parallel_run_function`` and ``command``: inline steps with azure-ai-ml's keyword signatures."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, TypeVar

from mlpipe.diagnostics import Diagnostic, ValidationError
from mlpipe.sdk.building import current_builder
from mlpipe.sdk.callsite import call_site
from mlpipe.sdk.entities import (
    CommandJobLimits,
    JobResourceConfiguration,
    QueueSettings,
    RetrySettings,
    RunFunction,
    environment_reference,
)
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


def _component_settings(**settings: Any) -> dict[str, Any]:
    """What azure-ai-ml gives the inline component of ``parallel_run_function``/``command``
    (the node's defaults): copies, so that changing the node changes only the node."""
    coerce = {"resources": JobResourceConfiguration.coerce,
              "retry_settings": RetrySettings.coerce}
    out = {}
    for key, value in settings.items():
        if value is None:
            continue
        value = coerce[key](value) if key in coerce else value
        out[key] = copy.deepcopy(value)
    return out


def _finish(node: N, declarations: dict[str, Input], values: dict[str, Any],
            resources: dict[str, Any]) -> N:
    node.set_resources(**resources)  # the keywords over resources=, as azure-ai-ml does
    node._sites.pop("resources", None)
    node.resources._sites.clear()
    names = [*declarations, *(key for key in values if key not in declarations)]
    object.__setattr__(node, "_template_name", node.name)
    object.__setattr__(node, "_declared_inputs", names)
    object.__setattr__(node._inputs, "_names", names)
    node._inputs._values.update(values)
    object.__setattr__(node, "_literal_inputs", dict(values))  # the component's typed inputs
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
    ``is_deterministic``, ...) are recorded, not acted on. As in azure-ai-ml the settings
    are also the defaults of the step's component: a setting changed on a node later wins,
    one set to ``None`` (``node.task = None``) falls back to them. ``resources=`` is the
    first value of ``node.resources``; ``instance_count=`` and the other resource keywords
    are set over it.
    """
    declarations, values = _split_inputs(inputs)
    resources = kwargs.pop("resources", None)
    node = ParallelNode(
        name=name, description=description, tags=tags, properties=properties,
        display_name=display_name, experiment_name=experiment_name, compute=compute,
        retry_settings=copy.deepcopy(retry_settings),
        environment_variables=environment_variables,
        logging_level=logging_level, max_concurrency_per_instance=max_concurrency_per_instance,
        error_threshold=error_threshold, mini_batch_error_threshold=mini_batch_error_threshold,
        task=task, mini_batch_size=mini_batch_size, partition_keys=partition_keys,
        input_data=input_data, input_declarations=declarations, outputs=_outputs(outputs),
        resources=copy.deepcopy(resources), identity=identity,
        is_deterministic=None if is_deterministic is True else is_deterministic,
        defaults=_component_settings(
            retry_settings=retry_settings, logging_level=logging_level,
            max_concurrency_per_instance=max_concurrency_per_instance,
            error_threshold=error_threshold, mini_batch_error_threshold=mini_batch_error_threshold,
            task=task, mini_batch_size=None if mini_batch_size is None else str(mini_batch_size),
            partition_keys=partition_keys, input_data=input_data, resources=resources),
        extra=kwargs)
    return _finish(node, declarations, values, dict(
        instance_count=instance_count, instance_type=instance_type, docker_args=docker_args,
        shm_size=shm_size))


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
    services: dict[str, Any] | None = None,
    job_tier: str | None = None,
    priority: str | None = None,
    parent_job_name: str | None = None,
    **kwargs: Any,
) -> CommandNode:
    """A command step (azure-ai-ml's ``command``); call it in ``@pipeline`` to bind inputs.

    ``command``, ``code``, ``environment``, ``distribution`` and ``resources=`` are also
    the defaults of the step's component (``node.environment = None`` falls back to it);
    ``timeout`` is ``node.set_limits(timeout=...)``, ``job_tier``/``priority``
    ``node.set_queue_settings(...)`` (recorded); ``parent_job_name`` names a standalone
    job's parent in the cloud and is ignored here.
    """
    declarations, values = _split_inputs(inputs)
    resources = kwargs.pop("resources", None)
    node = CommandNode(
        name=name, description=description, tags=tags, properties=properties,
        display_name=display_name, command=command, experiment_name=experiment_name,
        environment=environment, environment_variables=environment_variables, compute=compute,
        distribution=distribution, services=services,
        limits=None if timeout is None else CommandJobLimits(timeout=timeout),
        queue_settings=None if job_tier is None and priority is None
        else QueueSettings(job_tier=job_tier, priority=priority),
        input_declarations=declarations, outputs=_outputs(outputs),
        resources=copy.deepcopy(resources), code=None if code is None else str(code),
        identity=identity, is_deterministic=None if is_deterministic is True else is_deterministic,
        defaults=_component_settings(command=command,
                                     code=None if code is None else str(code),
                                     environment=environment_reference(environment),
                                     environment_variables=environment_variables,
                                     distribution=distribution, resources=resources),
        extra=kwargs)
    _finish(node, declarations, values, dict(
        locations=locations, instance_count=instance_count, instance_type=instance_type,
        docker_args=docker_args, shm_size=shm_size))
    if node.resources.to_dict():  # azure-ai-ml's component has the resource keywords too
        node._defaults["resources"] = copy.deepcopy(node.resources)
    return node

