"""v1 pipeline steps: ``PythonScriptStep`` and ``CommandStep`` (a v2 command step each) and
``ParallelRunStep`` (a v2 parallel step), with ``run_after`` ordering.

A step marks the data it writes (its ``outputs``, a ``ParallelRunStep``'s ``output``, an
``OutputFileDatasetConfig`` first met in its ``arguments``), so a ``Pipeline`` given only its
last step finds the steps before it, as v1 does. :mod:`mlpipe.sdk.v1.translation` turns
each step into its v2 node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mlpipe.diagnostics import Diagnostic, Location, ValidationError
from mlpipe.sdk.callsite import call_site, caller_dir
from mlpipe.sdk.v1.config import ParallelRunConfig
from mlpipe.sdk.v1.datasets import PipelineData
from mlpipe.sdk.v1.runconfig import RunConfiguration, ScriptRunConfig
from mlpipe.sdk.v1.wiring import origin, written_data


class StepBase:
    """What every v1 step has: ``name``, the data it reads and writes, ``run_after``."""

    name: str
    allow_reuse: bool
    _origin: Location | None

    def __init__(self, name: str, inputs: Sequence[Any], outputs: Sequence[Any],
                 arguments: Sequence[Any], allow_reuse: bool) -> None:
        self.name = name
        self.inputs = list(inputs or [])
        self.outputs = list(outputs or [])
        self.arguments = list(arguments or [])
        self.allow_reuse = allow_reuse
        self._origin = call_site()
        self._base_path = caller_dir()
        self._after: list[StepBase] = []
        for data in self.written():
            if getattr(data, "_producer", None) is None:
                data._producer = self

    def written(self) -> list[PipelineData]:
        """The data this step writes (origins): its ``outputs``, and ``PipelineData`` /
        ``OutputFileDatasetConfig`` objects in its ``arguments`` that it does not list as
        inputs and no other step writes."""
        inputs = {id(origin(i)) for i in self.inputs if isinstance(i, PipelineData)}
        found: list[PipelineData] = []
        for item in [*self.outputs, *self.arguments]:
            if not isinstance(item, PipelineData):
                continue  # as_input(), as_dataset(), read_*(): a read
            data = origin(item)
            listed = any(item is o for o in self.outputs)
            mine = listed or (id(data) not in inputs
                              and getattr(data, "_producer", None) in (None, self))
            if mine and all(data is not f for f in found):
                found.append(data)
        return found

    def read(self) -> list[PipelineData]:
        """The upstream data this step reads (from its inputs and arguments)."""
        mine = {id(d) for d in self.written()}
        found = []
        for item in [*self.inputs, *self.arguments, *getattr(self, "side_inputs", [])]:
            data = written_data(item)
            if data is not None and id(data) not in mine:
                found.append(data)
        return found

    def run_after(self, step: StepBase) -> None:
        """Run this step only once ``step`` has completed (v1's control dependency)."""
        if not isinstance(step, StepBase):
            raise ValidationError([Diagnostic(f"run_after() takes a step, got "
                                              f"{type(step).__name__}", location=call_site(),
                                              code="type")])
        self._after.append(step)

    def upstream(self) -> list[StepBase]:
        """The steps that must run before this one: the writers of what it reads, and
        ``run_after``'s."""
        steps = [d._producer for d in self.read() if getattr(d, "_producer", None) is not None]
        return [*steps, *self._after]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class PythonScriptStep(StepBase):
    """v1 ``PythonScriptStep``: ``python <script_name> <arguments>`` in ``source_directory``,
    run as a v2 command step (``runconfig``'s environment recorded, ``params`` as
    ``AML_PARAMETER_<name>`` variables)."""

    def __init__(self, script_name: str, name: str | None = None,
                 arguments: Sequence[Any] | None = None, compute_target: Any = None,
                 runconfig: RunConfiguration | None = None,
                 runconfig_pipeline_params: Mapping[str, Any] | None = None,
                 inputs: Sequence[Any] | None = None, outputs: Sequence[Any] | None = None,
                 params: Mapping[str, Any] | None = None, source_directory: str | None = None,
                 allow_reuse: bool = True, version: str | None = None,
                 hash_paths: Sequence[str] | None = None) -> None:
        self.script_name = script_name
        self.compute_target = compute_target
        self.runconfig = runconfig
        self.params = dict(params or {})
        self.source_directory = source_directory
        super().__init__(name or script_name, inputs or [], outputs or [], arguments or [],
                         allow_reuse)
        _check_outputs(self)


class CommandStep(StepBase):
    """v1 ``CommandStep``: a shell ``command`` (text, or a list of words joined by spaces, data
    among them) in ``source_directory``, run as a v2 command step; ``runconfig`` may be a
    ``ScriptRunConfig`` giving the command, folder, environment and compute."""

    def __init__(self, command: str | Sequence[Any] | None = None, name: str | None = None,
                 compute_target: Any = None,
                 runconfig: RunConfiguration | ScriptRunConfig | None = None,
                 runconfig_pipeline_params: Mapping[str, Any] | None = None,
                 inputs: Sequence[Any] | None = None, outputs: Sequence[Any] | None = None,
                 params: Mapping[str, Any] | None = None, source_directory: str | None = None,
                 allow_reuse: bool = True, version: str | None = None) -> None:
        if isinstance(runconfig, ScriptRunConfig):
            command = runconfig.command_words() if command is None else command
            source_directory = source_directory or runconfig.source_directory
            compute_target = compute_target or runconfig.run_config.target
            runconfig = runconfig.run_config
        self.command = command
        self.compute_target = compute_target
        self.runconfig = runconfig
        self.params = dict(params or {})
        self.source_directory = source_directory
        words = [] if command is None or isinstance(command, str) else list(command)
        super().__init__(name or "command_step", inputs or [], outputs or [], words, allow_reuse)
        _check_outputs(self)


class ParallelRunStep(StepBase):
    """v1 ``ParallelRunStep``: one parallel step with its config, input(s) and output."""

    def __init__(self, name: str, parallel_run_config: ParallelRunConfig, inputs: Sequence[Any],
                 output: Any = None, side_inputs: Sequence[Any] | None = None,
                 arguments: Sequence[Any] | None = None, allow_reuse: bool = True,
                 models: Sequence[Any] | None = None, tags: Any = None, properties: Any = None,
                 add_parallel_run_step_dependencies: bool = True) -> None:
        """``models`` (azureml.contrib's ``ParallelRunStep``, 2019-2020) are registered
        ``Model`` s the step reads: each becomes a side input of the step."""
        self.parallel_run_config = parallel_run_config
        self.output = output
        self.models = list(models or [])
        self.tags = dict(tags or {})
        self.properties = dict(properties or {})
        self.side_inputs = list(side_inputs or [])
        outputs = [output] if isinstance(output, PipelineData) else []
        super().__init__(name, inputs, outputs, arguments or [], allow_reuse)
        problems = []
        if not isinstance(parallel_run_config, ParallelRunConfig):
            problems.append(Diagnostic("parallel_run_config must be a ParallelRunConfig",
                                       key_path=f"{name}.parallel_run_config",
                                       location=self._origin, code="type"))
        if len(self.inputs) != 1:
            problems.append(Diagnostic(f"ParallelRunStep {name!r} has {len(self.inputs)} inputs; a "
                                       f"v2 parallel step "
                                       "reads exactly one input_data", key_path=f"{name}.inputs",
                                       location=self._origin, code="unsupported",
                                       hint="pass further data as side_inputs"))
        if problems:
            raise ValidationError(problems)


def _check_outputs(step: StepBase) -> None:
    wrong = [o for o in step.outputs if not isinstance(o, PipelineData)]
    if wrong:
        raise ValidationError([Diagnostic(
            f"step {step.name!r}: outputs= takes PipelineData or OutputFileDatasetConfig, got "
            f"{type(wrong[0]).__name__}", key_path=f"{step.name}.outputs", location=step._origin,
            code="type")])


def closure(steps: Iterable[StepBase]) -> list[StepBase]:
    """``steps`` and every step they need (writers of their inputs, ``run_after``), each once,
    those needed first."""
    ordered: list[StepBase] = []
    seen: set[int] = set()

    def visit(step: StepBase) -> None:
        if id(step) in seen:
            return
        seen.add(id(step))
        for before in step.upstream():
            visit(before)
        ordered.append(step)

    for step in steps:
        if isinstance(step, StepBase):
            visit(step)
    return ordered


__all__ = ["CommandStep", "ParallelRunStep", "PythonScriptStep", "StepBase", "closure"]
