"""A step as the compiler sees it: the node, its component, and the names its
``${{inputs.x}}`` / ``${{outputs.y}}`` bindings can use."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from mlpipe.compiler.bindings import (
    OPTIONAL_PATTERN,
    Reference,
    expand_optional,
    references_in,
    split_arguments,
    substitute,
)
from mlpipe.compiler.components import ComponentRef
from mlpipe.compiler.context import Doc, Reporter
from mlpipe.diagnostics import did_you_mean
from mlpipe.plan import PlanInput, PlanOutput, Step, StepOutputRef


@dataclass(frozen=True)
class Source:
    """A value and where it was written."""

    value: Any
    doc: Doc
    path: tuple[str | int, ...]


@dataclass
class Node:
    """One entry of ``jobs``: the node mapping and the component it uses (if any).

    A component file validated on its own is a node too: its ``doc`` is the
    component document and ``key`` is ``()``.
    """

    name: str
    doc: Doc  # the pipeline document
    component: ComponentRef | None = None
    outputs: dict[str, PlanOutput] = field(default_factory=dict)
    inputs: dict[str, PlanInput] = field(default_factory=dict)
    deps: list[str] = field(default_factory=list)
    key: tuple[str, ...] | None = None
    # a pipeline component step: its flattened steps, and the step output behind each output
    steps: list[Step] = field(default_factory=list)
    sources: dict[str, StepOutputRef] = field(default_factory=dict)
    # the step did not validate as any step type (reported by the schema layer): not built
    failed: bool = False
    # a standalone job file: the document is the step (``key`` is ``()``, as for a component)
    job: bool = False

    @property
    def is_component_file(self) -> bool:
        """A component file validated on its own (not a step of a job)."""
        return not self.path and not self.job

    @property
    def path(self) -> tuple[str, ...]:
        return self.key if self.key is not None else ("jobs", self.name)

    @property
    def local(self) -> str:
        """The step's name in its own ``jobs:`` (``name`` is qualified: ``inner.score``)."""
        return self.path[-1] if self.path else self.name

    def source_of(self, output: str) -> StepOutputRef:
        """The plan step output behind ``output`` (inside a pipeline component for those)."""
        return self.sources.get(output) or StepOutputRef(self.name, output)

    @property
    def is_pipeline(self) -> bool:
        """A ``type: pipeline`` step whose pipeline component mlpipe can read."""
        comp = self.comp_doc
        return (self.part("type") == "pipeline" and comp is not None
                and comp.part("type") == "pipeline")

    def part(self, *keys: str) -> Any:
        """The validated value at ``keys`` of the step (a model, or its valid parts)."""
        return self.doc.part(*self.path, *keys)

    @property
    def data(self) -> dict[str, Any]:
        """The step's validated values as plain data (``INVALID`` where one did not validate)."""
        value = self.doc.get(*self.path)
        return value if isinstance(value, dict) else {}

    @property
    def comp_doc(self) -> Doc | None:
        return self.component.doc if self.component is not None else None

    @property
    def is_opaque(self) -> bool:
        """mlpipe cannot look inside the step: a remote, prompt-flow or missing component, or
        a step that did not validate."""
        if self.failed:
            return True
        return self.component is not None and self.component.kind in ("remote", "flow",
                                                                      "missing")

    @cached_property
    def kind(self) -> str:
        """The step's type (lower-cased by the models): parallel, command, sweep, ..."""
        kind = self.part("type")
        if kind is None and self.comp_doc is not None:
            kind = self.comp_doc.part("type")
        return kind.lower() if isinstance(kind, str) else "command"

    @property
    def component_key(self) -> str:
        """The key naming the step's component: ``trial`` for a sweep, else ``component``."""
        return "trial" if self.kind == "sweep" else "component"

    def search_space(self) -> dict[str, Any]:
        """A sweep step's search space (trial input -> entry); empty for other steps."""
        space = self.data.get("search_space") if self.kind == "sweep" else None
        return space if isinstance(space, dict) else {}

    def distribution(self) -> str | None:
        """``distribution.type`` of the step, else of its component (a sweep's: its trial's);
        ``None`` when not distributed."""
        src = self.lookup("distribution")
        kind = src.value.get("type") if src is not None and isinstance(src.value, dict) else None
        return kind.lower() if isinstance(kind, str) else None

    def lookup(self, *keys: str) -> Source | None:
        """A setting from the node, else from its component: the validated value (as the
        models normalise it; ``INVALID`` when the schema layer rejected it)."""
        if self.doc.has(*self.path, *keys):
            return Source(self.doc.get(*self.path, *keys), self.doc, (*self.path, *keys))
        comp = self.comp_doc
        if comp is not None and comp.has(*keys):
            return Source(comp.get(*keys), comp, tuple(keys))
        return None

    def declared_inputs(self) -> dict[str, Any] | None:
        """The component's input declarations; ``None`` for inline and remote steps."""
        return self._declarations("inputs")

    def declared_outputs(self) -> dict[str, Any] | None:
        """The component's output declarations; ``None`` for inline and remote steps."""
        return self._declarations("outputs")

    def _declarations(self, key: str) -> dict[str, Any] | None:
        comp = self.comp_doc
        if comp is None:
            return None
        if self.kind == "import":  # an import component: ``source`` parameters, one ``output``
            if key == "outputs":
                return {"output": comp.get("output")} if comp.has("output") else {}
            key = "source"
        decls = comp.get(key)
        return decls if isinstance(decls, dict) else {}

    def given(self, key: str) -> dict[str, Any]:
        """The step's ``inputs`` or ``outputs`` as written (an inline import step's single
        ``output`` is its output ``output``)."""
        if key == "outputs" and self.kind == "import" and "output" in self.data:
            return {"output": self.data["output"]}
        value = self.data.get(key)
        return value if isinstance(value, dict) else {}


def check_own_bindings(text: Any, inputs: Iterable[str], outputs: Iterable[str], src: Source,
                       reporter: Reporter, what: str) -> None:
    """Report each binding in ``text`` that is not one of the step's own inputs or outputs."""
    inputs, outputs = list(inputs), list(outputs)
    for ref in references_in(text):
        if ref.scope == "input" and ref.name not in inputs:
            _unknown(reporter, src, ref, "input", inputs)
        elif ref.scope == "output" and ref.name not in outputs:
            _unknown(reporter, src, ref, "output", outputs)
        elif ref.scope in ("parent_input", "parent_output", "step_output"):
            reporter.error(src.doc, src.path,
                           f"{what} may bind only the step's own inputs and outputs, "
                           f"got {ref.text}", code="binding",
                           hint="declare a step input bound to it and use ${{inputs.<name>}}")
        elif ref.scope in ("template", "unknown"):
            swept = ref.name.startswith("search_space.")  # a sweep job's entry it does not have
            reporter.error(src.doc, src.path, f"unknown binding {ref.text}", code="binding",
                           hint="${{search_space.<name>}} binds an entry of the sweep job's "
                                "search_space" if swept else
                           "use ${{inputs.<name>}} or ${{outputs.<name>}}")


def _unknown(reporter: Reporter, src: Source, ref: Reference, kind: str, names: list[str]) -> None:
    declared = ", ".join(names) if names else "none"
    reporter.error(src.doc, src.path,
                   f"{ref.text} names no {kind} of this step (declared {kind}s: {declared})",
                   code="binding", hint=did_you_mean(ref.name, names))


@dataclass
class StepValues:
    """Renders ``${{inputs.x}}`` / ``${{outputs.y}}`` with the step's resolved values."""

    inputs: Mapping[str, PlanInput]
    outputs: Mapping[str, PlanOutput]

    def is_set(self, ref: Reference) -> bool:
        if ref.scope == "input":
            item = self.inputs.get(ref.name)
            return item is not None and item.is_set
        return ref.scope == "output" and ref.name in self.outputs

    def value(self, ref: Reference) -> tuple[str, bool] | None:
        """``(text, is_path)`` for a reference, ``None`` when it has no value."""
        if ref.scope == "input" and ref.name in self.inputs:
            item = self.inputs[ref.name]
            if item.reads_upstream_value:
                return ref.text, False  # substituted when the step starts (jobs/command.py)
            if item.path is not None:
                return item.path, True
            if item.remote is not None:
                return item.remote, False
            text = item.as_argument()
            return None if text is None else (text, False)
        if ref.scope == "output" and ref.name in self.outputs:
            return self.outputs[ref.name].path, True
        return None

    def unset_used(self, text: str) -> list[str]:
        """Inputs used outside ``$[[...]]`` that have no value."""
        body = OPTIONAL_PATTERN.sub("", text)
        return [ref.name for ref in references_in(body)
                if ref.scope == "input" and ref.name in self.inputs
                and not self.inputs[ref.name].is_set]

    def arguments(self, text: str) -> list[str]:
        """``program_arguments`` split into ``sys.argv[1:]`` with every binding substituted."""
        expanded = expand_optional(text, self.is_set)
        return split_arguments(expanded, lambda ref: self.value(ref) or (ref.text, False))

    def command(self, text: str) -> str:
        """A command line with paths shell-quoted and literals as their text."""
        expanded = expand_optional(text, self.is_set)

        def render(ref: Reference) -> str:
            found = self.value(ref)
            if found is None:
                return ref.text if ref.scope not in ("input", "output") else ""
            return shlex.quote(found[0]) if found[1] else found[0]

        return substitute(expanded, render)

    def text(self, value: str) -> str:
        """Plain substitution (environment variables and other scalar settings)."""
        return substitute(value, lambda ref: (self.value(ref) or (ref.text, False))[0])


__all__ = ["Node", "Source", "StepValues", "check_own_bindings"]
