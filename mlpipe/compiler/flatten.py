"""Pipeline components (``type: pipeline`` steps): compile the component's own steps and
put them into the outer plan under qualified names (``inner.score``, ``a.b.score``).

A step that uses a pipeline component becomes the component's steps, each named
``<step>.<inner step>``; bindings cross the levels the way Azure ML resolves them:
``${{parent.inputs.x}}`` inside reads what the outer step passes as input ``x``,
``${{parent.outputs.y}}`` inside is what ``${{parent.jobs.<step>.outputs.y}}`` reads
outside. Problems found inside a component file are reported at that file's line,
with the step that uses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from mlpipe.compiler.bindings import whole_reference
from mlpipe.compiler.components import ComponentCache, shown_path
from mlpipe.compiler.context import Doc, Reporter
from mlpipe.compiler.io import IOResolver
from mlpipe.compiler.scope import Node
from mlpipe.diagnostics import Diagnostic
from mlpipe.plan import ExecutionPlan, PlanInput, PlanOutput, Step


@dataclass
class SubScope:
    """What a pipeline component's steps see of the step that uses it."""

    prefix: str  # "inner." (qualified name of the outer step, then a dot)
    inputs: dict[str, PlanInput]  # the outer step's resolved inputs: ${{parent.inputs.x}}
    outputs: dict[str, PlanOutput]  # the outer step's outputs: ${{parent.outputs.y}}
    components: ComponentCache
    default_compute: str | None = None
    stack: tuple[Path, ...] = ()  # component files on the way here (cycle detection)
    in_job: bool = True  # False: a pipeline component file validated on its own


class Compiling(Protocol):
    """What :func:`expand_pipeline_node` needs of the compiler of the outer document."""

    doc: Doc
    reporter: Reporter
    scope: SubScope | None
    components: ComponentCache
    default_compute: str | None
    io: IOResolver

    def nested(self, doc: Doc, reporter: Reporter, scope: SubScope) -> Compiling:
        """A compiler of ``doc`` (a pipeline component) for the same job."""
        ...

    def run(self) -> ExecutionPlan | None:
        """The plan of the document (``None`` when it has errors)."""
        ...


@dataclass
class _ViaReporter(Reporter):
    """Adds "(in pipeline component used by ...)" to problems found in another file."""

    parent: Reporter = field(default_factory=Reporter)
    outer_file: str | None = None
    via: str = ""

    def add(self, diagnostic: Diagnostic) -> None:
        loc = diagnostic.location
        if loc is not None and loc.file != self.outer_file and self.via not in diagnostic.message:
            diagnostic = replace(diagnostic, message=f"{diagnostic.message} ({self.via})")
        self.parent.add(diagnostic)


def expand_pipeline_node(compiler: Compiling, node: Node, siblings: Mapping[str, Node]) -> None:
    """Compile the pipeline component of ``node`` into ``node.steps``; point ``node.outputs``
    (and ``node.sources``) at the inner step outputs they are bound to."""
    comp = node.comp_doc
    assert comp is not None
    outer = compiler.scope
    stack = outer.stack if outer is not None else (compiler.doc.file,)
    inline = bool(comp.prefix)
    if not inline and comp.file in stack:
        names = [p.name for p in (*stack[stack.index(comp.file):], comp.file)]
        compiler.reporter.error(compiler.doc, node.path + ("component",),
                                "pipeline components form a cycle: " + " -> ".join(names),
                                code="cycle", hint="a pipeline component may not use itself, "
                                                   "directly or through another component")
        return
    here = compiler.doc.locate(node.path)
    via = (f"in pipeline component used by {compiler.doc.key_path(node.path) or 'the job'} at "
           f"{shown_path(here.file or str(compiler.doc.file))}:{here.line}")
    reporter = _ViaReporter(items=compiler.reporter.items, parent=compiler.reporter,
                            outer_file=str(compiler.doc.file), via=via)
    # a job made from a pipeline component (its one node is unnamed) keeps the step names
    scope = SubScope(prefix=f"{node.name}." if node.name else "", inputs=dict(node.inputs),
                     outputs=node.outputs,
                     components=compiler.components,
                     default_compute=(outer.default_compute if outer is not None
                                      else compiler.default_compute),
                     stack=stack if inline else (*stack, comp.file),
                     in_job=outer.in_job if outer is not None else True)
    plan = compiler.nested(comp, reporter, scope).run()
    if plan is None:
        return
    compiler.io.remote.setdefault(node.name, []).extend(plan.remote_assets)
    outer_deps = plan_dependencies(node, siblings)
    node.steps = [_within(step, outer_deps, node.inputs) for step in plan.steps]
    for name, out in plan.outputs.items():
        if name in node.outputs:
            node.outputs[name] = replace(node.outputs[name], path=out.path, type=out.type)
            if out.source is not None:
                node.sources[name] = out.source


def plan_dependencies(node: Node, nodes: Mapping[str, Node]) -> list[str]:
    """The plan steps ``node`` waits for: producers of its inputs (inner steps of a pipeline
    component included), then the other steps it names."""
    found = [item.source.step for item in node.inputs.values() if item.source is not None]
    for dep in node.deps:
        producer = nodes.get(dep)
        if producer is None:
            found.append(dep)
        elif producer.is_pipeline:
            found += [step.name for step in producer.steps]
        else:
            found.append(producer.name)
    return list(dict.fromkeys(d for d in found if d != node.name))


def _within(step: Step, outer_deps: list[str], inputs: Mapping[str, PlanInput]) -> Step:
    """An inner step that also waits for what its pipeline step waits for, with a
    ``compute: ${{parent.inputs.x}}`` resolved."""
    depends = tuple(dict.fromkeys((*step.depends_on, *outer_deps)))
    return replace(step, depends_on=depends, compute=_compute(step.compute, inputs))


def _compute(value: Any, inputs: Mapping[str, PlanInput]) -> Any:
    ref = whole_reference(value)
    if ref is None or ref.scope != "parent_input":
        return value
    found = inputs.get(ref.name)
    return str(found.value) if found is not None and found.value is not None else value


__all__ = ["SubScope", "expand_pipeline_node", "plan_dependencies"]
