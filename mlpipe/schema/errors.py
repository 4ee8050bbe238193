"""Turn pydantic's validation errors into mlpipe diagnostics.

pydantic reports a location such as ``("jobs", "score", "parallel", "retry_settings",
"timeout")``, where ``"parallel"`` is the tag of a discriminated union, not a key.
:func:`resolve_loc` walks the model types (and the data) along that location to get
the real key path and the model that owns the last key, so unknown keys get a
"did you mean" from the keys that model really has.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, Discriminator, Tag
from pydantic_core import ErrorDetails

from mlpipe.diagnostics import Diagnostic, did_you_mean
from mlpipe.limits import MAX_SCHEMA_PROBLEMS
from mlpipe.schema.fields import TAGGED_UNIONS
from mlpipe.schema.lazy import lazy_member
from mlpipe.schema.yamlio import KeyPath, PositionMap, describe_value, format_key_path


@dataclass
class ResolvedLoc:
    path: KeyPath  # key path in the data
    owner: type[BaseModel] | None  # model whose field is the last key of ``path``
    annotation: Any  # declared type at ``path`` (None when unknown)
    is_key: bool = False  # the error is about a mapping key itself


def _unwrap(tp: Any) -> tuple[Any, dict[str, Any] | None]:
    """Strip Annotated; return (type, {tag: member}) for a discriminated union."""
    tags: dict[str, Any] | None = None
    while get_origin(tp) is typing.Annotated:
        later = lazy_member(tp)
        if later is not None:  # a member built on first use: its own type
            tp = later
            continue
        args = get_args(tp)
        if any(isinstance(meta, Discriminator) for meta in args[1:]):
            tags = {}
            for member in get_args(args[0]):
                tag = next((m.tag for m in get_args(member)[1:] if isinstance(m, Tag)), None) \
                    if get_origin(member) is typing.Annotated else None
                if tag is not None:
                    tags[tag] = member
            return args[0], tags
        tp = args[0]
    return tp, tags


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


def _field_type(model: type[BaseModel], key: str) -> tuple[bool, Any]:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            tp: Any = info.annotation
            if info.metadata:
                annotated = (tp, *info.metadata)
                tp = typing.Annotated[annotated]
            if info.discriminator is not None and isinstance(info.discriminator, Discriminator):
                tp = typing.Annotated[tp, info.discriminator]
            return True, tp
    return False, None


def model_keys(model: type[BaseModel]) -> list[str]:
    """The keys a model accepts, as written in YAML (aliases where set)."""
    return [info.alias or name for name, info in model.model_fields.items()]


def resolve_loc(root: type[BaseModel], loc: Sequence[str | int], data: Any) -> ResolvedLoc:
    """Map a pydantic ``loc`` onto the data's key path (see module docstring)."""
    path: list[str | int] = []
    tp: Any = root
    owner: type[BaseModel] | None = None
    node = data
    items = list(loc)
    i = 0
    is_key = False
    while i < len(items):
        seg = items[i]
        if tp is not None:
            base, tags = _unwrap(tp)
            if tags is not None and isinstance(seg, str) and seg in tags:
                tp = tags[seg]
                i += 1
                continue
            members = [m for m in get_args(base) if m is not type(None)] if _is_union(base) else []
            if tags is None and len(members) == 1:  # X | None: pydantic adds no segment
                tp = members[0]
                continue
            # an unknown tag: follow the data; a plain union stays a union (its member
            # labels, e.g. "str", are skipped below because they are not keys of the data)
            tp = None if tags is not None else base
        if seg == "[key]":
            is_key = True
            i += 1
            continue
        is_data_key = (isinstance(node, dict) and seg in node) or (
            isinstance(node, list) and isinstance(seg, int) and 0 <= seg < len(node))
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            known, field_tp = _field_type(tp, str(seg))
            if known or is_data_key or not isinstance(node, dict):
                owner = tp
                path.append(seg)
                tp = field_tp if known else None
                node = node.get(seg) if isinstance(node, dict) else None
                i += 1
                continue
        origin = get_origin(tp)
        if origin is dict and (is_data_key or not isinstance(node, dict)):
            path.append(seg)
            owner = None
            tp = get_args(tp)[1] if get_args(tp) else None
            node = node.get(seg) if isinstance(node, dict) else None
            i += 1
            continue
        if origin is list and isinstance(seg, int):
            path.append(seg)
            owner = None
            tp = get_args(tp)[0] if get_args(tp) else None
            node = node[seg] if is_data_key else None
            i += 1
            continue
        if is_data_key or (tp is None and not isinstance(node, (dict, list))):
            if is_data_key:
                path.append(seg)
                node = node[seg]
            owner = None
            tp = None
            i += 1
            continue
        # a union member label (e.g. "str", "function-plain[...]"): not a key
        tp = None
        i += 1
    return ResolvedLoc(tuple(path), owner, tp, is_key)


def _model_in(tp: Any) -> type[BaseModel] | None:
    """The model class inside ``X | None`` / ``Annotated[X, ...]``, if any."""
    base, _ = _unwrap(tp)
    members = [_unwrap(m)[0] for m in get_args(base)] if _is_union(base) else [base]
    models = []
    for member in members:
        if _is_union(member):  # Optional[discriminated union]
            members.extend(_unwrap(m)[0] for m in get_args(member))
        elif isinstance(member, type) and issubclass(member, BaseModel):
            models.append(member)
    return models[0] if len(models) == 1 else None


def _nested_home(owner: type[BaseModel], key: str) -> str | None:
    """The key of ``owner`` whose mapping accepts ``key`` (``timeout`` -> ``retry_settings``)."""
    for name, info in owner.model_fields.items():
        nested = _model_in(info.annotation)
        if nested is not None and key in model_keys(nested):
            return info.alias or name
    return None


def _literal_choices(tp: Any) -> list[Any]:
    base, _ = _unwrap(tp) if tp is not None else (None, None)
    if _is_union(base):
        for member in get_args(base):
            member, _ = _unwrap(member)
            if get_origin(member) is Literal:
                return list(get_args(member))
    if get_origin(base) is Literal:
        return list(get_args(base))
    return []


def _value_at(data: Any, path: KeyPath) -> tuple[bool, Any]:
    node = data
    for seg in path:
        present = (isinstance(node, dict) and seg in node) or (
            isinstance(node, list) and isinstance(seg, int) and 0 <= seg < len(node))
        if not present:
            return False, None
        node = node[seg]
    return True, node


def translate_errors(root: type[BaseModel], errors: Sequence[ErrorDetails], data: Any,
                     positions: PositionMap, prefix: KeyPath = ()) -> list[Diagnostic]:
    """pydantic errors of ``root.model_validate(data)`` -> diagnostics with positions."""
    out: list[Diagnostic] = []
    seen: set[tuple[str, str]] = set()
    for index, err in enumerate(errors):
        if len(out) >= MAX_SCHEMA_PROBLEMS:
            out.append(Diagnostic(f"... and {len(errors) - index:,} more schema problems not "
                                  f"shown (at most {MAX_SCHEMA_PROBLEMS} are reported)",
                                  location=positions.locate(prefix), code="input-limit"))
            break
        diag = _translate_one(root, err, data, positions, prefix)
        key = (diag.key_path, diag.message)
        if key not in seen:
            seen.add(key)
            out.append(diag)
    return _without_covered(out)


def _without_covered(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Drop a union member's "must be a mapping" where another member's message at the same
    key already says what is expected, a mapping included ("a binding ... or a mapping")."""
    covered = {d.key_path for d in diagnostics if "or a mapping" in d.message}
    return [d for d in diagnostics
            if not (d.key_path in covered and d.message.startswith("must be a mapping, got"))]


# pydantic's type errors -> what the value must be.
_EXPECTED = {
    "string_type": "a string",
    "str_type": "a string",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "mapping_type": "a mapping",
    "list_type": "a list",
    "tuple_type": "a list",
    "iterable_type": "a list",
}


def _translate_one(root: type[BaseModel], err: ErrorDetails, data: Any, positions: PositionMap,
                   prefix: KeyPath) -> Diagnostic:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    value = err.get("input")
    res = resolve_loc(root, err["loc"], data)
    path = res.path
    full = prefix + path
    location = positions.locate(full)
    hint: str | None = None
    code = "type"
    got = describe_value(value)

    if kind == "extra_forbidden":
        key = str(path[-1]) if path else "?"
        choices = model_keys(res.owner) if res.owner else []
        message = f"unknown key '{key}'"
        hint = did_you_mean(key, choices)
        home = _nested_home(res.owner, key) if res.owner else None
        if home:
            hint = f"'{key}' belongs under '{home}'"
        if hint is None and choices:
            hint = "allowed here: " + ", ".join(sorted(choices))
            if len(hint) > 200:
                hint = None
        code = "unknown-key"
    elif kind == "missing":
        key = str(path[-1]) if path else "?"
        message = f"required key '{key}' is missing"
        location = positions.locate(full[:-1])
        code = "missing"
    elif kind == "node_type":
        present, node = _value_at(data, path)
        from mlpipe.schema.pipeline import NODE_TYPES

        step_types = ", ".join(NODE_TYPES)
        if isinstance(node, dict) and "type" in node:
            kind_value = node["type"]
            shown = repr(kind_value) if isinstance(kind_value, str) else describe_value(kind_value)
            message = f"unknown step type {shown}: must be one of {step_types}"
            hint = did_you_mean(str(kind_value), NODE_TYPES)
            full = full + ("type",)
            location = positions.locate(full)
            code = "enum"
        elif isinstance(node, dict):
            message = f"required key 'type' is missing: a step's type is one of {step_types}"
            full = full + ("type",)
            code = "missing"
        else:
            message = f"must be a step mapping with a 'type', got {describe_value(node)}"
    elif kind in TAGGED_UNIONS:
        message, hint, code, full = _tagged_union_error(kind, str(err["msg"]), data, path, full)
        location = positions.locate(full)
    elif kind in ("input_kind", "output_kind", "component_kind"):
        message = f"{err['msg']}, got {got}"
    elif "message" in ctx and kind not in ("literal_error",):
        message = str(ctx["message"])
        hint = ctx.get("hint")
        code = kind
    elif kind == "literal_error":
        choices = _literal_choices(res.annotation)
        shown = ", ".join(str(c) for c in choices) if choices else str(ctx.get("expected", ""))
        if len(choices) == 1:
            message = f"must be '{choices[0]}', got {got}"
        else:
            message = f"must be one of {shown}, got {got}"
        if isinstance(value, str) and choices:
            hint = did_you_mean(value, [str(c) for c in choices])
        code = "enum"
        if path and path[-1] == "type" and len(choices) == 1 and isinstance(value, str):
            hint = hint or _wrong_document_hint(choices[0], value)
    elif kind == "int_from_float":
        message = f"must be a whole number, got {value!r}"
    elif kind in _EXPECTED:
        message = f"must be {_EXPECTED[kind]}, got {got}"
    elif kind == "too_short":
        message = "must not be empty"
        if full == ("jobs",):
            message = "a pipeline must declare at least one step"
        code = "range"
    elif kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        bound = next(iter(ctx.values()), "?")
        op = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=",
              "less_than": "<"}[kind]
        message = f"must be {op} {bound}, got {value!r}"
        code = "range"
    elif kind == "union_tag_not_found":
        message = f"required key '{ctx.get('discriminator', 'type')}' is missing"
        code = "missing"
    else:
        message = str(err.get("msg", "invalid value"))
        code = "invalid"
    if res.is_key:
        parent = full[-2] if len(full) >= 2 else ""
        what = {"jobs": "step name", "inputs": "input name", "outputs": "output name"}.get(
            str(parent), "name"
        )
        message = (f"{what} '{full[-1] if full else value}' is not an identifier: use letters, "
                   f"digits and '_', not starting with a digit")
        location = positions.locate(full)
        code = "name"
        hint = None
    return Diagnostic(message, key_path=format_key_path(full), location=location, severity="error",
                      code=code, hint=hint)


def _tagged_union_error(kind: str, what: str, data: Any, path: KeyPath, full: KeyPath
                        ) -> tuple[str, str | None, str, KeyPath]:
    """(message, hint, code, key path) of a mapping whose ``type`` (or ``task``) chooses no
    member of its union."""
    key, choices = TAGGED_UNIONS[kind]
    _, node = _value_at(data, path)
    if not isinstance(node, dict):
        return f"must be a mapping with a '{key}', got {describe_value(node)}", None, "type", full
    if key not in node:
        return (f"required key '{key}' is missing: the {what} is one of {', '.join(choices)}",
                None, "missing", full)
    value = node[key]
    shown = repr(value) if isinstance(value, str) else describe_value(value)
    hint = did_you_mean(value.lower(), choices) if isinstance(value, str) else None
    return (f"unknown {what} {shown}: must be one of {', '.join(choices)}", hint, "enum",
            full + (key,))


def _wrong_document_hint(expected: str, got: str) -> str | None:
    if expected == "pipeline" and got in ("parallel", "command"):
        return f"this looks like a {got} component: use 'mlpipe component validate'"
    if expected in ("parallel", "command") and got == "pipeline":
        return "this looks like a pipeline job: use 'mlpipe job validate'"
    return None
