"""What Azure ML rejects when a job or component is submitted, beyond the shape the models
check: names, case-sensitive types, required keys, compute, tags, input syntax.

The rules follow azure-ai-ml's schemas (``_schema/component``, ``_schema/pipeline``):
component names match ``^[a-z][a-z0-9_]*$``, step names ``^[a-z_][a-z0-9_]*$``,
component input/output ``type`` and ``mode`` are compared case-sensitively, a parallel
``task`` needs ``type`` and ``environment``, a command needs an ``environment``,
``settings.default_compute`` is an ``azureml:`` reference (or ``serverless``), so is
``settings.default_datastore``, tag values
are strings, and job inputs take values (``default`` is component syntax).

``mlpipe job validate`` reports every rule as an error. :data:`RULES` is the one place that
says, for each rule (by its diagnostic code), when it applies: whether a local run (``mlpipe
job create``) needs it too or only the service does (then it is one warning there,
:func:`for_local_run`), and whether it applies to a component a job only references
(registered anonymously at submission, so its name is not checked) or only to one submitted
on its own (``az ml component create``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mlpipe.diagnostics import Diagnostic
from mlpipe.io_types import DEFAULT_DATA_TYPE, EVAL_MODES, LITERAL_TYPES, PORT_MODES, PORT_TYPES
from mlpipe.schema.pipeline import step_kind
from mlpipe.schema.yamlio import KeyPath, PositionMap, format_key_path

COMPONENT_NAME = re.compile(r"^[a-z][a-z\d_]*$")  # azure-ai-ml PythonFuncNameStr
OUTPUT_ASSET_NAME = re.compile(r"^[A-Za-z0-9_-]{1,255}$")  # azure-ai-ml's output name check
# a versioned code asset (azure-ai-ml finds ``azureml:<name>`` as a local folder of that name)
CODE_REFERENCE = re.compile(r"^azureml:(//|/subscriptions/|[^/:@]+(:[^/:@]+|@\w+)$)", re.I)
NODE_NAME = re.compile(r"^[a-z_][a-z\d_]*$")  # azure-ai-ml is_valid_node_name
REJECTS = "Azure ML rejects this at submission"



@dataclass(frozen=True)
class When:
    """When a rule applies: ``local_run`` (an error for ``mlpipe job create`` too, else one
    warning there) and ``referenced`` (to components a job only references, too)."""

    local_run: bool
    referenced: bool = True


RULES: dict[str, When] = {
    "azure-compute": When(local_run=False),  # every step needs a compute in the cloud
    "azure-environment": When(local_run=False),  # a local run uses its own Python
    "azure-task-type": When(local_run=False),
    "azure-tags": When(local_run=False),
    "azure-reference": When(local_run=False),  # default_compute/default_datastore spelling
    "azure-step-name": When(local_run=False),
    "azure-component-name": When(local_run=False, referenced=False),  # anonymous when referenced
    "azure-input-default": When(local_run=True),
    "azure-input-value": When(local_run=True),
    "azure-type-case": When(local_run=True),
    "azure-eval-mode": When(local_run=True),
    "azure-sweep": When(local_run=True),
    "azure-inline-comment": When(local_run=False),
    "azure-output-name": When(local_run=False),  # registration happens in the workspace
    "azure-hook-step": When(local_run=True),  # on_init / on_finalize change the step order
    "azure-input-names": When(local_run=True),
    "azure-code-reference": When(local_run=False),
    "azure-import-ports": When(local_run=True),
}
# Rules that only the service needs: a local run warns about them (once per rule).
SERVICE_ONLY = frozenset(code for code, when in RULES.items() if not when.local_run)


@dataclass(frozen=True)
class Dropped:
    """A key of a component document that azure-ai-ml drops from the job it submits (its
    component schema does not dump it), so the cloud runs without it: ``instead`` says where
    the value belongs; ``applied`` when mlpipe still applies it locally (a legacy spelling
    whose meaning is not in doubt), with the same warning."""

    path: KeyPath
    kinds: tuple[str, ...]  # component types whose files may hold it
    instead: str
    applied: bool = False


# Every key mlpipe's component models accept that azure-ai-ml 1.35's component schemas
# (``_schema/component``: ``dump_fields``, less ``Meta.exclude``) do not write; the
# test compares the models with azure-ai-ml's schemas when it is installed.
DROPPED_COMPONENT_KEYS: tuple[Dropped, ...] = (
    Dropped(("environment_variables",), ("command", "parallel"),
            "the step: jobs.<step>.environment_variables in the pipeline YAML, or "
            "node.environment_variables = {...} in code"),
    Dropped(("task", "args"), ("parallel",), "task.program_arguments", applied=True),
    # only command and Spark components merge them into the code they upload
    Dropped(("additional_includes",), ("parallel",), "task.code"),
)


class _Rules:
    """Collects the problems of one document (a pipeline job or a component)."""

    def __init__(self, positions: PositionMap, referenced: bool = False):
        self.positions = positions
        self.referenced = referenced  # a component a job references (not submitted on its own)
        self.out: list[Diagnostic] = []

    def reject(self, path: KeyPath, code: str, problem: str, fix: str,
               at_parent: bool = False) -> None:
        if self.referenced and not RULES[code].referenced:
            return
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
                self.pipeline_input(name, value)
        if not (data.get("compute") or settings.get("default_compute")):
            self.computes(data, ())
        self.outputs(data, ())
        self.hooks(data, settings)
        self.jobs(data, ())

    def outputs(self, data: dict[str, Any], path: KeyPath) -> None:
        """An output registered as a data asset: ``version`` needs a ``name``, and the name
        is letters, digits, '-' and '_' (azure-ai-ml refuses the job when it is built)."""
        outputs = data.get("outputs")
        for port, value in outputs.items() if isinstance(outputs, dict) else []:
            if not isinstance(value, dict):
                continue
            name = value.get("name")
            if value.get("version") is not None and name is None:
                self.reject(path + ("outputs", port, "version"), "azure-output-name",
                            f"output '{port}' has a 'version' but no 'name'",
                            "add name: <data asset name>, or remove version")
            elif isinstance(name, str) and not OUTPUT_ASSET_NAME.match(name):
                self.reject(path + ("outputs", port, "name"), "azure-output-name",
                            f"output name '{name}' may hold only letters, digits, '-' and '_' "
                            "(at most 255)", f"write '{re.sub(r'[^A-Za-z0-9_-]', '', name)}'")

    def code(self, data: dict[str, Any], path: KeyPath) -> None:
        """``code: azureml:<name>`` needs a version (azure-ai-ml looks for a local folder)."""
        code = data.get("code")
        if isinstance(code, str) and code.lower().startswith("azureml:") \
                and not CODE_REFERENCE.match(code):
            self.reject(path + ("code",), "azure-code-reference",
                        f"code '{code}' names no version", f"write '{code}:<version>' (or a "
                        "local folder)")

    def hooks(self, data: dict[str, Any], settings: dict[str, Any]) -> None:
        """``settings.on_init`` / ``on_finalize`` name a step that neither reads another
        step's outputs nor is read by one (azure-ai-ml: "should not have connection to other
        execution node")."""
        jobs = data.get("jobs")
        jobs = jobs if isinstance(jobs, dict) else {}
        for key in ("on_init", "on_finalize"):
            name = settings.get(key)
            if not isinstance(name, str) or name not in jobs:
                continue
            readers = {step for step, node in jobs.items() if step != name and name in _reads(node)}
            linked = sorted(readers | {m for m in _reads(jobs.get(name)) if m in jobs
                                       and m != name})
            if linked:
                self.reject(("settings", key), "azure-hook-step",
                            f"settings.{key} step '{name}' is connected to other steps "
                            f"({', '.join(linked)})",
                            f"the {key} step may neither read nor feed another step")

    def pipeline_input(self, name: Any, value: dict[str, Any]) -> None:
        """A job input (a pipeline job's or a standalone job's) is a value, ``{value: ...}``
        or data: azure-ai-ml rejects a literal written as a typed mapping
        (``{type: integer, ...}``)."""
        kind = value.get("type")
        if not (isinstance(kind, str) and kind.lower() in LITERAL_TYPES) or "path" in value:
            return
        if "default" in value:
            self.reject(("inputs", name, "default"), "azure-input-default",
                        "a job input takes a value; 'default' is component syntax",
                        _value_fix(name, value))
        elif value.get("value") is None:
            self.reject(("inputs", name), "azure-input-value",
                        f"job input '{name}' is declared {kind} but has no value",
                        f"give it a value: '{name}: <{kind}>'")
        else:
            self.reject(("inputs", name, "type"), "azure-input-value",
                        "a job input takes a value; a typed literal mapping is "
                        "component syntax", f"write '{name}: {value['value']}'")

    def computes(self, data: dict[str, Any], prefix: KeyPath) -> None:
        """With no pipeline compute, every step needs its own (as azure-ai-ml checks): not a
        Spark step with ``resources`` (serverless), and a pipeline component's steps each."""
        jobs = data.get("jobs")
        for name, node in jobs.items() if isinstance(jobs, dict) else []:
            if not isinstance(node, dict):
                continue
            kind = step_kind(node)
            component = node.get("component")
            if kind == "pipeline":
                if isinstance(component, dict):
                    self.computes(component, prefix + ("jobs", name, "component"))
                continue
            if node.get("compute") or (kind == "spark" and node.get("resources")):
                continue
            self.reject(prefix + ("jobs", name, "compute"), "azure-compute",
                        f"step '{name}' has no compute and there is no "
                        "settings.default_compute",
                        "set settings.default_compute: azureml:<cluster> (or 'serverless'), "
                        "or a compute on the step", at_parent=True)

    def component(self, data: dict[str, Any], path: KeyPath, standalone: bool) -> None:
        name = data.get("name")
        if name is None and standalone:
            self.reject(path + ("name",), "azure-component-name",
                        "a component needs a 'name'", "add name: <lower_case_name>",
                        at_parent=True)
        elif isinstance(name, str) and not COMPONENT_NAME.match(name) \
                and (standalone or path == ()):  # an inline component is anonymous
            fixed = re.sub(r"[^a-z0-9_]", "_", name.lower()).lstrip("_0123456789") or "component"
            self.reject(path + ("name",), "azure-component-name",
                        f"component name '{name}' must match {COMPONENT_NAME.pattern} (lower-case "
                        "letters, digits and '_', starting with a letter)", f"write '{fixed}'")
        self.tags(data, path)
        for key in ("inputs", "outputs"):
            decls = data.get(key)
            seen: dict[str, Any] = {}
            for port, decl in decls.items() if isinstance(decls, dict) else []:
                if isinstance(decl, dict):
                    self.declaration(decl, path + (key, port), key == "inputs")
                if key == "inputs" and isinstance(port, str):
                    twin = seen.setdefault(port.lower(), port)
                    if twin != port:
                        self.reject(path + (key, port), "azure-input-names",
                                    f"inputs '{twin}' and '{port}' differ only in case",
                                    "rename one of them")
        self.code(data, path)
        code = data.get("code")
        if isinstance(code, str) and code.strip().lower().startswith("git+"):
            # azure-ai-ml's component schemas: "Not a valid code value: git paths are not
            # supported." (a command *job* may take its code from git)
            self.reject(path + ("code",), "azure-code-reference",
                        f"code '{code}' is a git path: a component's code cannot come from git",
                        "give a local folder or an azureml:<name>:<version> code asset")
        kind = str(data.get("type", "command")).lower()  # no type: azure-ai-ml's default
        if kind == "parallel":
            self.parallel(data, path)
        elif kind == "command":
            self.command(data, path)
        elif kind == "pipeline":
            self.jobs(data, path)
        elif kind == "import":
            for key in ("inputs", "outputs"):
                if key in data:  # azure-ai-ml: "got multiple values for keyword argument"
                    self.reject(path + (key,), "azure-import-ports",
                                f"an import component takes no '{key}'",
                                "declare its parameters under 'source' and its data as "
                                "'output'")

    # -- pieces ---------------------------------------------------------------------------

    def declaration(self, decl: dict[str, Any], path: KeyPath, is_input: bool) -> None:
        kind, mode = decl.get("type"), decl.get("mode")
        default = decl.get("default")
        if is_input and isinstance(kind, str) and kind.lower() in PORT_TYPES \
                and default is not None:
            # azure-ai-ml 1.35.2: "Default value of Input cannot be set: Non-primitive type
            # Input has no default value." (a path, an azureml: asset, a number alike)
            self.reject(path + ("default",), "azure-input-default",
                        f"a {kind} input cannot have a default (only string, integer, number "
                        "and boolean inputs can)", "remove it, and give the data where the "
                        "component is used (a step's or a pipeline job's inputs)")
        allowed = PORT_TYPES + (LITERAL_TYPES if is_input else ())
        if isinstance(kind, str) and kind not in allowed and kind.lower() in allowed:
            self.reject(path + ("type",), "azure-type-case",
                        f"type '{kind}': component input and output types are case-sensitive",
                        f"write '{kind.lower()}'")
        if isinstance(mode, str) and mode not in PORT_MODES and mode.lower() in PORT_MODES:
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
            # a tag without a value is a tag with no value, as azure-ai-ml loads it and the job
            # service takes it (its published sample submits command_job_test.yml's `empty_tag:`)
            if value is not None and not isinstance(value, str):
                shown = ("true" if value else "false") if isinstance(value, bool) else value
                self.reject(path + ("tags", key), "azure-tags",
                            f"tag '{key}' has a {type(value).__name__} value; tag values are "
                            "strings", f"quote it: '{shown}'")

    def jobs(self, data: dict[str, Any], path: KeyPath) -> None:
        jobs = data.get("jobs")
        for name, node in jobs.items() if isinstance(jobs, dict) else []:
            here = path + ("jobs", name)
            if isinstance(name, str) and not NODE_NAME.match(name):
                self.reject(here, "azure-step-name",
                            f"step name '{name}' must match {NODE_NAME.pattern} (lower-case "
                            "letters, digits and '_')", f"rename it '{name.lower()}'")
            if isinstance(node, dict):
                self.node(node, here)

    def node(self, node: dict[str, Any], path: KeyPath) -> None:
        self.tags(node, path)
        self.outputs(node, path)
        if node.get("component") is None:
            self.code(node, path)
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
        if component is None and "comment" in node:
            # azure-ai-ml reads an inline step with its job schemas, which take no comment
            self.reject(path + ("comment",), "azure-inline-comment",
                        "'comment' is taken only by a step that uses a 'component'",
                        "remove it, or move the step's definition under 'component:'")
        if isinstance(component, dict):
            self.component(component, path + ("component",), standalone=False)
        elif component is None and step_kind(node) == "parallel":
            self.parallel(node, path)
        elif component is None and step_kind(node) == "command":
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


def _text(value: Any) -> str:
    """Every string inside ``value``, joined (to find the bindings a step writes)."""
    if isinstance(value, dict):
        return " ".join(_text(item) for item in value.values())
    if isinstance(value, list):
        return " ".join(_text(item) for item in value)
    return value if isinstance(value, str) else ""


def _reads(node: Any) -> set[str]:
    """The steps whose outputs ``node`` binds (``${{parent.jobs.<step>.outputs.x}}``)."""
    return set(re.findall(r"parent\.jobs\.([\w-]+)\.", _text(node)))


def _value_fix(name: Any, value: dict[str, Any]) -> str:
    default = value.get("default")
    kind = value.get("type")
    if isinstance(kind, str) and kind.lower() in LITERAL_TYPES:
        return f"write '{name}: {default}' or '{{type: {kind}, value: {default}}}'"
    return f"write '{name}: {{type: {kind or DEFAULT_DATA_TYPE}, path: {default}}}'"


def pipeline_rules(data: Any, positions: PositionMap) -> list[Diagnostic]:
    """Everything Azure ML rejects in a pipeline job (inline components included)."""
    rules = _Rules(positions)
    if isinstance(data, dict):
        rules.pipeline_job(data)
    return rules.out


def job_rules(data: Any, positions: PositionMap) -> list[Diagnostic]:
    """Everything Azure ML rejects in a standalone job (a step's rules, at the top level)."""
    rules = _Rules(positions)
    if isinstance(data, dict):
        rules.node(data, ())
        inputs = data.get("inputs")
        for name, value in inputs.items() if isinstance(inputs, dict) else []:
            if isinstance(value, dict):
                rules.pipeline_input(name, value)
    return rules.out


def component_rules(data: Any, positions: PositionMap, *, standalone: bool) -> list[Diagnostic]:
    """Everything Azure ML rejects in a component; ``standalone`` when it is submitted on its
    own (``az ml component create``), where its ``name`` is checked; a component a job only
    references is registered anonymously, and only the rules that apply to it
    (:data:`RULES`) are."""
    rules = _Rules(positions, referenced=not standalone)
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


__all__ = ["DROPPED_COMPONENT_KEYS", "Dropped", "REJECTS", "RULES", "SERVICE_ONLY", "When",
           "component_rules", "for_local_run", "job_rules", "pipeline_rules"]
