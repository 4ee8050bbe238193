"""``@pipeline``: trace a Python function into a :class:`~mlpipe.sdk.job.PipelineJob`.

The function runs once with a placeholder for each parameter; every node made
while it runs joins the pipeline. Node names come from the local variables the
nodes are assigned to (azure-ai-ml does the same by reading the function's
locals when it returns), else from the component name, made unique.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mlpipe.diagnostics import Diagnostic, Location, ValidationError, did_you_mean
from mlpipe.sdk.bindings import NodeOutput
from mlpipe.sdk.building import Builder, building, current_builder
from mlpipe.sdk.callsite import call_site
from mlpipe.sdk.io import Output, PipelineInput
from mlpipe.sdk.job import PipelineJob
from mlpipe.sdk.nodes import Node
from mlpipe.sdk.pipeline_node import PipelineComponentNode

_SETTINGS_KEYS = ("default_compute", "default_datastore", "continue_on_step_failure",
                  "force_rerun", "default_compute_target", "on_init", "on_finalize")


def _call_with_locals(func: Callable[..., Any], kwargs: dict[str, Any]
                      ) -> tuple[Any, dict[str, Any]]:
    """Call ``func`` and return its result and its local variables at return."""
    target = inspect.unwrap(func).__code__
    captured: dict[str, Any] = {}
    previous = sys.getprofile()
    if previous is not None and not inspect.isfunction(previous) and not inspect.ismethod(previous):
        # A C-level profiler (cProfile) is active: leave it alone; names fall back to
        # the component names.
        return func(**kwargs), {}

    def profiler(frame: Any, event: str, arg: Any) -> None:
        if event == "return" and frame.f_code is target:
            captured.clear()
            captured.update(frame.f_locals)
        if previous is not None:
            previous(frame, event, arg)

    sys.setprofile(profiler)
    try:
        result = func(**kwargs)
    finally:
        sys.setprofile(previous)
    return result, captured


def _name_nodes(nodes: list[Node], local_vars: Mapping[str, Any], func_name: str) -> None:
    """Name every node as azure-ai-ml's pipeline builder does.

    A node held by a local variable is named by its own ``name`` if it has one (set with
    ``node.name = ...``, or kept from ``parallel_run_function(name=...)``), else by the
    variable; two variables may not give one name. Every other node is named by its name
    or its component's (the variable's name when a variable holds a node of that
    component), made unique with ``_1``, ``_2``, ...
    """
    in_pipeline = {id(node) for node in nodes}
    chosen: dict[int, str] = {}
    counts: dict[str, int] = {}
    problems = []
    for var, value in local_vars.items():
        if not isinstance(value, Node) or id(value) not in in_pipeline:
            continue
        name = value.name or var
        if name == "_":
            continue
        if not _NODE_NAME.fullmatch(name):
            problems.append(Diagnostic(
                message=f"invalid step name {name!r}: a step name starts with a lower-case "
                        "letter or '_' and has only lower-case letters, digits and '_' "
                        "(azure-ai-ml refuses it)", key_path=f"jobs.{name}",
                location=value._site("name") or value._origin, code="name",
                hint=f"set {var}.name = {_sanitized(name)!r}"))
            continue
        if name in counts and id(value) not in chosen:
            problems.append(Diagnostic(
                message=f"two steps are named {name!r} in {func_name}() (azure-ai-ml refuses "
                        f"it): a step keeps the name of parallel_run_function(name=...) or the "
                        f"name set on it, whichever variable holds it",
                key_path=f"jobs.{name}", location=value._site("name") or value._origin,
                code="duplicate",
                hint=f"set {var}.name = {var!r} (or another unique name)"))
            continue
        chosen[id(value)] = name
        counts[name] = 1
    if problems:
        raise ValidationError(problems)
    by_component: dict[str, str] = {}
    for node in nodes:
        if id(node) in chosen:
            by_component[node.name or node._naming_stem()] = chosen[id(node)]
    for node in nodes:
        if id(node) not in chosen:
            target = node.name or node._naming_stem()
            if node.name is None and target in by_component:
                target = by_component[target]
            counts[target] = counts.get(target, 0) + 1
            suffix = "" if counts[target] == 1 else f"_{counts[target] - 1}"
            chosen[id(node)] = f"{_sanitized(target)}{suffix}"
        object.__setattr__(node, "name", chosen[id(node)])


_NODE_NAME = re.compile(r"[a-z_][a-z\d_]*")


def _sanitized(name: str) -> str:
    """azure-ai-ml's ``_sanitize_python_variable_name``: lower case, words joined by ``_``."""
    text = re.sub(" +", " ", re.sub(r"[\W_]", " ", name.lower())).strip()
    return ("n" + text if re.match(r"\d", text) else text).replace(" ", "_")


def _function_location(func: Callable[..., Any]) -> Location | None:
    try:
        file = inspect.getsourcefile(func)
        _, line = inspect.getsourcelines(func)
    except (OSError, TypeError):
        return None
    return Location(file=file, line=line, column=None)


def pipeline(func: Callable[..., Any] | None = None, *, name: str | None = None,
             version: str | None = None, display_name: str | None = None,
             description: str | None = None, experiment_name: str | None = None,
             tags: dict[str, str] | None = None, **kwargs: Any) -> Any:
    """Decorator (azure-ai-ml's ``dsl.pipeline``): calling the function builds a PipelineJob.

    Keyword settings: ``default_compute``, ``default_datastore``,
    ``continue_on_step_failure``, ``force_rerun``; ``properties`` and any other
    keyword are recorded in the YAML.
    """

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(f)
        origin = _function_location(f)
        script = Path(origin.file).resolve() if origin and origin.file else None

        @functools.wraps(f)
        def build(*args: Any, **call_kwargs: Any) -> Any:
            outer = current_builder()  # called inside another @pipeline: a pipeline component
            _check_keywords(f, signature, call_kwargs)
            try:
                bound = signature.bind(*args, **call_kwargs)
            except TypeError as exc:
                raise ValidationError([Diagnostic(message=f"{f.__name__}(): {exc}",
                                                  location=call_site(), code="type")]) from None
            bound.apply_defaults()
            values: dict[str, Any] = {}
            placeholders: dict[str, PipelineInput] = {}
            for param_name, value in bound.arguments.items():
                param = signature.parameters[param_name]
                if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                    raise ValidationError([Diagnostic(
                        message=f"{f.__name__}(): *args/**kwargs parameters are not supported",
                        location=origin, code="unsupported")])
                if value is inspect.Parameter.empty:
                    value = None
                values[param_name] = value
                placeholders[param_name] = PipelineInput(param_name, value)
            with building() as builder:
                result, local_vars = _call_with_locals(f, placeholders)
            if not builder.nodes:
                raise ValidationError([Diagnostic(
                    message=f"the @pipeline function {f.__name__}() made no steps: call a "
                            "parallel_run_function(...), command(...) or loaded component in it",
                    location=origin, code="no-steps")])
            _name_nodes(builder.nodes, local_vars, f.__name__)
            outputs = _pipeline_outputs(result, f.__name__)
            settings = {key: kwargs[key] for key in _SETTINGS_KEYS if key in kwargs}
            if "default_compute_target" in settings:
                settings.setdefault("default_compute", settings.pop("default_compute_target"))
            extra = {key: value for key, value in kwargs.items() if key not in _SETTINGS_KEYS}
            job = PipelineJob(
                name=name, display_name=display_name or f.__name__, description=description
                or inspect.getdoc(f), experiment_name=experiment_name, tags=tags,
                properties=extra.pop("properties", None),
                inputs={k: v for k, v in values.items() if v is not None},
                outputs=outputs,
                jobs={node.name: node for node in builder.nodes if node.name is not None},
                settings=settings, base_path=script.parent if script else Path.cwd(),
                source=script, extra=extra, origin=origin)
            if version is not None:
                job._extra["version"] = version
            if outer is not None:
                return _component_node(outer, job, name or f.__name__, values)
            return job

        build._mlpipe_pipeline = True  # type: ignore[attr-defined]
        # What ml_client.components.create_or_update(func) registers it as (a pipeline
        # component, as azure-ai-ml does; calling the function in a @pipeline uses it).
        build.name = name or f.__name__  # type: ignore[attr-defined]
        build.version = version  # type: ignore[attr-defined]
        build.type = "pipeline"  # type: ignore[attr-defined]
        build.display_name = display_name or f.__name__  # type: ignore[attr-defined]
        return build

    return decorate(func) if func is not None else decorate


def _component_node(outer: Builder, job: Any, name: str, values: dict[str, Any]) -> Node:
    """The ``type: pipeline`` step a nested ``@pipeline`` call adds to the outer pipeline."""
    component_name = name.lower().replace("-", "_")
    node = PipelineComponentNode(job, component_name, values)
    site = call_site()
    object.__setattr__(node, "_origin", site)
    object.__setattr__(node, "_call_site", site)
    object.__setattr__(node, "_template_name", component_name)
    for port in node.outputs.values():
        object.__setattr__(port, "_origin", site)
    outer.add(node)
    return node


def _check_keywords(f: Callable[..., Any], signature: inspect.Signature,
                    given: dict[str, Any]) -> None:
    """A keyword the function does not take, named with "did you mean" (before ``bind``,
    which would first complain about the parameter the keyword was meant for)."""
    parameters = signature.parameters
    if any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
        return
    names = [n for n, p in parameters.items()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    problems = []
    for key in given:
        if key not in names:
            hint = did_you_mean(key, names) or f"its parameters: {', '.join(names) or 'none'}"
            problems.append(Diagnostic(message=f"{f.__name__}() has no parameter {key!r}",
                                       location=call_site(), code="type", hint=hint))
    if problems:
        raise ValidationError(problems)


def _pipeline_outputs(result: Any, func_name: str) -> dict[str, Output]:
    """Bind the returned ``{name: node.outputs.x}`` to pipeline outputs."""
    if result is None:
        return {}
    if not isinstance(result, Mapping):
        raise ValidationError([Diagnostic(
            message=f"{func_name}() must return None or a dict of pipeline outputs "
                    f"(name -> node.outputs.<x>), not {type(result).__name__}",
            location=call_site(), code="type")])
    outputs: dict[str, Output] = {}
    problems = []
    for key, port in result.items():
        if not isinstance(port, NodeOutput):
            problems.append(Diagnostic(
                message=f"pipeline output {key!r} must be a node output (node.outputs.<x>), "
                        f"not {type(port).__name__}", key_path=f"outputs.{key}",
                location=call_site(), code="type"))
            continue
        settings = port.settings()
        output = Output(type=settings.pop("type", None) or port._declared_type, **settings)
        object.__setattr__(output, "_origin", port._origin)
        object.__setattr__(port, "_pipeline_output", str(key))
        outputs[str(key)] = output
    if problems:
        raise ValidationError(problems)
    return outputs
