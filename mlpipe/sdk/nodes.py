"""Pipeline nodes: parallel steps (inline or from a component file) and command steps.

A node holds what its YAML mapping under ``jobs.<name>`` holds. Settings may be
changed after the node is made (``node.mini_batch_size = "20"``,
``node.resources.instance_count = 3``); each change remembers its call site.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlpipe.diagnostics import Diagnostic, ValidationError, did_you_mean
from mlpipe.sdk.bindings import NodeOutput, Ports, value_to_yaml
from mlpipe.sdk.building import current_builder
from mlpipe.sdk.callsite import call_site
from mlpipe.sdk.entities import (
    JobResourceConfiguration,
    RetrySettings,
    RunFunction,
    environment_value,
)
from mlpipe.sdk.io import Input, Output, PipelineInput
from mlpipe.sdk.paths import relative_to
from mlpipe.sdk.tracking import Emitter, KeyPath, Tracked


class Node(Tracked, ABC):
    """A step of a pipeline (base of :class:`ParallelNode` and :class:`CommandNode`)."""

    kind = "command"

    def __init__(self, *, component: Any = None, name: str | None = None,
                 display_name: str | None = None, description: str | None = None,
                 tags: dict[str, str] | None = None, properties: dict[str, Any] | None = None,
                 experiment_name: str | None = None, compute: str | None = None,
                 environment_variables: dict[str, str] | None = None,
                 resources: Any = None, identity: Any = None,
                 inputs: Mapping[str, Any] | None = None,
                 input_declarations: Mapping[str, Input] | None = None,
                 outputs: Mapping[str, Output | None] | None = None,
                 extra: Mapping[str, Any] | None = None) -> None:
        self.component = component
        self.name = name
        self.display_name = display_name
        self.description = description
        self.tags = dict(tags or {})  # azure-ai-ml's defaults: {} rather than None
        self.properties = dict(properties or {})
        self.experiment_name = experiment_name
        self.compute = compute
        self.environment_variables = environment_variables
        self.resources = JobResourceConfiguration.coerce(resources) or JobResourceConfiguration()
        self.identity = identity
        self._input_decls: dict[str, Input] = dict(input_declarations or {})
        names = self._port_names("input")
        self._inputs = Ports("input", dict(inputs or {}), names, owner=self)
        self._outputs = Ports("output", {
            key: NodeOutput(self, key, decl) for key, decl in (outputs or {}).items()
        }, owner=self)
        self._extra: dict[str, Any] = dict(extra or {})
        self._start_tracking()

    # -- ports -----------------------------------------------------------------------------
    def _port_names(self, kind: str) -> list[str] | None:
        component = self.component
        if isinstance(component, Component):
            return list(component.input_names if kind == "input" else component.output_names)
        declared = self.__dict__.get("_declared_inputs")
        if kind == "input" and declared is not None:
            return list(declared)
        return None

    @property
    def inputs(self) -> Ports:
        return self._inputs

    @property
    def outputs(self) -> Ports:
        return self._outputs

    def set_resources(self, *, instance_type: str | None = None, instance_count: int | None = None,
                      locations: list[str] | None = None, properties: dict[str, Any] | None = None,
                      docker_args: str | None = None, shm_size: str | None = None,
                      **kwargs: Any) -> None:
        """Set ``resources`` like azure-ai-ml's ``node.set_resources(...)``."""
        site = call_site()
        given = dict(instance_type=instance_type, instance_count=instance_count,
                     locations=locations, properties=properties, docker_args=docker_args,
                     shm_size=shm_size, **kwargs)
        for key, value in given.items():
            if value is None:
                continue
            if hasattr(self.resources, key) and not key.startswith("_"):
                setattr(self.resources, key, value)
            else:
                self.resources._extra[key] = value
            self.resources._sites[key] = site

    # -- YAML --------------------------------------------------------------------------------
    def _component_value(self, base: Path) -> Any:
        component = self.component
        if isinstance(component, Component):
            return component.reference(base)
        return component

    def _inputs_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.component is None:
            for key, decl in self._input_decls.items():
                out[key] = inline_input(decl, self._inputs.get(key))
        for key, value in self._inputs.items():
            if key not in out:
                out[key] = value_to_yaml(value)
        return out

    def _outputs_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, port in self._outputs.items():
            if not isinstance(port, NodeOutput):  # replaced: node.outputs.x = Output(...)
                out[key] = value_to_yaml(port)
            elif port._raw is not None:
                out[key] = port._raw
            elif port._pipeline_output is not None:
                out[key] = "${{parent.outputs.%s}}" % port._pipeline_output
            else:
                settings = port.settings()
                if settings or port._declared:
                    out[key] = settings or None
        return out

    @abstractmethod
    def _settings(self) -> dict[str, Any]:
        """The node-kind specific keys, in the order they are written (``None``: left out)."""

    def _body(self) -> dict[str, Any]:
        body = {"inputs": self._inputs_yaml() or None, "outputs": self._outputs_yaml() or None,
                **self._settings()}
        return {key: plain(value) for key, value in body.items() if value is not None}

    def to_dict(self, base: Path, emitter: Emitter | None = None,
                path: KeyPath = ()) -> dict[str, Any]:
        """This node's YAML mapping; relative paths are kept relative to ``base``."""
        head = {
            "type": self.kind if self.__dict__.get("_emit_type", True) else None,
            "display_name": self.display_name,
            "description": self.description, "tags": self.tags or None,
            "properties": self.properties or None,
            "experiment_name": self.experiment_name, "compute": self.compute,
            "component": self._component_value(base),
        }
        data = {key: plain(value) for key, value in head.items() if value not in (None, {})}
        data.update(self._body())
        data.update(plain(self._extra))
        if emitter is not None:
            self._mark(emitter, path, list(data))
        return data

    def _mark(self, emitter: Emitter, path: KeyPath, keys: list[str]) -> None:
        """Record where each part of this node's YAML was written in Python.

        The node call marks the node and its inputs; settings given to
        ``parallel_run_function``/``command`` point at that call; objects
        (``RetrySettings(...)``, ``RunFunction(...)``, ``Output(...)``) at their own
        construction; every attribute changed afterwards at the line that changed it.
        """
        emitter.mark(path, self._origin)
        definition = self.__dict__.get("_definition_site")
        for key in keys:
            if key not in ("inputs", "outputs"):
                emitter.mark(path + (key,), definition)
        for key, decl in self._input_decls.items():
            emitter.mark(path + ("inputs", key), decl._origin)
        for key in self._inputs:
            emitter.mark(path + ("inputs", key), self.__dict__.get("_call_site") or definition)
        for key, port in self._outputs.items():
            emitter.mark_object(path + ("outputs", key), port)
        for attr in ("resources", "retry_settings", "task"):
            value = getattr(self, attr, None)
            if isinstance(value, Tracked):
                emitter.mark_object(path + (attr,), value)
        for attr, site in self._sites.items():
            key = {"_inputs": "inputs"}.get(attr, attr)
            emitter.mark(path + tuple(key.split(".")), site)

    # -- calling ---------------------------------------------------------------------------
    def _check_input_names(self, given: Mapping[str, Any]) -> None:
        names = self._port_names("input")
        if names is None:
            return
        problems = []
        for key in given:
            if key not in names:
                problems.append(Diagnostic(
                    message=f"unknown input {key!r}; declared inputs: {', '.join(names) or 'none'}",
                    key_path=f"inputs.{key}", location=call_site(), code="unknown-key",
                    hint=did_you_mean(key, names)))
        if problems:
            raise ValidationError(problems)

    def _copy_for_call(self) -> Node:
        new = copy.copy(self)
        object.__setattr__(new, "_sites", dict(self._sites))
        for attr in ("resources", "retry_settings", "task"):
            value = getattr(self, attr, None)
            if isinstance(value, Tracked):
                object.__setattr__(new, attr, clone_tracked(value))
        object.__setattr__(new, "_inputs", Ports("input", {
            k: v for k, v in self._inputs.items()}, self._port_names("input"), owner=new))
        outputs = {}
        for key, port in self._outputs.items():
            clone = clone_tracked(port)
            object.__setattr__(clone, "_node", new)
            outputs[key] = clone
        object.__setattr__(new, "_outputs", Ports("output", outputs, owner=new))
        object.__setattr__(new, "_extra", dict(self._extra))
        return new

    def __call__(self, *args: Any, **inputs: Any) -> Node:
        """A new node with ``inputs`` bound; inside ``@pipeline`` it joins the pipeline."""

        _keywords_only(self, args)
        self._check_input_names(inputs)
        node = self._copy_for_call()
        object.__setattr__(node, "_origin", call_site())
        object.__setattr__(node, "_call_site", node._origin)
        object.__setattr__(node, "_template_name", self.name)
        object.__setattr__(node, "_definition_site", self._origin)
        object.__setattr__(node, "name", None)
        node._inputs._values.update(inputs)
        builder = current_builder()
        if builder is not None:
            builder.discard(self)  # a step made in the pipeline and then called is a template
            builder.add(node)
        return node


class ParallelNode(Node):
    """A ``type: parallel`` step (azure-ai-ml's ``Parallel``)."""

    kind = "parallel"

    def __init__(self, *, input_data: str | None = None, mini_batch_size: Any = None,
                 partition_keys: list[str] | str | None = None,
                 max_concurrency_per_instance: Any = None, error_threshold: Any = None,
                 mini_batch_error_threshold: Any = None, logging_level: str | None = None,
                 retry_settings: Any = None, task: RunFunction | Mapping[str, Any] | None = None,
                 is_deterministic: bool | None = None, environment: Any = None,
                 **common: Any) -> None:
        self.input_data = input_data
        self.mini_batch_size = None if mini_batch_size is None else (
            mini_batch_size if isinstance(mini_batch_size, str) else str(mini_batch_size))
        self.partition_keys = partition_keys
        self.max_concurrency_per_instance = max_concurrency_per_instance
        self.error_threshold = error_threshold
        self.mini_batch_error_threshold = mini_batch_error_threshold
        self.logging_level = logging_level
        self.retry_settings = RetrySettings.coerce(retry_settings) or RetrySettings()
        self.task = RunFunction.from_dict(task) if isinstance(task, Mapping) else task
        self.is_deterministic = is_deterministic
        self.environment = environment
        super().__init__(**common)

    def _settings(self) -> dict[str, Any]:
        size = self.mini_batch_size
        return {
            "input_data": self.input_data,
            "mini_batch_size": str(size) if isinstance(size, int) else size,
            "partition_keys": self.partition_keys,
            "resources": _settings_dict(self.resources),
            "max_concurrency_per_instance": self.max_concurrency_per_instance,
            "mini_batch_error_threshold": self.mini_batch_error_threshold,
            "error_threshold": self.error_threshold,
            "logging_level": self.logging_level,
            "retry_settings": _settings_dict(self.retry_settings),
            "environment_variables": self.environment_variables,
            "environment": environment_value(self.environment),
            "identity": self.identity,
            "is_deterministic": self.is_deterministic,
            "task": self.task.to_dict() if isinstance(self.task, RunFunction) else self.task,
        }


class CommandNode(Node):
    """A ``type: command`` step, usually from a component file."""

    kind = "command"

    def __init__(self, *, command: str | None = None, code: str | None = None,
                 environment: Any = None, **common: Any) -> None:
        self.command = command
        self.code = code
        self.environment = environment
        super().__init__(**common)

    def _settings(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "command": self.command,
            "environment": environment_value(self.environment),
            "environment_variables": self.environment_variables,
            "resources": _settings_dict(self.resources),
            "identity": self.identity,
        }


def plain(value: Any) -> Any:
    """``value`` with SDK objects (pipeline parameters, node outputs, Input/Output) as YAML."""
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value_to_yaml(value)


def _settings_dict(value: Any) -> Any:
    """A settings object's mapping, ``None`` when nothing is set (so the key is left out)."""
    if isinstance(value, (RetrySettings, JobResourceConfiguration)):
        return value.to_dict() or None
    return value


def clone_tracked(value: Tracked) -> Any:
    """A shallow copy of ``value`` with its own change records and extra keys."""
    clone = copy.copy(value)
    object.__setattr__(clone, "_sites", dict(value.__dict__.get("_sites", {})))
    extra = value.__dict__.get("_extra")
    if isinstance(extra, dict):
        object.__setattr__(clone, "_extra", dict(extra))
    return clone


def inline_input(decl: Input, value: Any) -> Any:
    """The YAML of an inline step's input: its declaration merged with the bound value."""
    if value is None:
        return decl.to_dict()
    if isinstance(value, (PipelineInput, NodeOutput)):
        if decl.mode is None:
            return value.binding()
        return {"type": decl.type, "path": value.binding(), "mode": decl.mode}
    if isinstance(value, Input):
        merged = decl.to_dict()
        merged.update(value.to_dict())
        if decl.mode and not value.mode:
            merged["mode"] = decl.mode
        return merged
    return value_to_yaml(value)


class Component:
    """A component loaded from a YAML file; call it inside ``@pipeline`` to add a step."""

    def __init__(self, path: Path, data: Mapping[str, Any]) -> None:
        self.path = path.resolve()
        self.data = dict(data)
        self.type = str(self.data.get("type") or "command")
        self.name = self.data.get("name")
        self.display_name = self.data.get("display_name")
        inputs = self.data.get("inputs") or {}
        outputs = self.data.get("outputs") or {}
        self.input_names = list(inputs) if isinstance(inputs, Mapping) else []
        self.output_names = list(outputs) if isinstance(outputs, Mapping) else []

    def reference(self, base: Path) -> str:
        """``file:<path>`` relative to ``base`` when possible."""
        return "file:" + relative_to(self.path, base)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Component) and other.path == self.path

    def __repr__(self) -> str:
        return f"Component({str(self.path)!r}, type={self.type!r})"

    def __call__(self, *args: Any, **inputs: Any) -> Node:
        """A new step using this component with ``inputs`` bound."""

        _keywords_only(self, args)
        node_cls = ParallelNode if self.type == "parallel" else CommandNode
        node = node_cls(component=self)
        if self.type not in ("parallel", "command"):
            object.__setattr__(node, "kind", self.type)  # written as is; the compiler judges it
        object.__setattr__(node, "_origin", call_site())
        node._check_input_names(inputs)
        object.__setattr__(node, "_call_site", node._origin)
        object.__setattr__(node, "_template_name", self.name)
        outputs = {key: NodeOutput(node, key) for key in self.output_names}
        for port in outputs.values():
            object.__setattr__(port, "_origin", node._origin)
        object.__setattr__(node, "_outputs", Ports("output", outputs, owner=node))
        node._inputs._values.update(inputs)
        builder = current_builder()
        if builder is not None:
            builder.add(node)
        return node


def _keywords_only(callee: Any, args: tuple[Any, ...]) -> None:
    """Inputs are bound by name, as in azure-ai-ml: a clear error at the call otherwise."""
    if not args:
        return
    names = list(getattr(callee, "_declared_inputs", None)
                 or getattr(callee, "input_names", None) or [])
    example = ", ".join(f"{name}=..." for name in names[:3]) or "name=value"
    raise ValidationError([Diagnostic(
        f"{getattr(callee, 'name', None) or 'the step'}() takes its inputs as keyword arguments "
        f"({example}), got {len(args)} positional argument{'s' if len(args) != 1 else ''}",
        location=call_site(), code="type")])
