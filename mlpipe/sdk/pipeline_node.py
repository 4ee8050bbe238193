"""A ``@pipeline`` function called inside another ``@pipeline``: a ``type: pipeline`` step
whose inline component is the inner pipeline (azure-ai-ml's pipeline component node)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlpipe.sdk.bindings import NodeOutput, Ports
from mlpipe.sdk.io import Input, PipelineInput
from mlpipe.sdk.nodes import Node

if TYPE_CHECKING:
    from mlpipe.sdk.job import PipelineJob


class PipelineComponentNode(Node):
    """A step running the pipeline ``job`` as a sub-graph; its outputs are the outputs the
    inner function returned."""

    kind = "pipeline"
    _job: PipelineJob
    _component_name: str
    _declarations: dict[str, dict[str, Any]]

    def __init__(self, job: PipelineJob, component_name: str, values: Mapping[str, Any],
                 **common: Any) -> None:
        object.__setattr__(self, "_job", job)
        object.__setattr__(self, "_component_name", component_name)
        object.__setattr__(self, "_declarations", {
            key: declaration(value) for key, value in values.items()})
        object.__setattr__(self, "_declared_inputs", list(values))
        super().__init__(inputs={k: v for k, v in values.items() if v is not None}, **common)
        outputs = {key: NodeOutput(self, key) for key in job.outputs}
        object.__setattr__(self, "_outputs", Ports("output", outputs, owner=self))

    def _component_value(self, base: Path) -> Any:
        inner = self._job._document()
        outputs = {key: {"type": output_type(self._job, key)} for key in self._job.outputs}
        component: dict[str, Any] = {"type": "pipeline", "name": self._component_name}
        for key in ("display_name", "description"):
            if inner.get(key):
                component[key] = inner[key]
        if self._declarations:
            component["inputs"] = dict(self._declarations)
        if outputs:
            component["outputs"] = outputs
        component["jobs"] = inner.get("jobs", {})
        return component

    def _settings(self, base: Path) -> dict[str, Any]:
        return {}


def declaration(value: Any) -> dict[str, Any]:
    """The component input declaration for a value passed to a nested ``@pipeline``."""
    while isinstance(value, PipelineInput):
        value = value.value
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    if isinstance(value, Input):
        return {"type": value.type or "uri_folder"}
    if isinstance(value, NodeOutput):
        return {"type": port_type(value)}
    return {"type": "string", "optional": True}


def port_type(port: NodeOutput) -> str:
    """The data type of a node output (through nested pipeline components)."""
    if port.type:
        return str(port.type)
    node = port._node
    if isinstance(node, PipelineComponentNode):
        return output_type(node._job, port.port_name)
    return "uri_folder"


def output_type(job: PipelineJob, key: str) -> str:
    """The type of pipeline output ``key`` of ``job``: declared, else its step output's."""
    out = job.outputs.get(key)
    if out is not None and out.type:
        return str(out.type)
    for node in job.jobs.values():
        for port in node.outputs.values():
            if isinstance(port, NodeOutput) and port._pipeline_output == key:
                return port_type(port)
    return "uri_folder"


__all__ = ["PipelineComponentNode"]
