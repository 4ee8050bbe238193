"""Validate a parallel or command component file on its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mlpipe.compiler.assets import load_asset_map
from mlpipe.compiler.components import ComponentCache
from mlpipe.compiler.context import Doc, Reporter
from mlpipe.compiler.flatten import SubScope
from mlpipe.compiler.pipeline import sort_diagnostics
from mlpipe.compiler.scope import Node
from mlpipe.compiler.steps import BuildContext, build_step
from mlpipe.compiler.values import RANGE_RULE, coerce_literal, default_out_of_range
from mlpipe.diagnostics import Diagnostic
from mlpipe.io_types import DEFAULT_DATA_TYPE, is_data_type
from mlpipe.plan import PlanInput, PlanOutput
from mlpipe.schema import Loaded, load_component
from mlpipe.schema.parts import INVALID
from mlpipe.schema.submission import component_rules


def validate_component(source: str | Path | Loaded[Any]) -> list[Diagnostic]:
    """Every problem and warning of a parallel or command component file.

    Checks what the schema layer checks, what Azure ML rejects when the component is
    submitted (:mod:`mlpipe.schema.submission`), and that every ``${{inputs.x}}`` /
    ``${{outputs.y}}`` names a declared input or output, that defaults fit their
    declared type, that the code folder and entry script exist, and the
    parallel-run flags in ``program_arguments``.
    """
    reporter = Reporter()
    loaded = source if isinstance(source, Loaded) else load_component(Path(source))
    reporter.extend(loaded.diagnostics)
    if not isinstance(loaded.data, dict):
        return reporter.items
    reporter.extend(component_rules(loaded.data, loaded.positions, standalone=True))
    doc = Doc.validated(loaded.parts, loaded.data, Path(loaded.source).resolve(),
                        loaded.positions)
    if doc.part("type") == "pipeline":
        _check_pipeline_component(doc, reporter)
        return sort_diagnostics(reporter.items)
    if doc.part("type") not in ("parallel", "command", "spark"):
        return reporter.items
    name = doc.part("name")
    node = Node(name if isinstance(name, str) else doc.file.stem, doc, key=())
    node.inputs = _placeholder_inputs(doc, reporter)
    node.outputs = _placeholder_outputs(doc)
    assets, problems = load_asset_map(doc.base_dir)
    reporter.extend(problems)
    build_step(node, BuildContext(reporter, assets, {}, doc.base_dir / ".mlpipe-validate"))
    return sort_diagnostics(reporter.items)


def _check_pipeline_component(doc: Doc, reporter: Reporter) -> None:
    """Compile a pipeline component's steps with its declared inputs standing for values."""
    from mlpipe.compiler.pipeline import _Compiler

    assets, problems = load_asset_map(doc.base_dir)
    reporter.extend(problems)
    scope = SubScope(prefix="", inputs=_placeholder_inputs(doc, reporter, literals=True),
                     outputs={}, components=ComponentCache(reporter, assets), stack=(doc.file,),
                     in_job=False)
    _Compiler(doc, reporter, doc.base_dir / ".mlpipe-validate", "validate", True,
              scope=scope).run()


def _placeholder(decl: dict[str, Any], name: str, type_: str) -> Any:
    """A value of the declared type for a required literal input (its first enum value, or
    its minimum, or 1 / 1.0 / false / "<name>")."""
    if isinstance(decl.get("enum"), list) and decl["enum"]:
        return decl["enum"][0]
    if type_ in ("integer", "number"):
        low = decl.get("min")
        return low if isinstance(low, (int, float)) and not isinstance(low, bool) else 1
    return False if type_ == "boolean" else f"<{name}>"


def _placeholder_inputs(doc: Doc, reporter: Reporter,
                        literals: bool = False) -> dict[str, PlanInput]:
    """Declared inputs with their defaults, or a ``<name>`` placeholder when required
    (with ``literals``, a value of the declared type)."""
    decls = doc.get("inputs")
    inputs: dict[str, PlanInput] = {}
    for name, decl in (decls.items() if isinstance(decls, dict) else []):
        decl = decl if isinstance(decl, dict) else {}
        type_ = str(decl.get("type") or "string")
        optional = decl.get("optional") is True
        default = decl.get("default")
        if default is INVALID:  # reported by the schema layer
            inputs[str(name)] = PlanInput(str(name), type_, optional=optional)
        elif default is not None and not is_data_type(type_):
            value, problem = coerce_literal(default, decl, bounds=False)
            if problem:
                reporter.error(doc, ("inputs", name, "default"), problem, code="type")
            elif (outside := default_out_of_range(decl, value)) is not None:
                # azure-ai-ml loads it; only a step that leaves the input unset fails
                reporter.warn(doc, ("inputs", name, "default"),
                              f"{outside}: a step that leaves '{name}' unset runs with it, and "
                              f"{RANGE_RULE}", code="default-range",
                              hint="fix the default or the range")
            inputs[str(name)] = PlanInput(str(name), type_, value=value, optional=optional)
        elif is_data_type(type_) and not optional:
            inputs[str(name)] = PlanInput(str(name), type_, path=f"<{name}>")
        elif not optional:
            value = _placeholder(decl, str(name), type_) if literals else f"<{name}>"
            inputs[str(name)] = PlanInput(str(name), type_, value=value)
        else:
            inputs[str(name)] = PlanInput(str(name), type_, optional=True)
    return inputs


def _placeholder_outputs(doc: Doc) -> dict[str, PlanOutput]:
    decls = doc.get("outputs")
    return {str(name): PlanOutput(str(name), str((decl or {}).get("type") or DEFAULT_DATA_TYPE)
                                  if isinstance(decl, dict) or decl is None else DEFAULT_DATA_TYPE,
                                  path=f"<{name}>")
            for name, decl in (decls.items() if isinstance(decls, dict) else [])}


__all__ = ["validate_component"]
