"""Node inputs and outputs, and the ``${{...}}`` text an SDK value stands for in YAML.

``node.inputs.x`` is a :class:`NodeInput`: the value bound to the input and the input's
own ``mode``, as in azure-ai-ml (``node.inputs.x.mode = "direct"`` sets this node's input,
never the output of the step the input is bound to). ``node.outputs.x`` is a
:class:`NodeOutput`; assigning an ``Output`` to it changes its settings and keeps it the
same port, so it can still be wired to other steps or returned from the pipeline.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
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
        self._declared_type: str | None = None  # a component file's declaration
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

    def assign(self, value: Output | str) -> None:
        """``node.outputs.x = Output(...)`` (its settings replace this port's) or a binding
        text, as azure-ai-ml assigns an output: the port stays the same object."""
        site = call_site()
        if isinstance(value, str):
            object.__setattr__(self, "_raw", value)
            self._sites["_raw"] = site
            return
        for key in ("type", "mode", "path", "description", "name", "version"):
            object.__setattr__(self, key, getattr(value, key))
            self._sites[key] = site
        object.__setattr__(self, "_raw", None)
        object.__setattr__(self, "_declared", True)
        object.__setattr__(self, "_extra", dict(value._extra))
        object.__setattr__(self, "_origin", value._origin or site)

    def __str__(self) -> str:
        return self.binding()

    def __repr__(self) -> str:
        return f"NodeOutput({self._node.name!r}, {self._port!r})"


class NodeInput:
    """``node.inputs.<name>``: the value bound to one input of one node, and its ``mode``.

    The mode belongs to this input (``node.inputs.x.mode = InputOutputModes.DIRECT``); an
    ``Input`` bound here keeps its own mode until this one is set. ``path`` is the bound
    ``Input``'s path (settable), ``type`` the declared type when known.
    """

    _ports: Ports
    _key: str

    def __init__(self, ports: Ports, key: str) -> None:
        object.__setattr__(self, "_ports", ports)
        object.__setattr__(self, "_key", key)

    @property
    def port_name(self) -> str:
        return self._key

    @property
    def _data(self) -> Any:
        """The bound value (a literal, an ``Input``, a pipeline input or a step output)."""
        return self._ports._values.get(self._key)

    @property
    def mode(self) -> str | None:
        own: str | None = self._ports._modes.get(self._key)
        if own is not None:
            return own
        data = self._data
        if isinstance(data, Mapping):  # as written in a loaded YAML
            return data.get("mode")
        return data.mode if isinstance(data, Input) else None

    @mode.setter
    def mode(self, value: str | None) -> None:
        self._ports._modes[self._key] = value
        owner = self._ports._owner
        if owner is not None:
            owner._sites[f"inputs.{self._key}"] = call_site()

    @property
    def path(self) -> Any:
        data = self._data
        if isinstance(data, Mapping):
            return data.get("path")
        return data.path if isinstance(data, Input) else binding_text(data)

    @path.setter
    def path(self, value: str) -> None:
        data = self._data
        if isinstance(data, Input):
            data.path = value
        else:
            self._ports[self._key] = value

    @property
    def type(self) -> str | None:
        data = self._data
        if isinstance(data, Input):
            return data.type
        if isinstance(data, Mapping) and data.get("type"):
            return str(data["type"])
        declared = self._ports._types.get(self._key)
        return declared if declared is not None else getattr(data, "type", None)

    def result(self) -> Any:
        """The bound value, as azure-ai-ml's ``PipelineInput.result()`` gives it."""
        data = self._data
        return data.value if isinstance(data, PipelineInput) else data

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in ("mode", "path"):
            raise AttributeError(f"node.inputs.{self._key}.{name} cannot be set (mode and path "
                                 "can; bind another value with node.inputs.<name> = value)")
        object.__setattr__(self, name, value)

    def __str__(self) -> str:
        text = binding_text(self._data)
        return text if isinstance(text, str) else str(self._data)

    def __repr__(self) -> str:
        return f"NodeInput({self._key!r}, {self._data!r}, mode={self.mode!r})"


def binding_text(value: Any) -> Any:
    """``${{...}}`` for a pipeline input or a step output; anything else as it is."""
    if isinstance(value, (PipelineInput, NodeOutput)):
        return value.binding()
    return value


class Ports(Mapping[str, Any]):
    """``node.inputs`` / ``node.outputs``: a mapping that also allows attribute access.

    ``_values`` holds the bound values (inputs) or the :class:`NodeOutput` ports; an input
    is read as a :class:`NodeInput`, whose mode is kept in ``_modes``.
    """

    def __init__(self, kind: str, values: dict[str, Any], names: list[str] | None = None,
                 owner: Tracked | None = None, modes: dict[str, str | None] | None = None,
                 types: dict[str, str | None] | None = None) -> None:
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_names", names)
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_modes", dict(modes or {}))
        object.__setattr__(self, "_types", dict(types or {}))

    def __getitem__(self, key: str) -> Any:
        if self._kind == "input":
            if key not in self._values and key not in (self._names or ()):
                raise KeyError(key)
            return NodeInput(self, key)
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        try:
            return self[key]
        except KeyError:
            known = list(dict.fromkeys([*(self._names or ()), *self._values]))
            raise no_such(self._kind, key, known) from None

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value

    def __setitem__(self, key: str, value: Any) -> None:
        names = self._names
        if names is not None and key not in names:
            raise no_such(self._kind, key, names)
        port = self._values.get(key)
        if isinstance(port, NodeOutput) and isinstance(value, (Output, str)):
            port.assign(value)
        else:
            self._values[key] = value._data if isinstance(value, NodeInput) else value
        owner = self._owner
        if owner is not None:
            owner._sites[f"{self._kind}s.{key}"] = call_site()


def no_such(kind: str, key: str, known: Iterable[str], owner: str = "") -> AttributeError:
    """``node.inputs.x`` / ``pipeline_job.outputs.x`` of a name that is not there."""
    names = list(known)
    hint = did_you_mean(key, names) or f"known: {', '.join(names) or 'none'}"
    return AttributeError(f"{owner}no {kind} named {key!r} ({hint})")


def value_to_yaml(value: Any) -> Any:
    """The YAML value of something bound to an input: a binding, an Input mapping or a literal."""
    if isinstance(value, NodeInput):
        value = value._data
    if isinstance(value, (PipelineInput, NodeOutput)):
        return value.binding()
    if isinstance(value, Input):
        return value.to_dict()
    if isinstance(value, (Output, Record)):  # settings objects: identity, distribution, ...
        return value.to_dict()
    return value
