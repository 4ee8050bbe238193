"""Node outputs and the ``${{...}}`` text an SDK value stands for in YAML."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from mlpipe.diagnostics import did_you_mean
from mlpipe.sdk.callsite import call_site
from mlpipe.sdk.io import Input, Output, PipelineInput
from mlpipe.sdk.tracking import Record, Tracked, drop_none


class Named(Protocol):
    """A node as its outputs see it: by name (``None`` until the pipeline names it)."""

    @property
    def name(self) -> str | None: ...


class NodeOutput(Tracked):
    """``node.outputs.<name>``: wire it into another node or return it from the pipeline.

    ``type``, ``mode`` and ``path`` may be changed after the node is made.
    """

    def __init__(self, node: Named, port: str, declared: Output | None = None) -> None:
        self._node = node
        self._port = port
        self._pipeline_output: str | None = None
        self._raw: Any = None  # an output value kept as written (a loaded YAML)
        self._declared = declared is not None
        self.type = declared.type if declared else None
        self.mode = declared.mode if declared else None
        self.path = declared.path if declared else None
        self.description = declared.description if declared else None
        self.name = declared.name if declared else None
        self.version = declared.version if declared else None
        self._extra = dict(declared._extra) if declared else {}
        self._start_tracking(declared._origin if declared else None)

    @property
    def port_name(self) -> str:
        return self._port

    def binding(self) -> str:
        node_name = self._node.name or "<unnamed>"
        return "${{parent.jobs.%s.outputs.%s}}" % (node_name, self._port)

    def settings(self) -> dict[str, Any]:
        return drop_none({
            "type": self.type, "path": self.path, "mode": self.mode,
            "description": self.description, "name": self.name, "version": self.version,
            **self._extra,
        })

    def __str__(self) -> str:
        return self.binding()

    def __repr__(self) -> str:
        return f"NodeOutput({self._node.name!r}, {self._port!r})"


class Ports(Mapping[str, Any]):
    """``node.inputs`` / ``node.outputs``: a mapping that also allows attribute access."""

    def __init__(self, kind: str, values: dict[str, Any], names: list[str] | None = None,
                 owner: Tracked | None = None) -> None:
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_names", names)
        object.__setattr__(self, "_owner", owner)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        try:
            return self._values[key]
        except KeyError:
            hint = did_you_mean(key, self._values) or f"known: {', '.join(self._values) or 'none'}"
            raise AttributeError(f"no {self._kind} named {key!r} ({hint})") from None

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value

    def __setitem__(self, key: str, value: Any) -> None:
        names = self._names
        if names is not None and key not in names:
            hint = did_you_mean(key, names) or f"known: {', '.join(names) or 'none'}"
            raise AttributeError(f"no {self._kind} named {key!r} ({hint})")
        self._values[key] = value
        owner = self._owner
        if owner is not None:
            owner._sites[f"{self._kind}s.{key}"] = call_site()


def value_to_yaml(value: Any) -> Any:
    """The YAML value of something bound to an input: a binding, an Input mapping or a literal."""
    if isinstance(value, (PipelineInput, NodeOutput)):
        return value.binding()
    if isinstance(value, Input):
        return value.to_dict()
    if isinstance(value, (Output, Record)):  # settings objects: identity, distribution, ...
        return value.to_dict()
    return value
