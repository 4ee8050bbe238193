"""v1 to v2: each v1 step becomes a v2 node (v1 -> v2 SDK objects -> the job's plan).

A ``ParallelRunStep`` becomes a ``type: parallel`` step:

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
append_row_file_name        program_arguments ``--append_row_file_name``
source_directory            task.code (entry_script stays relative to it)
inputs[0], side_inputs      input_data, further inputs (datasets, PipelineData, paths)
==========================  ======================================================

A ``PythonScriptStep`` (or ``CommandStep``) becomes a ``type: command`` step:
``command: python <script_name> <arguments>``, ``code: <source_directory>``, the
``runconfig``'s environment and variables, ``params`` as ``AML_PARAMETER_<name>``,
``compute_target`` as ``compute``, ``allow_reuse=False`` as ``is_deterministic: false``.
Data in ``inputs`` / ``outputs`` / ``arguments`` is wired by :mod:`mlpipe.sdk.v1.wiring`.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from mlpipe.diagnostics import Diagnostic, Location, ValidationError
from mlpipe.sdk.entities import JobResourceConfiguration, RetrySettings, RunFunction
from mlpipe.sdk.io import Output
from mlpipe.sdk.nodes import CommandNode, ParallelNode
from mlpipe.sdk.paths import relative_to
from mlpipe.sdk.v1.config import ParallelRunConfig, environment_reference
from mlpipe.sdk.v1.datasets import PipelineData
from mlpipe.sdk.v1.environments import Environment
from mlpipe.sdk.v1.parameters import resolve
from mlpipe.sdk.v1.steps import CommandStep, ParallelRunStep, PythonScriptStep
from mlpipe.sdk.v1.wiring import Order, Producers, Wiring, binding_name, table_reader


def v2_name(name: str) -> str:
    """A v1 step name as a v2 step name (an identifier): ``predict-digits`` -> ``predict_digits``
    (shown as the step's ``display_name``)."""
    cleaned = re.sub(r"\W", "_", name)
    return f"step_{cleaned}" if cleaned[:1].isdigit() else cleaned


def parallel_node(step: ParallelRunStep, name: str, producers: Producers, order: Order,
                  base: Path) -> ParallelNode:
    """The v2 parallel step of ``step``, named ``name`` (``producers`` says which step writes
    each ``PipelineData``; relative paths are written relative to ``base``)."""
    config = step.parallel_run_config.resolved()
    wiring = Wiring(step.name, step.written(), producers, base, order)
    if table_reader(step.inputs[0]) is not None:
        raise ValidationError([Diagnostic(
            f"ParallelRunStep {step.name!r} reads another step's output as a table "
            "(read_delimited_files / read_parquet_files / parse_*_files): locally a parallel "
            "step reads a step's output as files, and run() would get file paths instead of "
            "DataFrames", location=step._origin, code="unsupported",
            hint="pass the output itself (as_input() / as_dataset()) and read the files in "
                 "run(), or have the writing step register a table with "
                 "Dataset.Tabular.from_delimited_files")])
    data = wiring.add_input(step.inputs[0], "input_data")
    for index, item in enumerate(step.side_inputs):
        wiring.add_input(item, f"side_input_{index}")
    for model in step.models:  # contrib-era models=[...]: the registered model, read-only
        wiring.add_input(model, f"model_{model.name}" if getattr(model, "name", None)
                         else "model")
    append = str(config.output_action).lower() == "append_row"
    output = None
    if step.output is not None or append:
        output = _parallel_output(step.output, wiring)
    args = [wiring.argument(a) for a in step.arguments]
    if append and config.append_row_file_name:
        args += ["--append_row_file_name", shlex.quote(config.append_row_file_name)]
    if config.allowed_failed_percent is not None:
        args += ["--allowed_failed_percent", _number_text(config.allowed_failed_percent)]
    code, entry = _code_and_entry(config, base)
    task = RunFunction(
        code=code,
        entry_script=entry,
        environment=environment_reference(config.environment),
        program_arguments=" ".join(args) or None,
        append_row_to="${{outputs.%s}}" % output if append else None,
    )
    compute = config.compute_target
    node = ParallelNode(
        name=name,
        display_name=step.name if name != step.name else None,
        description=config.description,
        compute=compute_name(compute),
        outputs=wiring.outputs,
        input_data=data,
        mini_batch_size=None if config.mini_batch_size is None else str(config.mini_batch_size),
        partition_keys=config.partition_keys,
        resources=JobResourceConfiguration(instance_count=config.node_count),
        max_concurrency_per_instance=config.process_count_per_node,
        error_threshold=config.error_threshold,
        mini_batch_error_threshold=config.allowed_failed_count,
        logging_level=config.logging_level,
        retry_settings=RetrySettings(max_retries=config.run_max_try - 1,
                                     timeout=config.run_invocation_timeout),
        environment_variables={**(config.environment_variables or {}), **wiring.environment()}
        or None,
        task=task,
        is_deterministic=None if step.allow_reuse else False,
    )
    node._inputs._values.update(wiring.inputs)
    _place(node, step._origin, config._origin, task, node.resources, node.retry_settings)
    return node


def command_node(step: PythonScriptStep | CommandStep, name: str, producers: Producers,
                 order: Order, base: Path) -> CommandNode:
    """The v2 command step of a ``PythonScriptStep`` (``python <script_name> <arguments>``) or
    a ``CommandStep``, named ``name``."""
    wiring = Wiring(step.name, step.written(), producers, base, order)
    for item in step.inputs:
        wiring.add_input(item)
    for item in step.outputs:
        wiring.add_output(item)
    words = [wiring.argument(a) for a in step.arguments]
    if isinstance(step, PythonScriptStep):
        command = " ".join(["python", shlex.quote(step.script_name), *words])
    else:  # v1 joins a command's words as they are (data as its path)
        command = step.command if isinstance(step.command, str) else " ".join(
            word if isinstance(word, str) else text
            for word, text in zip(step.arguments, words, strict=True))
    runconfig = step.runconfig
    env_vars = {**(runconfig.environment_variables_in_force if runconfig else {}),
                **{f"AML_PARAMETER_{k}": str(resolve(v)) for k, v in step.params.items()},
                **wiring.environment()}
    target = step.compute_target or (runconfig.target if runconfig else None)
    node = CommandNode(
        name=name,
        display_name=step.name if name != step.name else None,
        command=command,
        code=_source_directory(step, base),
        environment=environment_reference(runconfig.environment if runconfig
                                          else Environment("default-environment")),
        compute=compute_name(target) or "local",
        environment_variables=env_vars or None,
        inputs=wiring.inputs,
        outputs=wiring.outputs,
        extra={} if step.allow_reuse else {"is_deterministic": False},
    )
    _place(node, step._origin, step._origin)
    return node


def compute_name(compute: Any) -> str | None:
    """A v1 compute target (an object or a name) as the step's ``compute``."""
    return compute if isinstance(compute, str) or compute is None else \
        getattr(compute, "name", None)


def _place(node: Any, call: Location | None, definition: Location | None, *parts: Any) -> None:
    """Problems of ``node`` point at the v1 code that made it."""
    object.__setattr__(node, "_origin", call)
    object.__setattr__(node, "_call_site", call)
    object.__setattr__(node, "_definition_site", definition)
    for part in parts:
        object.__setattr__(part, "_origin", definition)


def _source_directory(step: PythonScriptStep | CommandStep, base: Path) -> str:
    folder = Path(step.source_directory) if step.source_directory else step._base_path
    folder = folder if folder.is_absolute() else (step._base_path / folder).resolve()
    return relative_to(folder, base)


def _parallel_output(output: Any, wiring: Wiring) -> str:
    """The output of a parallel step (its name in ``wiring.outputs``): a folder, as v1's
    ``PipelineData`` is (``append_row_file_name`` names the append_row file in it)."""
    if isinstance(output, Output):
        wiring.outputs["output"] = output
        return "output"
    if isinstance(output, PipelineData):
        return binding_name(wiring.add_output(output))
    return binding_name(wiring.add_output(output if isinstance(output, str) else "output"))


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


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


__all__ = ["command_node", "compute_name", "parallel_node", "v2_name"]
