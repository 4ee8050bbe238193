"""A standalone sweep job's ``trial`` as the command component a sweep step runs.

A sweep job file (``type: sweep``, what azure-ai-ml submits for ``command(...).sweep(...)``
outside a pipeline) has a ``trial`` with no declared inputs or outputs: its command binds
the job's ``inputs`` as ``${{inputs.x}}``, the swept values as ``${{search_space.x}}`` and the
job's ``outputs``. Compiled as its one step, the job is a sweep step whose trial declares
each of those (typed from the value or the distribution) and whose command binds the swept
values as inputs; the trial's ``environment_variables`` are the job's own (azure-ai-ml sends
them with the trial), so they are left out here and applied as the step's
(:func:`mlpipe.compiler.steps.build_step`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mlpipe.compiler.bindings import Reference, substitute
from mlpipe.compiler.values import literal_type
from mlpipe.io_types import DEFAULT_DATA_TYPE

SEARCH_SPACE = "search_space."
NUMBER_KINDS = ("uniform", "loguniform", "quniform", "qloguniform", "normal", "lognormal",
                "qnormal", "qlognormal")


def trial_component(job: Mapping[str, Any]) -> dict[str, Any]:
    """The command component of sweep job ``job``'s trial (the job's YAML data)."""
    trial = job.get("trial")
    component = {key: value for key, value in (trial if isinstance(trial, Mapping) else {}).items()
                 if key != "environment_variables"}
    component["type"] = "command"
    space = job.get("search_space")
    swept: dict[str, Any] = {}
    for name, entry in (space if isinstance(space, Mapping) else {}).items():
        swept.update(_declarations(str(name), entry))
    if isinstance(component.get("command"), str):
        component["command"] = swept_as_inputs(component["command"], list(swept))
    inputs: dict[str, Any] = {}
    given = job.get("inputs")
    for name, value in (given if isinstance(given, Mapping) else {}).items():
        inputs[str(name)] = {"type": _value_type(value)}
    inputs.update(swept)
    outputs = job.get("outputs")
    component["inputs"] = inputs
    component["outputs"] = {
        str(name): {"type": value.get("type") or DEFAULT_DATA_TYPE} if isinstance(value, Mapping)
        else {"type": DEFAULT_DATA_TYPE}
        for name, value in (outputs if isinstance(outputs, Mapping) else {}).items()}
    return component


def swept_as_inputs(command: str, names: list[str]) -> str:
    """``command`` with each ``${{search_space.x}}`` of an entry ``x`` of ``names`` written
    ``${{inputs.x}}`` (one naming no entry stays, for the compiler to report)."""

    def render(ref: Reference) -> str:
        name = ref.name[len(SEARCH_SPACE):]
        if ref.scope == "unknown" and ref.name.startswith(SEARCH_SPACE) and name in names:
            return "${{inputs.%s}}" % name
        return ref.text

    return substitute(command, render)


def _declarations(name: str, entry: Any) -> dict[str, Any]:
    """The trial inputs a search-space entry sets: its own, and for a choice of mappings
    (a conditional space) every key of them, optional (a trial draws one mapping's keys)."""
    if not isinstance(entry, Mapping):
        return {name: {"type": "string"}}
    kind = str(entry.get("type", "")).lower()
    if kind == "randint":
        return {name: {"type": "integer"}}
    if kind in NUMBER_KINDS:
        return {name: {"type": "number"}}
    given = entry.get("values")
    values: list[Any] = given if isinstance(given, list) else []
    found: dict[str, Any] = {name: {"type": _common_type(values)}}
    for value in values:
        if isinstance(value, Mapping):
            for key, item in value.items():
                nested = (_declarations(str(key), item) if isinstance(item, Mapping)
                          else {str(key): {"type": _value_type(item)}})
                found.update({inner: {**decl, "optional": True} for inner, decl in nested.items()})
    return found


def _common_type(values: list[Any]) -> str:
    kinds = {_value_type(value) for value in values if not isinstance(value, Mapping)}
    if kinds <= {"integer"} and kinds:
        return "integer"
    if kinds <= {"integer", "number"} and kinds:
        return "number"
    return kinds.pop() if len(kinds) == 1 else "string"


def _value_type(value: Any) -> str:
    """The input type of a job input's value (a literal, or a data mapping with its type)."""
    if isinstance(value, Mapping):
        if value.get("type") is None and "value" in value and "path" not in value:
            return literal_type(value["value"])  # {value: 42}: a literal written as a mapping
        return str(value.get("type") or DEFAULT_DATA_TYPE)
    return literal_type(value)


__all__ = ["trial_component", "swept_as_inputs"]
