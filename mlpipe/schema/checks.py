"""Rules that span several keys, checked on the plain data so every problem is reported
even where pydantic stopped early; and the "ignored when running locally" warnings."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from mlpipe.diagnostics import Diagnostic, did_you_mean
from mlpipe.schema.bindings import binding_problems, is_binding
from mlpipe.schema.command import CommandNode
from mlpipe.schema.compute import (
    MpiDistribution,
    PyTorchDistribution,
    RayDistribution,
    Resources,
    TensorFlowDistribution,
)
from mlpipe.schema.parallel import ParallelNode, ParallelTask, RetrySettings
from mlpipe.schema.pipeline import PipelineNode, PipelineSettings, step_kind
from mlpipe.schema.yamlio import KeyPath, PositionMap, format_key_path

# key -> parent key it must sit under (None: directly on a job, step or component).
CLOUD_ONLY_KEYS: dict[str, str | None] = {
    "instance_type": "resources",
    "shm_size": "resources",
    "docker_args": "resources",
    "max_instance_count": "resources",
    "locations": "resources",
    "properties": "resources",
    "identity": None,
    "distribution": None,
    "services": None,
    "queue_settings": None,
}


def _error(message: str, path: KeyPath, positions: PositionMap, code: str,
           hint: str | None = None, at_parent: bool = False) -> Diagnostic:
    location = positions.locate(path[:-1] if at_parent else path)
    return Diagnostic(message, key_path=format_key_path(path), location=location,
                      code=code, hint=hint)


def check_task(task: Any, path: KeyPath, positions: PositionMap) -> list[Diagnostic]:
    """``task``: one spelling of the arguments; an entry script for function tasks."""
    out: list[Diagnostic] = []
    if not isinstance(task, dict):
        return out
    if "args" in task and "program_arguments" in task:
        out.append(_error("give either 'program_arguments' or the legacy 'args', not both",
                          path + ("args",), positions, "conflict"))
    kind = task.get("type", "run_function")
    if isinstance(kind, str) and kind.lower() in ("run_function", "function") \
            and not task.get("entry_script"):
        out.append(_error("required key 'entry_script' is missing", path + ("entry_script",),
                          positions, "missing", at_parent=True,
                          hint="the Python file that defines init() and run(mini_batch)"))
    return out


# Run settings of a parallel component: azure-ai-ml's component schema reads them as written
# (no binding), only a step may bind them.
COMPONENT_SETTINGS: tuple[KeyPath, ...] = (
    ("mini_batch_size",), ("max_concurrency_per_instance",), ("error_threshold",),
    ("mini_batch_error_threshold",), ("logging_level",), ("partition_keys",),
    ("resources", "instance_count"), ("retry_settings", "max_retries"),
    ("retry_settings", "timeout"))


def check_component_settings(obj: dict[str, Any], path: KeyPath,
                             positions: PositionMap) -> list[Diagnostic]:
    """A parallel component's run settings are values: a binding there is an error."""
    out = []
    for keys in COMPONENT_SETTINGS:
        value: Any = obj
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if is_binding(value):
            name = ".".join(map(str, keys))
            out.append(_error(
                f"a component's {name} cannot be a binding ({value.strip()}): azure-ai-ml reads "
                "it as written and rejects it", path + keys, positions, "binding",
                hint=f"write the value here, or bind it on the step that uses the component "
                     f"({name}: ${{{{parent.inputs.<name>}}}})"))
    return out


def check_parallel(obj: dict[str, Any], path: KeyPath, positions: PositionMap,
                   inline: bool, component: bool = False) -> list[Diagnostic]:
    """A parallel step (``inline``: without ``component:``), or a parallel ``component``."""
    out: list[Diagnostic] = check_component_settings(obj, path, positions) if component else []
    if inline:
        for key in ("task", "input_data"):
            if key not in obj:
                out.append(_error(f"required key '{key}' is missing", path + (key,), positions,
                                  "missing", at_parent=True))
    if "task" in obj:
        out.extend(check_task(obj["task"], path + ("task",), positions))
    return out


def _required(keys: tuple[str, ...], what: str) -> Callable[
        [dict[str, Any], KeyPath, PositionMap, bool, bool], list[Diagnostic]]:
    """Keys a component of that type, or a step of it without ``component:``, must have."""

    def check(obj: dict[str, Any], path: KeyPath, positions: PositionMap,
              inline: bool, component: bool = False) -> list[Diagnostic]:
        return [_error(f"required key '{key}' is missing{what}", path + (key,), positions,
                       "missing", at_parent=True)
                for key in keys if inline and key not in obj]

    return check


# azure-ai-ml's DataTransferImport/Export._customized_validate: the data type an import's sink
# or an export's source must have, by the external store's type
_STORE_DATA_TYPES = {"database": ("uri_file", "mltable"), "file_system": ("uri_folder",
                                                                          "uri_folder")}


def check_data_transfer(obj: dict[str, Any], path: KeyPath, positions: PositionMap,
                        inline: bool, is_component: bool) -> list[Diagnostic]:
    """An export's ``inputs.source`` (a mapping) is ``uri_file`` for a database sink and
    ``uri_folder`` for a file system; an import's ``outputs.sink`` is ``mltable`` for a
    database source and ``uri_folder`` for a file system (an unset type is ``uri_folder``, as
    azure-ai-ml reads it)."""
    task = str(obj.get("task", "")).lower()
    side, store_key, port_key, port = {
        "export_data": (0, "sink", "inputs", "source"),
        "import_data": (1, "source", "outputs", "sink")}.get(task, (None, "", "", ""))
    store, ports = obj.get(store_key), obj.get(port_key)
    if side is None or not isinstance(store, dict) or not isinstance(ports, dict):
        return []
    wanted = _STORE_DATA_TYPES.get(str(store.get("type", "")).lower())
    given = ports.get(port)
    if wanted is None or not isinstance(given, dict):
        return []  # a binding string: its type is the bound port's
    actual = str(given.get("type") or "uri_folder").lower()
    if actual == wanted[side]:
        return []
    where = path + (port_key, port, "type") if "type" in given else path + (port_key, port)
    store_type = str(store.get("type")).lower()
    return [_error(f"{port_key}.{port} of an {task} step with a {store_type} {store_key} must be "
                   f"{wanted[side]}, got {actual}: azure-ai-ml refuses it (a database takes "
                   f"{_STORE_DATA_TYPES['database'][side]}, a file system "
                   f"{_STORE_DATA_TYPES['file_system'][side]})", where, positions, "type",
                   hint=f"type: {wanted[side]}")]


_STEP_CHECKS: dict[str, Callable[[dict[str, Any], KeyPath, PositionMap, bool, bool],
                                 list[Diagnostic]]] = {
    "data_transfer": check_data_transfer,
    "parallel": check_parallel,
    "command": _required(("command",), ""),
    "spark": _required(("entry",), " (a Spark step without 'component' runs this entry)"),
    "import": _required(("source", "output"), " (an import step without 'component' "
                                              "imports this source)"),
}


def _kind(obj: dict[str, Any]) -> str | None:
    kind = obj.get("type")
    return kind.lower() if isinstance(kind, str) else None


def check_job(data: dict[str, Any], positions: PositionMap, kind: str) -> list[Diagnostic]:
    """The keys a standalone job of type ``kind`` must have (a step's, without ``component:``)."""
    check = _STEP_CHECKS.get(kind)
    return check(data, (), positions, "component" not in data, False) if check else []


def check_component(data: dict[str, Any], positions: PositionMap,
                    prefix: KeyPath = ()) -> list[Diagnostic]:
    kind = _kind(data) if "type" in data else "command"  # azure-ai-ml's default
    check = _STEP_CHECKS.get(kind or "")
    out = check(data, prefix, positions, True, True) if check is not None else []
    if data.get("compute") is not None:
        out.append(Diagnostic("a component's 'compute' is not used: the step that uses the "
                              "component runs on its own compute (or settings.default_compute)",
                              key_path=format_key_path(prefix + ("compute",)),
                              location=positions.locate(prefix + ("compute",)),
                              severity="warning", code="component-compute",
                              hint="set compute on the step or the pipeline"))
    return out


def check_pipeline(data: dict[str, Any], positions: PositionMap,
                   prefix: KeyPath = ()) -> list[Diagnostic]:
    """The steps of a pipeline job or pipeline component, inline pipeline components too."""
    out: list[Diagnostic] = []
    jobs = data.get("jobs")
    if not isinstance(jobs, dict):
        return out
    for name, node in jobs.items():
        if not isinstance(node, dict):
            continue
        path: KeyPath = prefix + ("jobs", name)
        component = node.get("component")
        inline = component is None
        kind = step_kind(node)
        check = _STEP_CHECKS.get(kind or "")
        out.extend(bound_output_mappings(node, path, positions))
        out.extend(passed_through_keys(node, path, positions, kind))
        if isinstance(component, dict) and kind != "pipeline":
            out.extend(dropped_component_extras(component, positions, path + ("component",),
                                                _kind(component) or kind))
        if check is not None:
            out.extend(check(node, path, positions, inline, False))
            if isinstance(component, dict):
                out.extend(check(component, path + ("component",), positions, True, True))
        elif kind == "pipeline" and isinstance(component, dict):
            out.extend(check_pipeline(component, positions, path + ("component",)))
    return out


# The steps that use a component, by type: azure-ai-ml's node schemas (BaseNodeSchema) keep
# keys they do not know and send them to the service with the step.
_COMPONENT_NODES: dict[str, type[BaseModel]] = {
    "command": CommandNode, "parallel": ParallelNode, "pipeline": PipelineNode}


def passed_through_keys(node: dict[str, Any], path: KeyPath, positions: PositionMap,
                        kind: str | None) -> list[Diagnostic]:
    """Keys a step that uses a ``component:`` does not have (``additional_override: {...}``):
    azure-ai-ml loads them and submits them with the step unchecked, so they are taken out
    with a warning each (no effect on a local run). A step written inline (``command:``
    without ``component:``) refuses them, as azure-ai-ml's job schemas do."""
    model = _COMPONENT_NODES.get(kind or "")
    if model is None or "component" not in node:
        return []
    known = {field.alias or name for name, field in model.model_fields.items()}
    extras = [k for k in node if isinstance(k, str) and k not in known]
    out = []
    for key in extras:
        where = path + (key,)
        out.append(Diagnostic(
            f"unknown key '{key}': azure-ai-ml sends it to the service with the step "
            "unchecked (a step that uses a component keeps keys it does not know); it has no "
            "effect on a local run", key_path=format_key_path(where),
            location=positions.locate(where), severity="warning", code="passed-key",
            hint=did_you_mean(key, sorted(known))))
        del node[key]
    return out


# azure-ai-ml's OutputBindingStr (ComponentJobConstants.OUTPUT_PATTERN)
_PARENT_OUTPUT = re.compile(r"^\$\{\{parent\.outputs\.(.*?)\}\}$")


def bound_output_mappings(node: dict[str, Any], path: KeyPath,
                          positions: PositionMap) -> list[Diagnostic]:
    """A step output written as a mapping whose ``path`` is ``${{parent.outputs.x}}`` and
    that has no ``mode``, ``name`` or ``version``: azure-ai-ml reads it as the binding alone
    (its ``OutputBindingStr``) and drops every other key (``type``, ``uri``, ...) from the job
    it submits, so it is the binding here too, with a warning per dropped key."""
    outputs = node.get("outputs")
    if not isinstance(outputs, dict):
        return []
    out: list[Diagnostic] = []
    for name, value in outputs.items():
        if not (isinstance(value, dict) and isinstance(value.get("path"), str)
                and _PARENT_OUTPUT.match(value["path"].strip())
                and not {"mode", "name", "version"} & set(value)):
            continue
        for key in [k for k in value if k != "path"]:
            where = path + ("outputs", name, key)
            out.append(Diagnostic(
                f"'{key}' beside a binding path without mode, name or version: azure-ai-ml "
                f"reads this output as the binding {value['path'].strip()} alone and leaves "
                f"'{key}' out of the job it submits, so it has no effect",
                key_path=format_key_path(where), location=positions.locate(where),
                severity="warning", code="dropped-key",
                hint="write the output as the binding string, or add its mode to keep "
                     "the mapping"))
        outputs[name] = value["path"]
    return out


def _owners(data: dict[str, Any], is_pipeline: bool,
            prefix: KeyPath = ()) -> list[tuple[KeyPath, dict[str, Any]]]:
    """The mappings that are a job, a step or a component (inline pipeline components too)."""
    owners: list[tuple[KeyPath, dict[str, Any]]] = [(prefix, data)]
    if is_pipeline and isinstance(data.get("jobs"), dict):
        for name, node in data["jobs"].items():
            if isinstance(node, dict):
                path = prefix + ("jobs", name)
                owners.append((path, node))
                component = node.get("component")
                if isinstance(component, dict):
                    owners.extend(_owners(component, _kind(component) == "pipeline",
                                          path + ("component",)))
    return owners


def cloud_only_warnings(data: dict[str, Any], positions: PositionMap,
                        is_pipeline: bool) -> list[Diagnostic]:
    """One "ignored when running locally" warning per cloud-only key (first place it appears)."""
    found: dict[str, list[KeyPath]] = {}
    for path, owner in _owners(data, is_pipeline):
        for key, parent in CLOUD_ONLY_KEYS.items():
            container = owner.get(parent) if parent else owner
            if isinstance(container, dict) and key in container:
                found.setdefault(key, []).append(path + ((parent,) if parent else ()) + (key,))
    out = []
    for key, paths in found.items():
        more = (f" (and {len(paths) - 1} more place{'s' if len(paths) > 2 else ''})"
                if len(paths) > 1 else "")
        what = "is ignored when running locally"
        if key == "distribution" and all(_is_command(data, path) for path in paths):
            what = (f"runs here as one process{more}: rank 0 of a world of one, with the "
                    "launcher's variables (WORLD_SIZE=1, RANK=0, a TF_CONFIG of one worker)")
            more = ""
        out.append(Diagnostic(f"'{key}' {what}{more}",
                              key_path=format_key_path(paths[0]),
                              location=positions.locate(paths[0]), severity="warning",
                              code="cloud-only"))
    return out


def _is_command(data: dict[str, Any], path: KeyPath) -> bool:
    """Whether the mapping holding the key at ``path`` is a command (step or component)."""
    owner: Any = data
    for part in path[:-1]:
        owner = owner.get(part) if isinstance(owner, dict) else None
    return isinstance(owner, dict) and (_kind(owner) == "command"
                                        or (_kind(owner) is None and "command" in owner))


def is_cloud_only_key(diagnostic: Diagnostic) -> bool:
    """An "unknown key" error for a cloud-only key in its place (``distribution`` on a
    parallel step): the key gets its one "ignored when running locally" warning instead,
    as Azure ML accepts it there (pipeline nodes keep unknown keys)."""
    if diagnostic.code != "unknown-key" or not diagnostic.key_path:
        return False
    parts = diagnostic.key_path.split(".")
    key = parts[-1]
    if key not in CLOUD_ONLY_KEYS:
        return False
    parent = CLOUD_ONLY_KEYS[key]
    return parent is None or (len(parts) > 1 and parts[-2] == parent)


def unknown_settings(data: dict[str, Any], positions: PositionMap) -> list[Diagnostic]:
    """A pipeline job's ``settings`` keys Azure ML does not know, taken out of ``data`` with a
    warning each: azure-ai-ml keeps them aside and never sends them, so the cloud job runs
    as if they were not there (``default_datestore`` is a typo a published pipeline makes)."""
    settings = data.get("settings")
    if not isinstance(settings, dict):
        return []
    known = list(PipelineSettings.model_fields)
    out = []
    for key in [k for k in settings if isinstance(k, str) and k not in known]:
        path = ("settings", key)
        out.append(Diagnostic(f"unknown key '{key}': azure-ai-ml keeps it out of the job it "
                              "submits, so it has no effect", key_path=format_key_path(path),
                              location=positions.locate(path), severity="warning",
                              code="unknown-setting", hint=did_you_mean(key, known)))
    if out:
        data["settings"] = {k: v for k, v in settings.items() if k in known}
    return out


_DISTRIBUTIONS = {"pytorch": PyTorchDistribution, "mpi": MpiDistribution,
                  "tensorflow": TensorFlowDistribution, "ray": RayDistribution}

# The blocks of a component azure-ai-ml's component schema loads with whatever keys they have
# and submits without the ones it does not know (its job and node schemas refuse those).
_LENIENT_BLOCKS: dict[str, dict[str, Callable[[dict[str, Any]], Any]]] = {
    "command": {"resources": lambda block: Resources,
                "distribution": lambda block: _DISTRIBUTIONS.get(
                    str(block.get("type", "")).lower())},
    "parallel": {"resources": lambda block: Resources,
                 "retry_settings": lambda block: RetrySettings,
                 "task": lambda block: ParallelTask},
}


def dropped_component_extras(data: dict[str, Any], positions: PositionMap,
                             prefix: KeyPath = (), kind: str | None = None) -> list[Diagnostic]:
    """Keys of a component's lenient blocks (:data:`_LENIENT_BLOCKS`) that they do not have,
    in a file or an inline ``component:`` mapping at ``prefix``, taken out of ``data`` with a
    warning each: azure-ai-ml loads them and leaves them out of the job it submits, so they
    have no effect in the cloud and none here. (Whole keys it drops are
    ``submission.DROPPED_COMPONENT_KEYS``.)"""
    out: list[Diagnostic] = []
    kind = kind or _kind(data) or "command"
    for key, model_of in _LENIENT_BLOCKS.get(kind, {}).items():
        block = data.get(key)
        if not isinstance(block, dict):
            continue
        model = model_of(block)
        if model is None:
            continue
        known = [field.alias or name for name, field in model.model_fields.items()]
        extras = [k for k in block if isinstance(k, str) and k not in known]
        for extra in extras:
            path = prefix + (key, extra)
            out.append(Diagnostic(
                f"unknown key '{extra}' in a component's {key}: azure-ai-ml loads it and leaves "
                "it out of the job it submits, so it has no effect",
                key_path=format_key_path(path), location=positions.locate(path),
                severity="warning", code="dropped-key", hint=did_you_mean(extra, known)))
        if extras:
            data[key] = {k: v for k, v in block.items() if k not in extras}
    return out


# Keys whose text is never read for bindings (free text, tags, an inline conda file).
NO_BINDINGS = frozenset({"description", "display_name", "tags", "properties", "$schema",
                         "environment", "conf"})


def binding_syntax(data: Any, positions: PositionMap, path: KeyPath = ()) -> list[Diagnostic]:
    """An error at its line and column for each broken binding (an unclosed ``${{``, a ``}}``
    without its opener, an empty ``${{}}``) in every string where bindings are read.

    The walk keeps its own stack and visits each mapping or list once, so data of any depth
    or sharing (YAML aliases, values set by ``--set``) never exhausts Python's stack."""
    out: list[Diagnostic] = []
    seen: set[int] = set()
    stack: list[tuple[Any, KeyPath]] = [(data, path)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, (dict, list)):
            if id(value) in seen:
                continue
            seen.add(id(value))
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend((item, where + (key,)) for key, item in reversed(list(items))
                         if not (isinstance(value, dict) and key in NO_BINDINGS))
        elif isinstance(value, str):
            for problem in binding_problems(value):
                out.append(Diagnostic(problem.message, key_path=format_key_path(where),
                                      location=positions.locate_in_value(where, value,
                                                                         problem.offset),
                                      code="binding", hint=problem.hint))
    return out
