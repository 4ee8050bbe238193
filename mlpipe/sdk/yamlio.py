"""Writing job documents as YAML (ruamel.yaml, block style, keys in the order given)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import LiteralScalarString


def _prepare(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _prepare(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_prepare(v) for v in value]
    if isinstance(value, str) and "\n" in value:
        return LiteralScalarString(value)
    return value


def dump_text(document: Mapping[str, Any]) -> str:
    """``document`` as YAML text: block style, two-space indent, list items indented."""
    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    stream = io.StringIO()
    yaml.dump(_prepare(document), stream)
    return stream.getvalue()
