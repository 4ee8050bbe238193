"""v1 to v2: a ``ParallelRunStep`` becomes a v2 ``type: parallel`` step.

==========================  ======================================================
v1                          v2
==========================  ======================================================
step name                   step key (an identifier: :func:`v2_name`), display_name
node_count                  resources.instance_count
process_count_per_node      max_concurrency_per_instance
run_invocation_timeout      retry_settings.timeout
run_max_try                 retry_settings.max_retries + 1
allowed_failed_count        mini_batch_error_threshold
allowed_failed_percent      program_arguments ``--allowed_failed_percent``
error_threshold             error_threshold
output_action append_row    task.append_row_to: ${{outputs.<output>}}
source_directory            task.code (entry_script stays relative to it)
inputs[0], side_inputs      input_data, further inputs (datasets, PipelineData, paths)
==========================  ======================================================
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from mlpipe.diagnostics import Diagnostic, Location, ValidationError
from mlpipe.sdk.callsite import call_site
from mlpipe.sdk.entities import JobResourceConfiguration, RetrySettings, RunFunction
from mlpipe.sdk.io import Input, Output
from mlpipe.sdk.nodes import ParallelNode
from mlpipe.sdk.paths import relative_to
from mlpipe.sdk.v1.config import ParallelRunConfig, environment_reference
from mlpipe.sdk.v1.datasets import DatasetConsumptionConfig, FileDataset, PipelineData
from mlpipe.sdk.v1.parameters import PipelineParameter, resolve


class V1Step(Protocol):
    """What the translation reads of a v1 ``ParallelRunStep`` (``mlpipe.sdk.v1.pipeline``,
    which calls :func:`step_node`)."""

    name: str
    parallel_run_config: ParallelRunConfig
    inputs: list[Any]
    output: Any
    side_inputs: list[Any]
    arguments: list[Any]
    allow_reuse: bool
    _origin: Location | None


def v2_name(name: str) -> str:
    """A v1 step name as a v2 step name (an identifier): ``predict-digits`` -> ``predict_digits``
    (shown as the step's ``display_name``)."""
    cleaned = re.sub(r"\W", "_", name)
    return f"step_{cleaned}" if cleaned[:1].isdigit() else cleaned


def step_node(step: V1Step, producers: Mapping[int, tuple[str, str]],
              base: Path) -> ParallelNode:
    """The v2 parallel step of ``step`` (``producers`` maps id(PipelineData) to (step,
    output); relative paths are written relative to ``base``)."""
    config = step.parallel_run_config.resolved()
    names: dict[int, str] = {}
    inputs: dict[str, Any] = {}

    def add_input(item: Any, default_name: str) -> str:
        name, value = _input_of(item, default_name, producers, base)
        names[id(item)] = name
        inputs[name] = value
        return name

    data_name = add_input(step.inputs[0], "input_data")
    for index, item in enumerate(step.side_inputs):
        add_input(item, f"side_input_{index}")

    outputs: dict[str, Output] = {}
    output_name = None
    append = str(config.output_action).lower() == "append_row"
    if step.output is not None or append:
        output_name, decl = _output_of(step.output, append, config.append_row_file_name, base)
        outputs[output_name] = decl

    args = [_argument(a, names, output_name, step.output) for a in step.arguments]
    if config.allowed_failed_percent is not None:
        args += ["--allowed_failed_percent", _number_text(config.allowed_failed_percent)]
    code, entry = _code_and_entry(config, base)
    task = RunFunction(
        code=code,
        entry_script=entry,
        environment=environment_reference(config.environment),
        program_arguments=" ".join(args) or None,
        append_row_to="${{outputs.%s}}" % output_name if append else None,
    )
    compute = config.compute_target
    node = ParallelNode(
        name=v2_name(step.name),
        display_name=step.name if v2_name(step.name) != step.name else None,
        description=config.description,
        compute=compute if isinstance(compute, str) else getattr(compute, "name", None),
        outputs=outputs,
        input_data="${{inputs.%s}}" % data_name,
        mini_batch_size=None if config.mini_batch_size is None else str(config.mini_batch_size),
        partition_keys=config.partition_keys,
        resources=JobResourceConfiguration(instance_count=config.node_count),
        max_concurrency_per_instance=config.process_count_per_node,
        error_threshold=config.error_threshold,
        mini_batch_error_threshold=config.allowed_failed_count,
        logging_level=config.logging_level,
        retry_settings=RetrySettings(max_retries=config.run_max_try - 1,
                                     timeout=config.run_invocation_timeout),
        environment_variables=dict(config.environment_variables)
        if config.environment_variables
        else None,
        task=task,
        is_deterministic=None if step.allow_reuse else False,
    )
    node._inputs._values.update(inputs)
    object.__setattr__(node, "_origin", step._origin)
    object.__setattr__(node, "_call_site", step._origin)
    object.__setattr__(node, "_definition_site", config._origin)
    for obj in (task, node.resources, node.retry_settings):
        object.__setattr__(obj, "_origin", config._origin)
    return node


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _input_of(item: Any, default_name: str, producers: Mapping[int, tuple[str, str]],
              base: Path) -> tuple[str, Any]:
    if isinstance(item, PipelineParameter):
        name = item.name
        value = resolve(item)
        return name, _input_of(value, name, producers, base)[1]
    if isinstance(item, PipelineData):
        source = producers.get(id(item))
        if source is None:
            raise ValidationError([Diagnostic(f"input {item.name!r} is a PipelineData that no step "
                                              f"of this "
                                              "pipeline writes", location=call_site(),
                                              code="binding")])
        return item.name, {"type": "uri_folder", "path": "${{parent.jobs.%s.outputs.%s}}" % source}
    if isinstance(item, DatasetConsumptionConfig):
        return item.name, _local_input(item.to_input(), base)
    if isinstance(item, FileDataset):
        return default_name, _local_input(item.to_input(), base)
    if isinstance(item, Input):
        return default_name, _local_input(item, base)
    if isinstance(item, (str, os.PathLike)):
        return default_name, _local_input(FileDataset(os.fspath(item)).to_input(), base)
    raise ValidationError([Diagnostic(f"cannot use {type(item).__name__} as a step input; use a "
                                      f"path, Input, "
                                      "Dataset.File.from_files(...).as_named_input(name) or "
                                      "PipelineData", location=call_site(), code="type")])


def _local_input(value: Input, base: Path) -> Input:
    if value.path and Path(value.path).is_absolute():
        value.path = relative_to(Path(value.path), base)
    return value


def _output_of(output: Any, append: bool, file_name: str | None, base: Path) -> tuple[str, Output]:
    name = "output"
    path = None
    if isinstance(output, PipelineData):
        name = output.output_name
        destination = getattr(output, "destination", None)
        if destination:
            path = relative_to((base / destination).resolve(), base)
    elif isinstance(output, Output):
        return "output", output
    elif isinstance(output, str):
        name = output
    if append and file_name:
        # v2 writes the append-row file under the basename of a uri_file output's path.
        template = path or "azureml://datastores/${{default_datastore}}/paths/${{name}}/%s" % name
        return name, Output(type="uri_file", path=f"{template.rstrip('/')}/{file_name}")
    return name, Output(type="uri_folder", path=path)


def _argument(value: Any, names: Mapping[int, str], output_name: str | None, output: Any) -> str:
    if id(value) in names:
        return "${{inputs.%s}}" % names[id(value)]
    if output is not None and value is output and output_name:
        return "${{outputs.%s}}" % output_name
    if isinstance(value, bool):
        return str(value)
    text = str(value)
    return text if "${{" in text else shlex.quote(text)


def _code_and_entry(config: ParallelRunConfig, base: Path) -> tuple[str, str]:
    entry = str(config.entry_script)
    cfg_base = config._base_path
    if config.source_directory:
        folder = Path(config.source_directory)
        folder = folder if folder.is_absolute() else (cfg_base / folder).resolve()
        return relative_to(folder, base), entry
    script = Path(entry)
    script = script if script.is_absolute() else (cfg_base / script).resolve()
    return relative_to(script.parent, base), script.name


__all__ = ["step_node", "v2_name"]
