"""What Azure ML rejects when a job or component is submitted, beyond the shape the models
check: names, case-sensitive types, required keys, compute, tags, input syntax.

The rules follow azure-ai-ml's schemas (``_schema/component``, ``_schema/pipeline``):
component names match ``^[a-z][a-z0-9_]*$``, step names ``^[a-z_][a-z0-9_]*$``,
component input/output ``type`` and ``mode`` are compared case-sensitively, a parallel
``task`` needs ``type`` and ``environment``, a command needs an ``environment``,
``settings.default_compute`` is an ``azureml:`` reference (or ``serverless``), so is
``settings.default_datastore``, tag values
are strings, and job inputs take values (``default`` is component syntax).

``mlpipe job validate`` reports every rule as an error. A local run (``mlpipe job
create``) needs only some of them: the service-only rules (:data:`SERVICE_ONLY`) become
one warning each there (:func:`for_local_run`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from mlpipe.diagnostics import Diagnostic
from mlpipe.schema.yamlio import KeyPath, PositionMap, format_key_path

COMPONENT_NAME = re.compile(r"^[a-z][a-z\d_]*$")  # azure-ai-ml PythonFuncNameStr
NODE_NAME = re.compile(r"^[a-z_][a-z\d_]*$")  # azure-ai-ml is_valid_node_name
PORT_TYPES = ("uri_file", "uri_folder", "mltable", "mlflow_model", "custom_model",
              "triton_model", "path")
PARAM_TYPES = ("string", "integer", "number", "boolean")
MODES = ("ro_mount", "rw_mount", "download", "upload", "direct", "eval_mount", "eval_download",
         "mount", "link")
EVAL_MODES = ("eval_mount", "eval_download")
REJECTS = "Azure ML rejects this at submission"

# Rules that only the service needs: a local run warns about them (once per rule).
SERVICE_ONLY = frozenset({"azure-compute", "azure-environment", "azure-name", "azure-task-type",
                          "azure-tags", "azure-reference"})


class _Rules:
    """Collects the problems of one document (a pipeline job or a component)."""

    def __init__(self, positions: PositionMap):
        self.positions = positions
        self.out: list[Diagnostic] = []

    def reject(self, path: KeyPath, code: str, problem: str, fix: str,
               at_parent: bool = False) -> None:
        where = path[:-1] if at_parent else path
        self.out.append(Diagnostic(f"{problem}: {REJECTS}", key_path=format_key_path(path),
                                   location=self.positions.locate(where), code=code, hint=fix))

    # -- documents ------------------------------------------------------------------------

    def pipeline_job(self, data: dict[str, Any]) -> None:
        self.tags(data, ())
        settings = data.get("settings")
        settings = settings if isinstance(settings, dict) else {}
        compute = settings.get("default_compute")
        if isinstance(compute, str) and compute != "serverless" \
                and not compute.startswith("azureml:"):
            self.reject(("settings", "default_compute"), "azure-reference",
                        f"settings.default_compute '{compute}' is not an azureml: reference",
                        f"write 'azureml:{compute}' (or 'serverless')")
        datastore = settings.get("default_datastore")
        if isinstance(datastore, str) and not datastore.startswith("azureml:"):
            self.reject(("settings", "default_datastore"), "azure-reference",
                        f"settings.default_datastore '{datastore}' is not an azureml: reference",
                        f"write 'azureml:{datastore}'")
        inputs = data.get("inputs")
        for name, value in inputs.items() if isinstance(inputs, dict) else []:
            if isinstance(value, dict):
                self.eval_mode(value, ("inputs", name))
            if isinstance(value, dict) and "default" in value:
                self.reject(("inputs", name, "default"), "azure-input-default",
                            "a pipeline job input takes a value; 'default' is component syntax",
                            _value_fix(name, value))
        if isinstance(data.get("jobs"), dict) and data["jobs"] and not _has_compute(data):
            self.reject(("jobs",), "azure-compute",
                        "no compute: no step sets 'compute' and there is no "
                        "settings.default_compute",
                        "set settings.default_compute: azureml:<cluster> (or 'serverless')")
        self.jobs(data, ())

    def component(self, data: dict[str, Any], path: KeyPath, standalone: bool) -> None:
        name = data.get("name")
        if name is None and standalone:
            self.reject(path + ("name",), "azure-name",
                        "a component needs a 'name'", "add name: <lower_case_name>",
                        at_parent=True)
        elif isinstance(name, str) and not COMPONENT_NAME.match(name):
            fixed = re.sub(r"[^a-z0-9_]", "_", name.lower()).lstrip("_0123456789") or "component"
            self.reject(path + ("name",), "azure-name",
                        f"component name '{name}' must match {COMPONENT_NAME.pattern} (lower-case "
                        "letters, digits and '_', starting with a letter)", f"write '{fixed}'")
        self.tags(data, path)
        for key in ("inputs", "outputs"):
            decls = data.get(key)
            for port, decl in decls.items() if isinstance(decls, dict) else []:
                if isinstance(decl, dict):
                    self.declaration(decl, path + (key, port), key == "inputs")
        kind = data.get("type")
        if kind == "parallel":
            self.parallel(data, path)
        elif kind == "command":
            self.command(data, path)
        elif kind == "pipeline":
            self.jobs(data, path)

    # -- pieces ---------------------------------------------------------------------------

    def declaration(self, decl: dict[str, Any], path: KeyPath, is_input: bool) -> None:
        kind, mode = decl.get("type"), decl.get("mode")
        allowed = PORT_TYPES + (PARAM_TYPES if is_input else ())
        if isinstance(kind, str) and kind not in allowed and kind.lower() in allowed:
            self.reject(path + ("type",), "azure-type-case",
                        f"type '{kind}': component input and output types are case-sensitive",
                        f"write '{kind.lower()}'")
        if isinstance(mode, str) and mode not in MODES and mode.lower() in MODES:
            self.reject(path + ("mode",), "azure-type-case",
                        f"mode '{mode}': modes are case-sensitive", f"write '{mode.lower()}'")
        self.eval_mode(decl, path)

    def eval_mode(self, value: dict[str, Any], path: KeyPath, kind: Any = None) -> None:
        mode = value.get("mode")
        kind = value.get("type") or kind
        if isinstance(mode, str) and mode.lower() in EVAL_MODES and isinstance(kind, str) \
                and kind.lower() != "mltable":
            self.reject(path + ("mode",), "azure-eval-mode",
                        f"mode '{mode}' applies only to mltable inputs, not {kind}",
                        "use ro_mount or download, or make the input an mltable")

    def tags(self, data: dict[str, Any], path: KeyPath) -> None:
        tags = data.get("tags")
        for key, value in tags.items() if isinstance(tags, dict) else []:
            if not isinstance(value, str):
                shown = ("true" if value else "false") if isinstance(value, bool) else value
                what = "no value" if value is None else f"a {type(value).__name__} value"
                fix = ("give it a quoted value or remove it" if value is None
                       else f"quote it: '{shown}'")
                self.reject(path + ("tags", key), "azure-tags",
                            f"tag '{key}' has {what}; tag values are strings", fix)

    def jobs(self, data: dict[str, Any], path: KeyPath) -> None:
        jobs = data.get("jobs")
        for name, node in jobs.items() if isinstance(jobs, dict) else []:
            here = path + ("jobs", name)
            if isinstance(name, str) and not NODE_NAME.match(name):
                self.reject(here, "azure-name",
                            f"step name '{name}' must match {NODE_NAME.pattern} (lower-case "
                            "letters, digits and '_')", f"rename it '{name.lower()}'")
            if isinstance(node, dict):
                self.node(node, here)

    def node(self, node: dict[str, Any], path: KeyPath) -> None:
        self.tags(node, path)
        component = node.get("component")
        decls = component.get("inputs") if isinstance(component, dict) else None
        inputs = node.get("inputs")
        for name, value in inputs.items() if isinstance(inputs, dict) else []:
            if isinstance(value, dict) and "default" in value and "path" not in value:
                self.reject(path + ("inputs", name, "default"), "azure-input-default",
                            "a step input takes a value or a binding; {type, default} is "
                            "component syntax", _value_fix(name, value))
            if isinstance(value, dict):
                decl = decls.get(name) if isinstance(decls, dict) else None
                self.eval_mode(value, path + ("inputs", name),
                               decl.get("type") if isinstance(decl, dict) else None)
        if isinstance(component, dict):
            self.component(component, path + ("component",), standalone=False)
        elif component is None and node.get("type") == "parallel":
            self.parallel(node, path)
        elif component is None and node.get("type") == "command":
            self.command(node, path)

    def parallel(self, obj: dict[str, Any], path: KeyPath) -> None:
        task = obj.get("task")
        if not isinstance(task, dict):
            return
        if "type" not in task:
            self.reject(path + ("task", "type"), "azure-task-type",
                        "a parallel task needs a 'type'", "add type: run_function",
                        at_parent=True)
        if task.get("environment") is None and obj.get("environment") is None:
            self.reject(path + ("task", "environment"), "azure-environment",
                        "a parallel task needs an 'environment'",
                        "add environment: azureml:<name>:<version> (or an image and "
                        "conda_file) under task", at_parent=True)

    def command(self, obj: dict[str, Any], path: KeyPath) -> None:
        if obj.get("environment") is None:
            self.reject(path + ("environment",), "azure-environment",
                        "a command needs an 'environment'",
                        "add environment: azureml:<name>:<version> (or an image and conda_file)",
                        at_parent=True)


def _value_fix(name: Any, value: dict[str, Any]) -> str:
    default = value.get("default")
    kind = value.get("type")
    if isinstance(kind, str) and kind.lower() in PARAM_TYPES:
        return f"write '{name}: {default}' or '{{type: {kind}, value: {default}}}'"
    return f"write '{name}: {{type: {kind or 'uri_folder'}, path: {default}}}'"


def _has_compute(data: dict[str, Any]) -> bool:
    """A pipeline-level compute, or a ``compute`` on any step (inline components too)."""
    settings = data.get("settings")
    if isinstance(settings, dict) and settings.get("default_compute"):
        return True
    if data.get("compute"):
        return True
    jobs = data.get("jobs")
    for node in jobs.values() if isinstance(jobs, dict) else []:
        if isinstance(node, dict) and (node.get("compute") or (
                isinstance(node.get("component"), dict) and _has_compute(node["component"]))):
            return True
    return False


def pipeline_rules(data: Any, positions: PositionMap) -> list[Diagnostic]:
    """Everything Azure ML rejects in a pipeline job (inline components included)."""
    rules = _Rules(positions)
    if isinstance(data, dict):
        rules.pipeline_job(data)
    return rules.out


def component_rules(data: Any, positions: PositionMap, *, standalone: bool) -> list[Diagnostic]:
    """Everything Azure ML rejects in a component; ``standalone`` when it is submitted on its
    own (``az ml component create``), where a ``name`` is required."""
    rules = _Rules(positions)
    if isinstance(data, dict):
        rules.component(data, (), standalone)
    return rules.out


def for_local_run(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """``diagnostics`` for ``mlpipe job create``: each service-only rule becomes one warning
    (at its first place, "and N more"), every other diagnostic is kept."""
    out: list[Diagnostic] = []
    grouped: dict[str, list[Diagnostic]] = {}
    for d in diagnostics:
        if d.code in SERVICE_ONLY and d.severity == "error":
            grouped.setdefault(d.code, []).append(d)
            if len(grouped[d.code]) == 1:
                out.append(d)
        else:
            out.append(d)
    result = []
    for d in out:
        group = grouped.get(d.code) if d.code in SERVICE_ONLY else None
        if group and group[0] is d:
            more = len(group) - 1
            tail = f" (and {more} more place{'s' if more > 1 else ''})" if more else ""
            message = d.message.replace(REJECTS, "Azure ML would reject this at submission; "
                                                 "a local run does not need it") + tail
            d = Diagnostic(message, key_path=d.key_path, location=d.location,
                           severity="warning", code=d.code, hint=d.hint)
        result.append(d)
    return result


__all__ = ["REJECTS", "SERVICE_ONLY", "component_rules", "for_local_run", "pipeline_rules"]
