"""v1 ``Pipeline`` and ``Experiment``: a pipeline to validate, dump or run locally as the v2
job :mod:`mlpipe.sdk.v1.translation` makes of its steps (:mod:`mlpipe.sdk.v1.steps`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mlpipe.diagnostics import Diagnostic, ValidationError
from mlpipe.sdk.callsite import call_site, caller_dir
from mlpipe.sdk.job import PipelineJob
from mlpipe.sdk.operations.base import NotAvailableLocally
from mlpipe.sdk.running import run
from mlpipe.sdk.v1.datasets import FileDataset
from mlpipe.sdk.v1.parameters import parameter_values
from mlpipe.sdk.v1.runconfig import ScriptRunConfig
from mlpipe.sdk.v1.runs import PUBLISH_HINT, PipelineRun
from mlpipe.sdk.v1.steps import CommandStep, ParallelRunStep, PythonScriptStep, StepBase, closure
from mlpipe.sdk.v1.translation import command_node, parallel_node, v2_name
from mlpipe.sdk.v1.wiring import Order, identifier


class Pipeline:
    """v1 ``Pipeline(workspace, steps)``: a v2 pipeline job to validate, dump or run. Any mix
    of ``PythonScriptStep``, ``CommandStep`` and ``ParallelRunStep``; the steps they need
    (writers of their inputs, ``run_after``) are added as v1 does."""

    def __init__(self, workspace: Any = None, steps: Sequence[StepBase] = (),
                 description: str | None = None, default_datastore: Any = None,
                 default_source_directory: str | None = None, resolve_closure: bool = True,
                 **kwargs: Any) -> None:
        self.workspace = workspace
        self.steps = list(steps)
        self.description = description
        self.default_datastore = default_datastore
        self._origin = call_site()
        self._base_path = caller_dir()

    def to_job(self, *, experiment_name: str | None = None) -> PipelineJob:
        """The v2 :class:`~mlpipe.sdk.job.PipelineJob` these steps convert to."""
        problems = [Diagnostic(f"{type(step).__name__} is not a v1 step (PythonScriptStep, "
                               "CommandStep or ParallelRunStep)", location=self._origin,
                               code="unsupported")
                    for step in self.steps if not isinstance(step, StepBase)]
        if problems:
            raise ValidationError(problems)
        steps = closure(self.steps)
        names = step_names(steps)
        producers: dict[int, tuple[str, str]] = {}
        for step in steps:
            for data in step.written():
                producers.setdefault(id(data), (names[id(step)], identifier(data.output_name)))
        awaited = {id(before) for step in steps for before in step._after}
        jobs = {}
        for step in steps:
            order = Order([names[id(before)] for before in step._after], id(step) in awaited)
            jobs[names[id(step)]] = _node(step, names[id(step)], producers, order,
                                          self._base_path)
        datastore = self.default_datastore
        settings = {}
        if datastore is not None:
            settings["default_datastore"] = (datastore if isinstance(datastore, str)
                                             else getattr(datastore, "name", str(datastore)))
        return PipelineJob(jobs=jobs, description=self.description, experiment_name=experiment_name,
                           settings=settings, base_path=self._base_path,
                           source=Path(self._origin.file) if self._origin and self._origin.file
                           else None, origin=self._origin)

    def validate(self) -> list[Any]:
        """Check the converted pipeline; raises one ValidationError listing every problem
        (v1 returns the list of errors: empty here when it does not raise)."""
        self.to_job().validate()
        return []

    def run(self, *, experiment_name: str | None = None,
            pipeline_parameters: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """Run locally (see :func:`mlpipe.run`); returns the run result.

        ``pipeline_parameters`` give ``PipelineParameter`` values for this run."""
        with parameter_values(pipeline_parameters):
            job = self.to_job(experiment_name=experiment_name)
        result = run(job, **kwargs)
        _register_outputs(closure(self.steps), result)
        return result

    def submit(self, experiment_name: str | None = None,
               pipeline_parameters: Mapping[str, Any] | None = None,
               continue_on_step_failure: bool | None = None, regenerate_outputs: bool = False,
               **kwargs: Any) -> Any:
        """v1's ``submit``: runs the pipeline locally; returns a v1 ``PipelineRun``."""
        steps = closure(self.steps)
        names = step_names(steps)
        return PipelineRun(self.run(experiment_name=experiment_name,
                                    pipeline_parameters=pipeline_parameters, **kwargs),
                           experiment_name, {names[id(step)]: step.name for step in steps})

    def publish(self, name: str | None = None, description: str | None = None,
                version: str | None = None, continue_on_step_failure: bool | None = None,
                **kwargs: Any) -> Any:
        """Publishing makes a REST endpoint in a workspace: not available locally."""
        raise NotAvailableLocally("Pipeline.publish()", PUBLISH_HINT)

    def service_endpoint(self) -> str:
        raise NotAvailableLocally("Pipeline.service_endpoint()", PUBLISH_HINT)


def step_names(steps: Sequence[StepBase]) -> dict[int, str]:
    """Each step's v2 name (by ``id``): its v1 name as an identifier, made unique
    (``train_py``, ``train_py_1``)."""
    names: dict[int, str] = {}
    taken: set[str] = set()
    for step in steps:
        name, index = v2_name(step.name), 1
        while name in taken:
            name, index = f"{v2_name(step.name)}_{index}", index + 1
        taken.add(name)
        names[id(step)] = name
    return names


def _node(step: StepBase, name: str, producers: Mapping[int, tuple[str, str]], order: Order,
          base: Path) -> Any:
    if isinstance(step, ParallelRunStep):
        return parallel_node(step, name, producers, order, base)
    assert isinstance(step, (PythonScriptStep, CommandStep))
    return command_node(step, name, producers, order, base)


def _register_outputs(steps: Sequence[StepBase], result: Any) -> None:
    """``OutputFileDatasetConfig.register_on_complete(name)``: the output's folder registered
    in the local asset store once the run completed."""
    if getattr(result, "status", None) != "completed":
        return
    names = step_names(steps)
    for step in steps:
        outputs = result.step_outputs.get(names[id(step)], {})
        for item in [*step.outputs, *step.arguments]:
            registration = getattr(item, "registration", None)
            key = identifier(getattr(item, "output_name", ""))
            if registration and key in outputs:
                FileDataset(outputs[key]).register(None, registration["name"],
                                                   registration["description"],
                                                   registration["tags"])


class Experiment:
    """v1 ``Experiment(workspace, name)``; ``submit(pipeline)`` runs it locally."""

    def __init__(self, workspace: Any = None, name: str | None = None) -> None:
        self.workspace = workspace
        self.name = name

    def submit(self, config: Pipeline | ScriptRunConfig, tags: Mapping[str, str] | None = None,
               **kwargs: Any) -> Any:
        """Run the v1 ``Pipeline`` (or a ``ScriptRunConfig``, as a one-step job) locally under
        this experiment's name; returns a v1 ``PipelineRun`` (``pipeline_parameters=`` set
        ``PipelineParameter`` values)."""
        if isinstance(config, ScriptRunConfig):
            name = Path(str(config.script)).stem if config.script else "command"
            config = Pipeline(self.workspace, [CommandStep(name=name, runconfig=config)])
        if not isinstance(config, Pipeline):
            raise ValidationError([Diagnostic(
                f"Experiment.submit() takes a v1 Pipeline, got {type(config).__name__}",
                location=call_site(), code="type",
                hint="a ScriptRunConfig runs too; a v2 PipelineJob runs with job.run() or "
                     "mlpipe.run(job)")])
        return config.submit(experiment_name=self.name, **kwargs)

    def __repr__(self) -> str:
        return f"Experiment(Name: {self.name},\nWorkspace: {getattr(self.workspace, 'name', None)})"


__all__ = ["Experiment", "Pipeline", "step_names"]
