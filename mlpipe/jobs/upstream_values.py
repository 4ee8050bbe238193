"""Inputs that take an upstream step's primitive output (an mldesigner function's return
value, ``PlanInput.reads_upstream_value``).

Their text is known only once the upstream step has run, so the compiler leaves
``${{inputs.<name>}}`` where they are bound (``compiler/scope.py``); the runner fills them
in here when the step starts, in every text a step of any kind reads bindings from: a
command, a parallel step's ``program_arguments``, a Spark step's ``args``, a sweep's trial
command and the environment variables.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mlpipe.compiler.bindings import substitute
from mlpipe.frozen import freeze
from mlpipe.plan import CommandStep, ParallelStep, SparkStep, Step, SweepStep, primitive_output_file


class MissingUpstreamValue(ValueError):
    """An input takes the value of an upstream output that its step did not write."""


def with_upstream_values(step: Step) -> Step:
    """``step`` with each input that reads an upstream primitive output replaced by that
    output's text (unquoted, as a literal is); :class:`MissingUpstreamValue` names an
    upstream step that wrote no value."""
    values = _values(step)
    if not values:
        return step

    def fill(text: str) -> str:
        return substitute(text, lambda ref: values[ref.name]
                          if ref.scope == "input" and ref.name in values else ref.text)

    changes: dict[str, Any] = {"environment_variables": freeze(
        {key: fill(value) for key, value in step.environment_variables.items()})}
    if isinstance(step, CommandStep):
        changes["command"] = fill(step.command)
    elif isinstance(step, ParallelStep):
        changes["program_arguments"] = tuple(fill(arg) for arg in step.program_arguments)
    elif isinstance(step, SparkStep):
        changes["args"] = tuple(fill(arg) for arg in step.args)
    elif isinstance(step, SweepStep):
        changes["trial_command"] = fill(step.trial_command)
    return dataclasses.replace(step, **changes)


def _values(step: Step) -> dict[str, str]:
    values: dict[str, str] = {}
    for name, item in step.inputs.items():
        if not item.reads_upstream_value:
            continue
        path = primitive_output_file(str(item.path))
        try:
            values[name] = path.read_text(encoding="utf-8")
        except OSError:
            source = item.source
            where = f"{source.step}.{source.output}" if source is not None else "?"
            raise MissingUpstreamValue(
                f"input '{name}' takes the value of output {where}, which that step did not "
                f"write ({path} is missing)") from None
    return values


__all__ = ["MissingUpstreamValue", "with_upstream_values"]
