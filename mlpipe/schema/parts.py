"""The parts of a document that validated, when the whole of it did not.

``validate_parts(Model, data)`` is the model when ``data`` is valid; otherwise a
:class:`Partial` holding, key by key, what validates on its own (a model, a
``Partial`` again for a mapping of a model type, each entry of a ``dict`` field on
its own, a step of ``jobs:`` by its ``type``), and :data:`INVALID` where a value did
not validate (its error is already among the document's diagnostics). The compiler
reads the validated tree, through :func:`plain`, never the YAML data again.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, ForwardRef, Literal, Union, get_args, get_origin

from pydantic import BaseModel, Discriminator, Tag, TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from mlpipe.schema.lazy import lazy_member


class Invalid:
    """The value of a key whose value did not validate (falsy; one instance: :data:`INVALID`)."""

    def __repr__(self) -> str:
        return "<invalid>"

    def __bool__(self) -> bool:
        return False


INVALID = Invalid()


@dataclass(frozen=True)
class Partial:
    """A mapping meant as a ``model`` that did not validate as a whole: the value of each
    of its keys (as written) that did, or :data:`INVALID`."""

    model: type[BaseModel]
    values: dict[str, Any]


def validate_parts(tp: Any, value: Any, owner: type[BaseModel] | None = None) -> Any:
    """``value`` validated as ``tp``; where that fails, as much of it as validates."""
    try:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return tp.model_validate(value)
        return _adapter(tp).validate_python(value)
    except PydanticValidationError:
        return _parts(tp, value, owner)


def plain(tree: Any) -> Any:
    """A validated tree as plain dicts, lists and scalars: the keys that were written
    (by their YAML names), the values as the models hold them (normalised)."""
    if isinstance(tree, BaseModel):
        fields = type(tree).model_fields
        out = {(fields[name].alias or name): plain(getattr(tree, name))
               for name in fields if name in tree.model_fields_set}
        out.update({k: plain(v) for k, v in (tree.__pydantic_extra__ or {}).items()})
        return out
    if isinstance(tree, Partial):
        return {k: plain(v) for k, v in tree.values.items()}
    if isinstance(tree, dict):
        return {k: plain(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [plain(v) for v in tree]
    return tree


def _parts(tp: Any, value: Any, owner: type[BaseModel] | None) -> Any:
    if not isinstance(value, dict):
        return INVALID
    chosen = _tagged(tp, value, owner)
    members = _members(_strip(chosen if chosen is not None else tp, owner), owner)
    model = _member_for([m for m in members if isinstance(m, type)], value)
    if model is not None:
        return _model_parts(model, value)
    mappings = [m for m in members if get_origin(m) is dict]
    if len(mappings) == 1:
        item = get_args(mappings[0])[1]
        return {k: validate_parts(item, v, owner) for k, v in value.items()}
    return INVALID


def _tagged(tp: Any, value: Any, owner: type[BaseModel] | None) -> Any:
    """The member of a union with a callable ``Discriminator`` that ``value`` is meant as."""
    while get_origin(tp) in (Union, types.UnionType):  # Optional[...]: the non-None member
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) != 1:
            return None
        tp = args[0]
    if get_origin(tp) is not Annotated:
        return None
    union, *metadata = get_args(tp)
    choose = next((m.discriminator for m in metadata
                   if isinstance(m, Discriminator) and callable(m.discriminator)), None)
    if choose is None:
        return _tagged(union, value, owner)
    tag = choose(value)
    for member in get_args(_strip(union, owner)):
        if get_origin(member) is Annotated and any(
                isinstance(m, Tag) and m.tag == tag for m in get_args(member)[1:]):
            return member
    return None


def _model_parts(model: type[BaseModel], value: dict[str, Any]) -> Partial:
    keys = {(f.alias or name): name for name, f in model.model_fields.items()}
    values = {}
    for key, item in value.items():
        name = keys.get(key, key if key in model.model_fields else None)
        if name is not None:
            values[key] = validate_parts(_field_type(model, name), item, model)
    return Partial(model, values)


@cache
def _field_type(model: type[BaseModel], name: str) -> Any:
    field = model.model_fields[name]
    if not field.metadata:
        return field.annotation
    args = (field.annotation, *field.metadata)
    return Annotated[args]


_ADAPTERS: dict[int, tuple[Any, TypeAdapter[Any]]] = {}


def _adapter(tp: Any) -> TypeAdapter[Any]:
    found = _ADAPTERS.get(id(tp))
    if found is None or found[0] is not tp:
        found = _ADAPTERS[id(tp)] = (tp, TypeAdapter(tp))
    return found[1]


def _strip(tp: Any, owner: type[BaseModel] | None) -> Any:
    """``tp`` without ``Annotated`` wrappers, forward references resolved in ``owner``'s module."""
    while True:
        if isinstance(tp, (str, ForwardRef)) and owner is not None:
            name = tp if isinstance(tp, str) else tp.__forward_arg__
            tp = getattr(sys.modules[owner.__module__], name, None)
        elif get_origin(tp) is Annotated:
            later = lazy_member(tp)
            tp = later if later is not None else get_args(tp)[0]
        else:
            return tp


def _members(tp: Any, owner: type[BaseModel] | None) -> list[Any]:
    """The model classes and ``dict[K, V]`` types of a union (nested unions and ``Optional``
    flattened)."""
    if get_origin(tp) in (Union, types.UnionType):
        return [m for arg in get_args(tp) for m in _members(_strip(arg, owner), owner)]
    if (isinstance(tp, type) and issubclass(tp, BaseModel)) or get_origin(tp) is dict:
        return [tp]
    return []


def _member_for(models: list[type[BaseModel]], value: dict[str, Any]) -> type[BaseModel] | None:
    """The one model a mapping is meant as: the only one, or the one whose ``type`` fits."""
    if len(models) == 1:
        return models[0]
    kind = value.get("type")
    kind = kind.lower() if isinstance(kind, str) else kind
    fits = [m for m in models if "type" in m.model_fields
            and kind in _literals(m.model_fields["type"].annotation)]
    return fits[0] if len(fits) == 1 else None


def _literals(tp: Any) -> tuple[Any, ...]:
    tp = _strip(tp, None)
    if get_origin(tp) is Literal:
        return get_args(tp)
    if get_origin(tp) in (Union, types.UnionType):
        return tuple(v for arg in get_args(tp) for v in _literals(arg))
    return ()


def part(tree: Any, *keys: str) -> Any:
    """The validated value at ``keys`` (YAML key names) of a validated tree; ``None`` when a
    key was not written, :data:`INVALID` when its value did not validate."""
    for key in keys:
        if isinstance(tree, BaseModel):
            fields = type(tree).model_fields
            name = next((n for n, f in fields.items() if (f.alias or n) == key), None)
            if name is None:
                tree = (tree.__pydantic_extra__ or {}).get(key)
            else:
                tree = getattr(tree, name) if name in tree.model_fields_set else None
        elif isinstance(tree, Partial):
            tree = tree.values.get(key)
        elif isinstance(tree, dict):
            tree = tree.get(key)
        else:
            return INVALID if isinstance(tree, Invalid) else None
    return tree


__all__ = ["INVALID", "Invalid", "Partial", "part", "plain", "validate_parts"]
