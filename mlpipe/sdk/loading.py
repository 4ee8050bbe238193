"""``load_job`` and ``load_component``: YAML files into SDK objects.

A loaded job keeps every key it was written with, so ``load_job(f).to_dict()``
is the document of ``f``; settings can then be changed in code like on a job
built with ``@pipeline``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlpipe.diagnostics import Diagnostic, Location, ValidationError
from mlpipe.sdk.bindings import NodeOutput, Ports
from mlpipe.sdk.callsite import call_site, caller_dir
from mlpipe.sdk.entities import RunFunction
from mlpipe.sdk.io import Output
from mlpipe.sdk.job import PipelineJob, PipelineJobSettings
from mlpipe.sdk.nodes import CommandNode, Component, Node, ParallelNode
from mlpipe.sdk.tracking import from_file

_PARENT_OUTPUT = re.compile(r"^\$\{\{\s*parent\.outputs\.([A-Za-z0-9_.-]+)\s*\}\}$")


def resolve_source(source: str | os.PathLike[str]) -> Path:
    """A relative path is looked up next to the calling script first, then in the cwd."""
    if not isinstance(source, (str, os.PathLike)):
        raise ValidationError([Diagnostic(
            f"expected the path of a YAML file, got {type(source).__name__} {source!r}",
            location=call_site(), code="type")])
    path = Path(os.fspath(source))
    if path.is_absolute():
        return path
    beside_script = caller_dir() / path
    return beside_script.resolve() if beside_script.exists() else path.resolve()


def read_yaml(path: Path, what: str) -> tuple[dict[str, Any], Any]:
    """The mapping in ``path`` and its positions; a :class:`ValidationError` if unreadable."""
    from mlpipe.schema.yamlio import load_yaml_file

    doc = load_yaml_file(path)
    errors = [d for d in doc.diagnostics if d.severity == "error"]
    if doc.data is None or errors:
        raise ValidationError(errors or [Diagnostic(f"cannot read {what} file",
                                                    location=Location(str(path)))])
    return doc.data, doc.positions


def _override(data: dict[str, Any], params_override: list[Mapping[str, Any]] | None) -> None:
    """Apply azure-ai-ml's ``params_override``: ``[{"dotted.key.path": value}, ...]``."""
    for mapping in params_override or []:
        for dotted, value in mapping.items():
            target = data
            *parents, last = str(dotted).split(".")
            for part in parents:
                child = target.get(part)
                if not isinstance(child, dict):
                    child = target[part] = {}
                target = child
            target[last] = value


def load_job(source: str | os.PathLike[str], *, relative_origin: str | None = None,
             params_override: list[Mapping[str, Any]] | None = None,
             **kwargs: Any) -> PipelineJob:
    """Read a pipeline job YAML (azure-ai-ml's ``load_job``); relative paths stay relative to it.

    ``params_override`` (``[{"settings.default_compute": "x"}]``) changes keys after reading.
    """
    path = resolve_source(source)
    data, positions = read_yaml(path, "job")
    _override(data, params_override)
    if data.get("type", "pipeline") != "pipeline":
        raise ValidationError([Diagnostic(
            f"load_job reads pipeline jobs; this file is type {data.get('type')!r}",
            key_path="type", location=positions.locate(("type",)), code="unsupported",
            hint="standalone parallel/command jobs: wrap them in a pipeline")])
    with from_file():
        return job_from_dict(data, base_path=path.parent, source=path, positions=positions)


def job_from_dict(data: Mapping[str, Any], *, base_path: Path, source: Path | None = None,
                  positions: Any = None) -> PipelineJob:
    """A :class:`PipelineJob` holding exactly the keys of ``data``."""
    known = {"type", "name", "display_name", "description", "experiment_name", "tags",
             "properties", "settings", "inputs", "outputs", "jobs"}
    extra = {key: value for key, value in data.items() if key not in known}
    settings = data.get("settings")
    # A section of the wrong shape is kept as written, for validation to report.
    misshapen = {key: data[key] for key in ("inputs", "outputs", "jobs")
                 if data.get(key) is not None and not isinstance(data[key], Mapping)}
    outputs = {} if "outputs" in misshapen else data.get("outputs") or {}
    jobs = {} if "jobs" in misshapen else data.get("jobs") or {}
    job = PipelineJob(
        name=data.get("name"), display_name=data.get("display_name"),
        description=data.get("description"), experiment_name=data.get("experiment_name"),
        tags=data.get("tags"), properties=data.get("properties"),
        settings=PipelineJobSettings(**settings) if isinstance(settings, Mapping) else None,
        inputs={} if "inputs" in misshapen else dict(data.get("inputs") or {}),
        outputs={key: (Output(**{"type": None, **value}) if isinstance(value, Mapping)
                       else value) for key, value in outputs.items()},
        jobs={key: node_from_dict(key, value) for key, value in jobs.items()},
        base_path=base_path, source=source, extra=extra, yaml_positions=positions)
    if settings is not None and not isinstance(settings, Mapping):
        job._extra["settings"] = settings
    job._extra.update(misshapen)
    return job


_PARALLEL_KEYS = ("input_data", "mini_batch_size", "partition_keys",
                  "max_concurrency_per_instance", "error_threshold",
                  "mini_batch_error_threshold", "logging_level", "retry_settings", "task",
                  "is_deterministic", "environment")
_COMMAND_KEYS = ("command", "code", "environment")
_COMMON_KEYS = ("component", "display_name", "description", "tags", "properties",
                "experiment_name", "compute", "environment_variables", "resources", "identity")


def node_from_dict(name: str, data: Any) -> Node | Any:
    """An SDK node for a ``jobs.<name>`` mapping (kept as is when it is not a mapping)."""
    if not isinstance(data, Mapping):
        return data
    kind = data.get("type")
    cls, own = ((ParallelNode, _PARALLEL_KEYS) if kind == "parallel" else
                (CommandNode, _COMMAND_KEYS) if kind in (None, "command") else (None, ()))
    if cls is None:
        return RawNode(name, data)
    kwargs = {key: data[key] for key in (*own, *_COMMON_KEYS) if key in data}
    if kind == "parallel" and isinstance(kwargs.get("task"), Mapping):
        task = dict(kwargs["task"])
        kwargs["task"] = RunFunction(type=task.pop("type", None), **task)
    extra = {key: value for key, value in data.items()
             if key not in (*own, *_COMMON_KEYS, "type", "inputs", "outputs", "name")}
    if "name" in data:
        extra["name"] = data["name"]
    node = cls(name=name, extra=extra, **kwargs)
    object.__setattr__(node, "_emit_type", kind is not None)
    inputs = data.get("inputs")
    if isinstance(inputs, Mapping):
        node._inputs._values.update(inputs)
    elif inputs is not None:
        node._extra["inputs"] = inputs
    outputs = data.get("outputs")
    if isinstance(outputs, Mapping):
        ports: dict[str, NodeOutput] = {}
        for key, value in outputs.items():
            if isinstance(value, Mapping):
                port = NodeOutput(node, key, Output(**{"type": None, **value}))
            else:
                port = NodeOutput(node, key, Output(type=None))
                match = _PARENT_OUTPUT.match(value) if isinstance(value, str) else None
                if match:
                    port._pipeline_output = match.group(1)
                elif value is not None:
                    port._raw = value
            ports[key] = port
        object.__setattr__(node, "_outputs", Ports("output", ports, owner=node))
    elif outputs is not None:
        node._extra["outputs"] = outputs
    return node


class RawNode:
    """A step of a kind the SDK does not model (kept as written; the compiler judges it)."""

    def __init__(self, name: str, data: Mapping[str, Any]) -> None:
        self.name = name
        self.data = dict(data)
        self._origin = None
        self._sites: dict[str, Any] = {}

    def to_dict(self, base: Path, emitter: Any = None, path: Any = ()) -> dict[str, Any]:
        return dict(self.data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RawNode) and other.data == self.data


def _is_pipeline_component(data: Mapping[str, Any]) -> bool:
    """A ``type: pipeline`` file that is a component: the pipelineComponent ``$schema``, or
    a ``name`` without the job-only keys."""
    schema = str(data.get("$schema") or "").lower()
    if "pipelinecomponent" in schema:
        return True
    return ("pipelinejob" not in schema and "name" in data
            and not any(key in data for key in ("settings", "experiment_name", "compute")))


def load_component(source: str | os.PathLike[str] | None = None, *,
                   relative_origin: str | None = None,
                   params_override: list[Mapping[str, Any]] | None = None,
                   **kwargs: Any) -> Component:
    """Read a component YAML; calling the result inside ``@pipeline`` adds a step using it."""
    if source is None:
        source = kwargs.pop("path", None)
    if source is None:
        raise ValidationError([Diagnostic("load_component() needs a source file",
                                          location=call_site(), code="usage")])
    path = resolve_source(source)
    data, positions = read_yaml(path, "component")
    _override(data, params_override)
    if (data.get("type") == "pipeline" or "jobs" in data) and not _is_pipeline_component(data):
        raise ValidationError([Diagnostic(
            "load_component reads component files (type: parallel, command, or a pipeline "
            "component); this file is a pipeline job", key_path="type",
            location=positions.locate(("type",)), code="unsupported",
            hint="use load_job() for pipeline jobs")])
    return Component(path, data)

