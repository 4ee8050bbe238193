"""Literal values and data paths of inputs and outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from mlpipe.compiler.assets import AssetMap
from mlpipe.io_types import MODEL_TYPES, is_data_type
from mlpipe.schema.ranges import SettingError, to_int, to_number
from mlpipe.schema.yamlio import describe_value

INPUT_MODE_ALIASES = {"mount": "ro_mount"}
OUTPUT_MODE_ALIASES = {"mount": "rw_mount"}
DEFAULT_DATASTORE = "workspaceblobstore"


def literal_type(value: Any) -> str:
    """The input type a YAML scalar stands for."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def coerce_literal(value: Any, decl: dict[str, Any] | None,
                   bounds: bool = True) -> tuple[Any, str | None]:
    """``value`` converted to the declared type, or an error message.

    ``decl`` is a component input declaration (``type``, ``min``, ``max``, ``enum``); without
    ``bounds`` only the type is checked (a default: :func:`out_of_range` says the rest).
    """
    if not isinstance(decl, dict):
        return value, None
    type_ = decl.get("type")
    try:
        if type_ == "integer":
            value = to_int(value)
        elif type_ == "number":
            value = to_number(value)
        elif type_ == "boolean":
            value = _to_bool(value)
        elif type_ == "string":
            if isinstance(value, (dict, list)):
                raise SettingError(f"must be a string, got {describe_value(value)}", code="type")
            value = value if isinstance(value, str) else str(value)
        elif is_data_type(type_):
            raise SettingError(f"must be a {type_} input (a path or a binding), got "
                               f"{describe_value(value)}", code="type")
    except SettingError as exc:
        return value, exc.message
    return value, out_of_range(value, decl) if bounds else None


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise SettingError(f"must be a boolean (true or false), got {describe_value(value)}",
                       code="type")


# the documented service rule a default outside its own range runs into
# (azure-ai-ml's ``Input``: min/max "If a value larger than the maximum is passed to a job, the
# job execution will fail"; the component reference: enum is "the list of allowed values")
RANGE_RULE = ("Azure ML fails a job whose input value is outside the input's min, max or enum, "
              "and azure-ai-ml does not check it offline")


def default_out_of_range(decl: dict[str, Any], value: Any) -> str | None:
    """Why a literal input's ``default`` (``value``, of the declared type) is not one the input
    itself allows (``default must be <= 8, got 10``), or ``None``."""
    problem = out_of_range(value, decl)
    return f"default {problem}" if problem else None


def out_of_range(value: Any, decl: dict[str, Any]) -> str | None:
    """Why ``value`` (of the declared type) is not one the input allows: outside its ``enum``,
    ``min`` or ``max``; ``None`` when it is."""
    enum = decl.get("enum")
    if isinstance(enum, list) and enum and str(value) not in [str(e) for e in enum]:
        return f"must be one of {', '.join(str(e) for e in enum)}, got {value!r}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        low, high = decl.get("min"), decl.get("max")
        if isinstance(low, (int, float)) and not isinstance(low, bool) and value < low:
            return f"must be >= {low}, got {value}"
        if isinstance(high, (int, float)) and not isinstance(high, bool) and value > high:
            return f"must be <= {high}, got {value}"
    return None


def resolve_data_path(raw: str, type_: str, base_dir: Path, assets: AssetMap) -> tuple[str | None,
                                                                                       str | None]:
    """``(local absolute path, remote reference)`` for an input's ``path`` (one is set).

    An ``mltable`` input given the ``MLTable`` file itself resolves to its folder.
    """
    path, remote = assets.locate(raw, base_dir)
    if path is None:
        return None, remote
    if type_ == "mltable" and path.name == "MLTable" and path.is_file():
        path = path.parent
    return str(path), None


def remote_kind(type_: str | None) -> Literal["data", "model"]:
    return "model" if type_ in MODEL_TYPES else "data"


def mode_of(value: Any, aliases: dict[str, str]) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    return aliases.get(value, value)


__all__ = [
    "DEFAULT_DATASTORE",
    "INPUT_MODE_ALIASES",
    "OUTPUT_MODE_ALIASES",
    "RANGE_RULE",
    "coerce_literal",
    "default_out_of_range",
    "literal_type",
    "mode_of",
    "out_of_range",
    "remote_kind",
    "resolve_data_path",
]
