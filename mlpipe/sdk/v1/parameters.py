"""v1 ``PipelineParameter``: a value a submission may override.

A ``PipelineParameter`` stands for its ``default_value`` until
``Experiment.submit(pipeline, pipeline_parameters={name: value})`` gives another
value for that submission; the pipeline is converted to v2 with the values in
force (:func:`parameter_values`, :func:`resolve`).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from typing import Any

_values: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar(
    "mlpipe_v1_pipeline_parameters", default=None)


class PipelineParameter:
    """v1 ``PipelineParameter(name, default_value)``: a value a submission may override."""

    def __init__(self, name: str, default_value: Any) -> None:
        self.name = name
        self.default_value = default_value

    def __repr__(self) -> str:
        return f"PipelineParameter(name={self.name!r}, default_value={self.default_value!r})"


@contextlib.contextmanager
def parameter_values(values: Mapping[str, Any] | None) -> Iterator[None]:
    """Within this block, parameters named in ``values`` take those values."""
    token = _values.set(dict(values or {}))
    try:
        yield
    finally:
        _values.reset(token)


def resolve(value: Any) -> Any:
    """A parameter's value in force (a submission's override, else its default)."""
    if isinstance(value, PipelineParameter):
        return resolve((_values.get() or {}).get(value.name, value.default_value))
    return value


__all__ = ["PipelineParameter", "parameter_values", "resolve"]
