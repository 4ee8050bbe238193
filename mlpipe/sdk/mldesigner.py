"""``mldesigner.command_component``: a Python function as a command component.

As mldesigner does with azure-ai-ml installed, the decorator reads the function's
parameters (``Input(...)``/``Output(...)`` annotations, ``int``/``float``/``str``/``bool``
annotations or defaults) and return annotation, and makes a
:class:`~mlpipe.sdk.components.CommandComponent` whose code is the function's folder and
whose command runs the function in a fresh process:
``mldesigner execute --source <file> --name <component> --inputs a='${{inputs.a}}' ...
--outputs o='${{outputs.o}}'``. mlpipe runs that command with its own executor
(:mod:`mlpipe.sdk.mldesigner_exec`, the step's ``mldesigner`` is that module). The
decorated function stays a function: called in a ``@pipeline`` it adds a step, called
outside one it is a command job, as azure-ai-ml's component functions are;
``func.component`` is the component (``ml_client.components.create_or_update(func)``
registers it).
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from mlpipe.diagnostics import Diagnostic, Location, ValidationError
from mlpipe.sdk.callsite import call_site, caller_dir
from mlpipe.sdk.components import CommandComponent
from mlpipe.sdk.entities import Environment, environment_value
from mlpipe.sdk.io import Input as SdkInput
from mlpipe.sdk.io import Output as SdkOutput

F = TypeVar("F", bound=Callable[..., Any])

# azure-ai-ml's environment for a component that names none (the cloud's mldesigner image).
DEFAULT_ENVIRONMENT = "azureml://registries/azureml/environments/mldesigner/labels/latest"
# The name of the output a function's return annotation declares.
RETURN_OUTPUT = "output"
PRIMITIVES: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}
# Set by the executor while it imports a component's file: the decorator then only records
# the function (no component document is written in the step's process).
EXECUTING_FLAG = "MLPIPE_MLDESIGNER_EXECUTING"


class Input(SdkInput):
    """mldesigner's ``Input``: ``Input(type="uri_folder")``, ``Input(type="integer", min=1,
    max=5, optional=True)``, ``is_control`` accepted (kept for the cloud)."""


class Output(SdkOutput):
    """mldesigner's ``Output``: a data output (``Output(type="uri_folder")``) as a parameter
    annotation; in a return annotation also a primitive (``Output(type="integer",
    is_control=True)``)."""

    def __init__(self, *, type: str | None = "uri_folder", path: str | None = None,
                 mode: str | None = None, description: str | None = None,
                 **kwargs: Any) -> None:
        primitive = type in PRIMITIVES.values()
        super().__init__(type="uri_folder" if primitive else type, path=path, mode=mode,
                         description=description, **kwargs)
        if primitive:
            self.type = type


@dataclass
class Port:
    """One parameter of a component function: its kind (``input``, ``output``) and declaration."""

    name: str
    kind: str
    declaration: dict[str, Any]
    returned: bool = False  # the output of the function's return value

    @property
    def optional(self) -> bool:
        return bool(self.declaration.get("optional"))


@dataclass
class Signature:
    """What a component function declares: its ports in parameter order, then the return's."""

    function: str
    ports: list[Port] = field(default_factory=list)

    def inputs(self) -> dict[str, dict[str, Any]]:
        return {p.name: p.declaration for p in self.ports if p.kind == "input"}

    def outputs(self) -> dict[str, dict[str, Any]]:
        return {p.name: p.declaration for p in self.ports if p.kind == "output"}


def _bad(function: Callable[..., Any], message: str, hint: str) -> ValidationError:
    code = getattr(function, "__code__", None)
    where = (Location(file=code.co_filename, line=code.co_firstlineno) if code is not None
             else call_site())
    return ValidationError([Diagnostic(
        f"@command_component {function.__name__}(): {message}", location=where, code="type",
        hint=hint)])


def _declaration(port: SdkInput | SdkOutput) -> dict[str, Any]:
    data = port.to_dict()
    data.pop("is_control", None)  # azure-ai-ml leaves it out of the component it makes
    data.pop("early_available", None)
    return data


def _parameter_port(function: Callable[..., Any], param: inspect.Parameter) -> Port:
    annotation, default = param.annotation, param.default
    if isinstance(annotation, type) and issubclass(annotation, (SdkInput, SdkOutput)):
        annotation = annotation()
    if isinstance(annotation, SdkOutput):
        if annotation.type in PRIMITIVES.values():
            raise _bad(function, f"parameter '{param.name}' is a {annotation.type} Output: a "
                       "primitive output is the function's return value",
                       f"write '-> Output(type=\"{annotation.type}\")' as the return annotation")
        return Port(param.name, "output", _declaration(annotation))
    if isinstance(annotation, SdkInput):
        declaration = _declaration(annotation)
        if default is not param.empty and default is not None and annotation.is_literal:
            declaration["default"] = default
        return Port(param.name, "input", declaration)
    if annotation is param.empty:
        if default is param.empty or default is None:
            raise _bad(function, f"parameter '{param.name}' has no type: it has no annotation "
                       "and no default", f"annotate it, e.g. '{param.name}: int' or "
                       f"'{param.name}: Input(type=\"uri_folder\")', or give it a default")
        annotation = type(default)
    if annotation in PRIMITIVES:
        declaration = {"type": PRIMITIVES[annotation]}
        if default is not param.empty and default is not None:
            declaration["default"] = default
        return Port(param.name, "input", declaration)
    shown = getattr(annotation, "__name__", repr(annotation))
    raise _bad(function, f"parameter '{param.name}' has the unsupported type {shown}",
               "use Input(type=...) or Output(type=...), or int, float, str or bool")


def _return_ports(function: Callable[..., Any], annotation: Any) -> list[Port]:
    if annotation in (inspect.Signature.empty, None, type(None)):
        return []
    if annotation in PRIMITIVES:
        return [Port(RETURN_OUTPUT, "output", {"type": PRIMITIVES[annotation]}, returned=True)]
    if isinstance(annotation, SdkOutput) and annotation.type in PRIMITIVES.values():
        return [Port(RETURN_OUTPUT, "output", _declaration(annotation), returned=True)]
    shown = getattr(annotation, "__name__", repr(annotation))
    raise _bad(function, f"the return annotation {shown} is not supported",
               "return an int, float, str or bool (annotate '-> int' or "
               "'-> Output(type=\"integer\")'); data goes to an Output parameter")


def signature_of(function: Callable[..., Any]) -> Signature:
    """The ports ``function``'s parameters and return annotation declare."""
    sig = inspect.signature(function)
    found = Signature(function.__name__)
    for param in sig.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise _bad(function, f"'{param}' is not supported: a component's inputs are named",
                       "declare each input as its own parameter")
        found.ports.append(_parameter_port(function, param))
    found.ports.extend(_return_ports(function, sig.return_annotation))
    return found


def command_line(source: str, name: str, signature: Signature) -> str:
    """mldesigner's command for the component: each input and output as ``name='${{...}}'``,
    an optional input inside ``$[[...]]``."""
    def argument(port: Port) -> str:
        scope = "inputs" if port.kind == "input" else "outputs"
        text = f"{port.name}='${{{{{scope}.{port.name}}}}}'"
        return f"$[[{text}]]" if port.optional else text

    parts = ["mldesigner", "execute", "--source", source, "--name", name]
    for kind, flag in (("input", "--inputs"), ("output", "--outputs")):
        ports = [argument(p) for p in signature.ports if p.kind == kind]
        if ports:
            parts += [flag, *ports]
    return " ".join(parts)


def _environment(value: Any, base: Path) -> Any:
    """mldesigner's ``environment=``: a reference string kept, a YAML file (relative to the
    decorator's file) read, a dict or Environment as the YAML mapping."""
    if value is None:
        return DEFAULT_ENVIRONMENT
    if isinstance(value, (str, os.PathLike)) and not str(value).startswith("azureml:"):
        from mlpipe.schema import load_yaml_file

        path = (base / Path(os.fspath(value))).resolve()
        value = dict(load_yaml_file(str(path)).data or {})
        value.pop("$schema", None)
        base = path.parent
    if isinstance(value, Environment):
        value = environment_value(value)
    if isinstance(value, Mapping):
        value = {str(k): os.fspath(v) if isinstance(v, os.PathLike) else v
                 for k, v in value.items()}
        conda = value.get("conda_file")
        if isinstance(conda, str):
            value["conda_file"] = str((base / conda).resolve())
    return value


def _make_component(function: Callable[..., Any], settings: dict[str, Any], base: Path,
                    signature: Signature) -> CommandComponent:
    source = Path(inspect.getfile(function)).resolve()
    if not source.is_file():
        raise _bad(function, f"its source file {source} does not exist (a function defined in "
                   "a notebook cell has none)", "define the component in a .py file and "
                   "import it")
    code = settings.pop("code", None)
    code_dir = (base / Path(os.fspath(code))).resolve() if code else source.parent
    if not source.is_relative_to(code_dir):
        raise _bad(function, f"its file {source} is not under its code folder {code_dir}",
                   "give code= a folder that holds the function's file")
    name = settings.pop("name", None) or function.__name__
    description = settings.pop("description", None) or function.__doc__
    return CommandComponent(
        name=name, version=settings.pop("version", None),
        display_name=settings.pop("display_name", None) or name,
        description=description,
        tags={**(settings.pop("tags", None) or {}), "codegenBy": "mldesigner"},
        is_deterministic=settings.pop("is_deterministic", None) is not False,
        inputs=signature.inputs() or None, outputs=signature.outputs() or None,
        command=command_line(source.relative_to(code_dir).as_posix(), name, signature),
        code=str(code_dir),
        environment=_environment(settings.pop("environment", None), base),
        **{key: value for key, value in settings.items() if value is not None})


def command_component(
    func: F | None = None,
    *,
    name: str | None = None,
    version: str | None = None,
    display_name: str | None = None,
    description: str | None = None,
    is_deterministic: bool | None = None,
    tags: dict[str, str] | None = None,
    environment: Any = None,
    distribution: Any = None,
    resources: Any = None,
    code: str | os.PathLike[str] | None = None,
) -> Any:
    """mldesigner's ``@command_component(...)`` (also bare ``@command_component``): the
    function becomes a command component. ``environment`` is a YAML file (relative to the
    decorator's file), a dict, an ``Environment`` or an ``azureml:`` reference; ``code``
    defaults to the function's folder."""
    base = caller_dir()
    settings = {"name": name, "version": None if version is None else str(version),
                "display_name": display_name, "description": description,
                "is_deterministic": is_deterministic, "tags": tags, "environment": environment,
                "distribution": distribution, "resources": resources, "code": code}

    def decorate(function: F) -> F:
        signature = signature_of(function)
        component = (None if os.environ.get(EXECUTING_FLAG) == "1"
                     else _make_component(function, dict(settings), base, signature))

        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            if component is None:  # the executor calls the function itself, never this
                raise RuntimeError(f"{function.__name__}() is being executed as a component")
            return component(*args, **kwargs)

        call._is_mldesigner_component = True  # type: ignore[attr-defined]
        call.component = component  # type: ignore[attr-defined]
        call._mldesigner_signature = signature  # type: ignore[attr-defined]
        call._mldesigner_name = settings["name"] or function.__name__  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    if func is not None:
        return decorate(func)
    return decorate


def as_component(entity: Any) -> Any:
    """The component of a ``@command_component`` function (anything else as it is)."""
    if getattr(entity, "_is_mldesigner_component", False):
        return entity.component
    return entity


__all__ = ["Input", "Output", "as_component", "command_component", "signature_of"]
