"""v1 ``ParallelRunStep``, ``Pipeline`` and ``Experiment``: a pipeline to validate, dump or run
locally as the v2 job :mod:`mlpipe.sdk.v1.translation` makes of it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mlpipe.diagnostics import Diagnostic, ValidationError
from mlpipe.sdk.callsite import call_site, caller_dir
from mlpipe.sdk.job import PipelineJob
from mlpipe.sdk.nodes import ParallelNode
from mlpipe.sdk.running import run
from mlpipe.sdk.v1.config import ParallelRunConfig
from mlpipe.sdk.v1.datasets import PipelineData
from mlpipe.sdk.v1.parameters import parameter_values
from mlpipe.sdk.v1.runs import PipelineRun
from mlpipe.sdk.v1.translation import step_node, v2_name


class ParallelRunStep:
    """v1 ``ParallelRunStep``: one parallel step with its config, input(s) and output."""

    def __init__(self, name: str, parallel_run_config: ParallelRunConfig, inputs: Sequence[Any],
                 output: Any = None, side_inputs: Sequence[Any] | None = None,
                 arguments: Sequence[Any] | None = None, allow_reuse: bool = True) -> None:
        self.name = name
        self.parallel_run_config = parallel_run_config
        self.inputs = list(inputs or [])
        self.output = output
        self.side_inputs = list(side_inputs or [])
        self.arguments = list(arguments or [])
        self.allow_reuse = allow_reuse
        self._origin = call_site()
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

    def to_node(self, producers: Mapping[int, tuple[str, str]], base: Path) -> ParallelNode:
        """The v2 parallel step (``producers`` maps id(PipelineData) to (step, output))."""
        return step_node(self, producers, base)


class Pipeline:
    """v1 ``Pipeline(workspace, steps)``: a v2 pipeline job to validate, dump or run."""

    def __init__(self, workspace: Any = None, steps: Sequence[ParallelRunStep] = (),
                 description: str | None = None, default_datastore: Any = None,
                 **kwargs: Any) -> None:
        self.workspace = workspace
        self.steps = list(steps)
        self.description = description
        self.default_datastore = default_datastore
        self._origin = call_site()
        self._base_path = caller_dir()

    def to_job(self, *, experiment_name: str | None = None) -> PipelineJob:
        """The v2 :class:`~mlpipe.sdk.job.PipelineJob` these steps convert to."""
        producers: dict[int, tuple[str, str]] = {}
        for step in self.steps:
            if isinstance(step.output, PipelineData):
                producers[id(step.output)] = (v2_name(step.name), step.output.output_name)
        problems = [Diagnostic(f"step {type(step).__name__} is not supported; only "
                               "ParallelRunStep converts to v2 here", location=self._origin,
                               code="unsupported")
                    for step in self.steps if not isinstance(step, ParallelRunStep)]
        names = [step.name for step in self.steps if isinstance(step, ParallelRunStep)]
        problems += [Diagnostic(f"two steps are named {name!r}", location=self._origin,
                                code="duplicate")
                     for name in sorted(set(names)) if names.count(name) > 1]
        if problems:
            raise ValidationError(problems)
        jobs = {v2_name(step.name): step.to_node(producers, self._base_path)
                for step in self.steps}
        datastore = self.default_datastore
        settings = {}
        if datastore is not None:
            settings["default_datastore"] = (datastore if isinstance(datastore, str)
                                             else getattr(datastore, "name", str(datastore)))
        return PipelineJob(jobs=jobs, description=self.description, experiment_name=experiment_name,
                           settings=settings, base_path=self._base_path,
                           source=Path(self._origin.file) if self._origin and self._origin.file
                           else None, origin=self._origin)

    def validate(self) -> Any:
        """Check the converted pipeline; raises one ValidationError listing every problem."""
        return self.to_job().validate()

    def run(self, *, experiment_name: str | None = None,
            pipeline_parameters: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """Run locally (see :func:`mlpipe.run`); returns the run result.

        ``pipeline_parameters`` give ``PipelineParameter`` values for this run."""
        with parameter_values(pipeline_parameters):
            job = self.to_job(experiment_name=experiment_name)
        return run(job, **kwargs)

    def submit(self, experiment_name: str | None = None,
               pipeline_parameters: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """v1's ``submit``: runs the pipeline locally; returns a v1 ``PipelineRun``."""
        return PipelineRun(self.run(experiment_name=experiment_name,
                                    pipeline_parameters=pipeline_parameters, **kwargs),
                           experiment_name)


class Experiment:
    """v1 ``Experiment(workspace, name)``; ``submit(pipeline)`` runs it locally."""

    def __init__(self, workspace: Any = None, name: str | None = None) -> None:
        self.workspace = workspace
        self.name = name

    def submit(self, config: Pipeline, tags: Mapping[str, str] | None = None,
               **kwargs: Any) -> Any:
        """Run the v1 ``Pipeline`` locally under this experiment's name; returns a v1
        ``PipelineRun`` (``pipeline_parameters=`` set ``PipelineParameter`` values)."""
        if not isinstance(config, Pipeline):
            raise ValidationError([Diagnostic(
                f"Experiment.submit() takes a v1 Pipeline, got {type(config).__name__}",
                location=call_site(), code="type",
                hint="a v2 PipelineJob runs with job.run() or mlpipe.run(job)")])
        return config.submit(experiment_name=self.name, **kwargs)


__all__ = ["Experiment", "ParallelRunStep", "Pipeline"]
