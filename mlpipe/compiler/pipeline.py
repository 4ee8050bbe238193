"""Compile a pipeline job YAML into an :class:`~mlpipe.plan.ExecutionPlan`."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mlpipe.compiler.assets import load_asset_map
from mlpipe.compiler.components import ComponentCache, ComponentRef
from mlpipe.compiler.context import Doc, Reporter
from mlpipe.compiler.flatten import SubScope, expand_pipeline_node, plan_dependencies
from mlpipe.compiler.graph import order_steps
from mlpipe.compiler.io import IOResolver
from mlpipe.compiler.outputs import OutputPlace, clashes, output_path
from mlpipe.compiler.overrides import apply_overrides, overridden_paths
from mlpipe.compiler.scope import Node
from mlpipe.compiler.steps import BuildContext, append_row_target, build_step
from mlpipe.compiler.sweep_job import trial_component
from mlpipe.compiler.values import DEFAULT_DATASTORE
from mlpipe.diagnostics import (
    Diagnostic,
    HasDiagnostics,
    Location,
    ValidationError,
    errors_of,
    warnings_of,
)
from mlpipe.frozen import freeze
from mlpipe.io_types import DEFAULT_DATA_TYPE
from mlpipe.plan import (
    ExecutionPlan,
    JobSettings,
    PipelineOutput,
    RemoteAsset,
)
from mlpipe.runs import check_job_name, job_dir, resolve_runs_dir
from mlpipe.schema import (
    Loaded,
    load_job_data,
    load_pipeline_data,
    load_runnable,
)
from mlpipe.schema.kinds import file_kind, job_type
from mlpipe.schema.parts import INVALID, part
from mlpipe.schema.submission import (
    REJECTS,
    SERVICE_ONLY,
    for_local_run,
    job_rules,
    pipeline_rules,
)
from mlpipe.schema.yamlio import PositionMap


@dataclass
class CompileResult(HasDiagnostics):
    """The plan (``None`` when there are errors) and every diagnostic found."""

    plan: ExecutionPlan | None
    diagnostics: list[Diagnostic] = field(default_factory=list)


def compile_pipeline(source: str | Path | Loaded[Any], *,
                     runs_dir: str | os.PathLike[str] | None = None,
                     job_name: str | None = None, overrides: Sequence[str] = (),
                     check_paths: bool = True,
                     allow_external_outputs: bool = False,
                     skip_steps: Collection[str] = ()) -> ExecutionPlan:
    """The execution plan of a pipeline job YAML.

    Raises :class:`~mlpipe.diagnostics.ValidationError` with every problem found;
    warnings end up in ``plan.warnings``. ``overrides`` are ``--set`` style
    ``key.path=value`` strings; ``check_paths=False`` skips the checks that local
    data paths exist (code folders, entry scripts and component files are always checked).
    ``allow_external_outputs`` lets declared output paths lie outside the runs folder
    (:func:`mlpipe.compiler.outputs.place_problem`). The outputs of ``skip_steps`` (not run:
    ``--skip-step``) are given by the user and only read, so that rule does not apply to them.
    """
    result = check_pipeline(source, runs_dir=runs_dir, job_name=job_name, overrides=overrides,
                            check_paths=check_paths,
                            allow_external_outputs=allow_external_outputs, skip_steps=skip_steps)
    if result.plan is None:
        raise ValidationError(result.diagnostics)
    return result.plan


def validate_pipeline(source: str | Path | Loaded[Any], *, overrides: Sequence[str] = (),
                      check_paths: bool = True,
                      allow_external_outputs: bool = False) -> list[Diagnostic]:
    """Every problem and warning of a pipeline job YAML (empty when it is clean), with
    everything Azure ML rejects at submission as an error (like ``mlpipe job validate``)."""
    return check_pipeline(source, overrides=overrides, check_paths=check_paths,
                          submission=True,
                          allow_external_outputs=allow_external_outputs).diagnostics


def check_pipeline(source: str | Path | Loaded[Any], *,
                   runs_dir: str | os.PathLike[str] | None = None,
                   job_name: str | None = None, overrides: Sequence[str] = (),
                   check_paths: bool = True, submission: bool = False,
                   allow_external_outputs: bool = False,
                   skip_steps: Collection[str] = ()) -> CompileResult:
    """Compile without raising: the plan when valid, and all diagnostics either way.

    With ``submission`` every rule Azure ML applies when the job is submitted is an error
    (``mlpipe job validate``); without it (a local run) the rules only the service needs
    (compute, environment, names, ...) are one warning each.

    Raises :class:`~mlpipe.compiler.overrides.OverrideSyntaxError` for an override
    that is not ``KEY=VALUE`` and :class:`ValueError` for an invalid ``job_name``.
    """
    problem = check_job_name(job_name) if job_name is not None else None
    if problem:
        raise ValueError(problem)
    reporter = Reporter()
    loaded = source if isinstance(source, Loaded) else load_runnable(Path(source))
    standalone = file_kind(loaded.data) == "job"  # a command or sweep job: its one step
    if overrides:
        loaded = _overridden(loaded, overrides, reporter, standalone)
    reporter.extend(loaded.diagnostics)
    if not isinstance(loaded.data, dict) or (not loaded.data and reporter.errors):
        return CompileResult(None, reporter.items)
    reporter.extend(job_rules(loaded.data, loaded.positions) if standalone
                    else pipeline_rules(loaded.data, loaded.positions))
    doc = Doc.validated(loaded.parts, loaded.data, Path(loaded.source).resolve(),
                        loaded.positions)
    plan = _Compiler(doc, reporter, runs_dir, job_name, check_paths,
                     allow_external_outputs=allow_external_outputs,
                     given_steps=frozenset(skip_steps), standalone=standalone).run()
    diagnostics = sort_diagnostics(reporter.items if submission
                                   else for_local_run(reporter.items))
    if errors_of(diagnostics) or plan is None:
        return CompileResult(None, diagnostics)
    return CompileResult(_with_warnings(plan, warnings_of(diagnostics)), diagnostics)


def _overridden(loaded: Loaded[Any], overrides: Sequence[str], reporter: Reporter,
                standalone: bool) -> Loaded[Any]:
    """``loaded`` validated again after ``--set`` overrides; problems found while reading
    the file (not while validating its data) are kept."""
    load_data = load_job_data if standalone else load_pipeline_data
    data, problems = apply_overrides(loaded.data, overrides)
    reporter.extend(problems)
    model_level = set(load_data(loaded.data, loaded.source,
                                positions=loaded.positions).diagnostics)
    reading = [d for d in loaded.diagnostics if d not in model_level]
    result = load_data(data, loaded.source, positions=_at_set(loaded.positions, data, overrides))
    result.diagnostics = reading + result.diagnostics
    return result


def _at_set(positions: PositionMap, data: Any, overrides: Sequence[str]) -> PositionMap:
    """``positions`` where every value an override set (and all below it) is at ``--set``."""
    moved = PositionMap(positions.file, dict(positions.keys), dict(positions.values),
                        positions.lines)
    for path in overridden_paths(data, overrides):
        for table in (moved.keys, moved.values):
            for key in [k for k in table if k[:len(path)] == path]:
                del table[key]
            table[path] = Location("--set")
    return moved


def sort_diagnostics(items: list[Diagnostic]) -> list[Diagnostic]:
    """Errors before warnings; within each, by file (in order of first appearance), line, column."""
    files: dict[str | None, int] = {}
    for d in items:
        files.setdefault(d.location.file if d.location else None, len(files))

    def key(d: Diagnostic) -> tuple[int, int, int, int]:
        loc = d.location
        return (d.severity != "error", files[loc.file if loc else None], (loc.line or 0) if loc
                else 0, (loc.column or 0) if loc else 0)

    return sorted(items, key=key)


def _with_warnings(plan: ExecutionPlan, warnings: list[Diagnostic]) -> ExecutionPlan:
    return replace(plan, warnings=tuple(warnings))


def default_runs_dir() -> Path:
    """``$MLPIPE_RUNS_DIR``, else ``./mlpipe-runs`` (absolute)."""
    return resolve_runs_dir()


class _Compiler:
    def __init__(self, doc: Doc, reporter: Reporter, runs_dir: str | os.PathLike[str] | None,
                 job_name: str | None, check_paths: bool, scope: SubScope | None = None, *,
                 allow_external_outputs: bool = False, given_steps: frozenset[str] = frozenset(),
                 standalone: bool = False):
        self.doc = doc
        self.standalone = standalone  # a standalone job: the document is its one step
        self.reporter = reporter
        self.scope = scope  # set when ``doc`` is a pipeline component used by a step
        self.check_paths = check_paths
        name = _text(doc.part("name"))
        self.job_name = job_name or (name if name and name.strip() else doc.file.stem)
        self.runs_dir = resolve_runs_dir(runs_dir)
        self.run_dir = job_dir(self.runs_dir, self.job_name)
        # pipeline-level values, read from the validated PipelineJob (or its valid parts)
        self.settings = JobSettings(
            default_compute=_text(doc.part("settings", "default_compute")),
            default_datastore=_text(doc.part("settings", "default_datastore")),
            continue_on_step_failure=doc.part("settings", "continue_on_step_failure") is True,
            force_rerun=doc.part("settings", "force_rerun") is True,
        )
        self.default_compute = self.settings.default_compute or _text(doc.part("compute"))
        datastore = self.settings.default_datastore
        if datastore is not None and datastore.startswith("azureml:"):
            datastore = datastore.split(":", 1)[1]
        self.datastore = datastore or DEFAULT_DATASTORE
        self.assets, problems = load_asset_map(doc.base_dir, self.runs_dir)
        reporter.extend(problems)
        self.allow_external_outputs = allow_external_outputs or self.assets.allow_external_outputs
        place = OutputPlace(self.runs_dir, self.run_dir, self.job_name, self.datastore,
                            doc.base_dir, self.allow_external_outputs, given_steps)
        self.io = IOResolver(doc, reporter, self.assets, place, check_paths,
                             standalone=standalone)
        self.components = ComponentCache(reporter, self.assets)
        if scope is not None:
            self.components = scope.components
            self.io.pipeline_inputs = scope.inputs
            self.io.parent_outputs = scope.outputs

    def nested(self, doc: Doc, reporter: Reporter, scope: SubScope) -> _Compiler:
        """A compiler of a pipeline component ``doc`` used by a step of this document."""
        return _Compiler(doc, reporter, self.runs_dir, self.job_name, self.check_paths,
                         scope=scope, allow_external_outputs=self.allow_external_outputs,
                         given_steps=self.io.place.given_steps)

    def run(self) -> ExecutionPlan | None:
        inputs = (self.io.pipeline_inputs if self.scope is not None or self.standalone
                  else self.io.resolve_pipeline_inputs())
        nodes = self._nodes()
        for node in nodes.values():
            self.io.resolve_outputs(node, append_row_target(node))
        order = self._order(nodes)
        for name in order:
            self.io.resolve_inputs(nodes[name])
            node = nodes[name]
            if node.is_pipeline and not self.reporter.has_error_at(self.doc, node.path):
                expand_pipeline_node(self, node, nodes)
        default_compute = (self.scope.default_compute if self.scope is not None
                           else self.default_compute)
        self._check_computes(nodes, default_compute)
        ctx = BuildContext(self.reporter, self.assets, inputs, self.run_dir, default_compute)
        steps = []
        remote: list[RemoteAsset] = list(self.io.remote.get("", []))
        for name in order:
            node = nodes[name]
            node.deps = plan_dependencies(node, nodes)
            if node.failed:
                continue
            if node.is_pipeline:
                steps.extend(node.steps)
                remote += self.io.remote.get(node.name, [])
                continue
            ctx.remote = []
            steps.append(build_step(node, ctx))
            remote += self._component_asset(node) + ctx.remote + self.io.remote.get(node.name, [])
        if self.scope is None:
            for output, message in clashes(steps):
                self.reporter.add(Diagnostic(message, location=output.location,
                                             code="output-place",
                                             hint="give each output a path of its own"))
        if any(d.code not in SERVICE_ONLY for d in self.reporter.errors):
            return None
        return ExecutionPlan(
            source=str(self.doc.file),
            run_dir=str(self.run_dir),
            steps=tuple(steps),
            name=self.job_name,
            display_name=_text(self.doc.part("display_name")),
            description=_text(self.doc.part("description")),
            experiment_name=_text(self.doc.part("experiment_name")),
            tags=freeze(self._tags()),
            inputs=freeze(inputs),
            outputs=freeze({} if self.standalone else self._pipeline_outputs(nodes)),
            settings=self.settings,
            remote_assets=tuple(remote),
            external_outputs=self.allow_external_outputs,
            kind=(job_type(self.doc.data) or "command") if self.standalone else "pipeline",
        )

    def _check_computes(self, nodes: dict[str, Node], default_compute: str | None) -> None:
        """In a pipeline component file a job uses, with no compute for the job, every step
        needs its own, as azure-ai-ml checks (the job's own and inline components' steps are
        checked by :func:`~mlpipe.schema.submission.pipeline_rules`)."""
        if self.scope is None or not self.scope.in_job or self.doc.prefix or default_compute:
            return
        for node in nodes.values():
            if node.failed or node.is_pipeline or node.data.get("compute") \
                    or (node.kind == "spark" and node.data.get("resources")):
                continue
            self.reporter.add(Diagnostic(
                f"step '{node.local}' has no compute and the job has no "
                f"settings.default_compute: {REJECTS}",
                key_path=self.doc.key_path(node.path + ("compute",)),
                location=self.doc.locate(node.path), code="azure-compute",
                hint="set settings.default_compute: azureml:<cluster> (or 'serverless') on the "
                     "job, or a compute on the step"))

    def _tags(self) -> dict[str, str]:
        tags = self.doc.part("tags")
        return ({str(k): str(v) for k, v in tags.items() if v is not INVALID}
                if isinstance(tags, dict) else {})

    def _nodes(self) -> dict[str, Node]:
        if self.standalone:  # the job is its one step, named for its type
            node = Node(job_type(self.doc.data) or "command", self.doc, key=(), job=True)
            if node.kind == "sweep" and not isinstance(self.doc.get("trial"), dict):
                # missing or not a mapping: reported by the schema layer, once
                node.component = ComponentRef("missing", "trial")
            elif node.kind == "sweep" and isinstance(self.doc.raw, dict):
                node.component = self.components.inline(trial_component(self.doc.raw),
                                                        self.doc, ("trial",))
            else:
                self._resolve_component(node, self.doc.get())
            self.io.nodes = {node.name: node}
            return self.io.nodes
        jobs = self.doc.get("jobs")
        if jobs is None and self.scope is None and self.doc.part("component") is not None:
            return self._component_job()
        if not isinstance(jobs, dict) or not jobs:
            if not self.reporter.has_error_at(self.doc, ("jobs",)):
                self.reporter.error(self.doc, ("jobs",) if self.doc.has("jobs") else (),
                                    "a pipeline needs at least one step under jobs",
                                    code="required")
            return {}
        nodes: dict[str, Node] = {}
        prefix = self.scope.prefix if self.scope is not None else ""
        for name, value in jobs.items():
            node = Node(prefix + str(name), self.doc, key=("jobs", str(name)))
            if not isinstance(value, dict):  # the schema layer reported it: not built, and
                node.failed = True           # bindings to its outputs are not checked
                nodes[str(name)] = node
                continue
            self._resolve_component(node, value)
            nodes[str(name)] = node
        self.io.nodes = nodes
        return nodes

    def _component_job(self) -> dict[str, Node]:
        """A pipeline job made from a pipeline component (``component:`` instead of
        ``jobs:``): the component's steps are the job's, under their own names; the job's
        inputs and outputs are given to the component's (azure-ai-ml copies the component's
        jobs into the job it submits)."""
        node = Node("", self.doc, key=(), job=True)
        self._resolve_component(node, self.doc.get())
        self.io.nodes = {"": node}
        return self.io.nodes

    def _resolve_component(self, node: Node, value: dict[str, Any]) -> None:
        """The component a step names (``component:``, a sweep's ``trial:``), if any."""
        key = node.component_key
        path = node.path + (key,)
        if self.reporter.has_error_at(self.doc, path):
            node.component = ComponentRef("missing", str(value.get(key)))
        elif node.part(key) is not None:
            node.component = self.components.resolve(value[key], self.doc, path)
            self._check_type(node)

    def _check_type(self, node: Node) -> None:
        """A node's component must be of its type (a sweep's trial is a command component)."""
        comp = node.comp_doc
        mine, theirs = node.part("type"), comp.part("type") if comp is not None else None
        wanted = "command" if mine == "sweep" else mine
        if isinstance(wanted, str) and isinstance(theirs, str) and wanted != theirs:
            key = node.component_key
            what = ("its trial must be a command component" if mine == "sweep"
                    else f"the step is type '{mine}'")
            self.reporter.error(self.doc, node.path + ((key,) if mine == "sweep" else ("type",)),
                                f"{what} but its {key} "
                                f"'{node.component.reference if node.component else ''}' is type "
                                f"'{theirs}'", code="type")

    def _component_asset(self, node: Node) -> list[RemoteAsset]:
        comp = node.component
        if comp is None or comp.kind not in ("remote", "flow"):
            return []
        path = node.path + (node.component_key,)
        return [RemoteAsset(self.doc.key_path(path), comp.reference, "flow" if comp.kind == "flow"
                            else "component", self.doc.locate(path))]

    def _order(self, nodes: dict[str, Node]) -> list[str]:
        where: dict[tuple[str, str], tuple[Any, ...]] = {}
        for node in nodes.values():
            for upstream, path in self.io.dependencies(node):
                if upstream in nodes and upstream != node.local:
                    node.deps.append(upstream)
                    where.setdefault((node.local, upstream), path)
        order, cycles = order_steps(list(nodes), {k: n.deps for k, n in nodes.items()})
        for cycle in cycles:
            consumer, producer = cycle[1], cycle[0]
            path = where.get((consumer, producer), ("jobs", consumer))
            self.reporter.error(self.doc, path,
                                "steps form a cycle: " + " -> ".join(cycle) + " (each step reads "
                                                                              "an output of the "
                                                                              "one before it)",
                                code="cycle")
        return order + [name for name in nodes if name not in order]

    def _pipeline_outputs(self, nodes: dict[str, Node]) -> dict[str, PipelineOutput]:
        declared = self.doc.part("outputs")
        declared = declared if isinstance(declared, dict) else {}
        root = nodes.get("")  # a job made from a pipeline component: its outputs are the job's
        names = [*(root.outputs if root is not None else ()), *map(str, declared)]
        result: dict[str, PipelineOutput] = {}
        for name in dict.fromkeys(names):
            value = declared.get(name)
            bound = self.io.bound_outputs.get(name)
            if bound is None and root is not None and name in root.outputs:
                bound = ("", name)
            if bound is not None:
                out = nodes[bound[0]].outputs[bound[1]]
                result[name] = PipelineOutput(name, out.path, out.type,
                                              nodes[bound[0]].source_of(bound[1]))
                continue
            type_ = _text(part(value, "type")) or DEFAULT_DATA_TYPE
            self.reporter.warn(self.doc, ("outputs", name),
                               f"pipeline output '{name}' is not bound to any step output",
                               code="unbound-output")
            template = _text(part(value, "path"))
            path = output_path(self.io.place, "", name, type_, template, False)
            if template:
                self.io.check_place(name, template, path, ("outputs", name, "path"))
            result[name] = PipelineOutput(name, path, type_)
        return result


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


__all__ = ["CompileResult", "check_pipeline", "compile_pipeline", "default_runs_dir",
           "validate_pipeline"]
