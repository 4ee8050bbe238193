"""Machine output as ``az`` writes it: ``--query`` (JMESPath) and ``-o
json|jsonc|yaml|yamlc|tsv|table|none``, with the semantics of knack, the library ``az`` is
built on (``knack/output.py``, ``knack/query.py``):

- ``--query`` runs on the result with ``jmespath.Options(dict_cls=OrderedDict)``: a
  multiselect hash keeps the order it was written in; a result of ``null`` prints nothing;
- ``json`` / ``jsonc``: keys sorted, two-space indent, non-ASCII kept (no colours here);
- ``yaml`` / ``yamlc``: ``yaml.safe_dump`` block style, keys sorted;
- ``tsv``: one line per item of a list (else one line); a mapping gives its values, sorted by
  key unless it came from a multiselect hash, a nested list its length, a nested mapping an
  empty field, ``None`` the text ``None``; a lone boolean is ``true``/``false``;
- ``table``: one row per item, the scalar values of each mapping under its keys with the
  first letter capitalised (``id``, ``type``, ``etag`` left out; keys sorted unless
  ``--query`` is given), in tabulate's ``simple`` layout (columns two spaces apart, each at
  least two wider than its header, a dashed line under the header);
- ``none``: nothing.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import jmespath
import yaml

FORMATS: tuple[str, ...] = ("json", "jsonc", "yaml", "yamlc", "table", "tsv", "none")
TABLE_SKIPPED_KEYS = ("id", "type", "etag")
TABLE_MIN_PADDING = 2


def compile_query(text: str) -> Any:
    """A compiled JMESPath expression; ``ValueError`` naming the problem when it is not one."""
    try:
        return jmespath.compile(text)
    except (jmespath.exceptions.JMESPathError, KeyError) as error:
        raise ValueError(f"invalid JMESPath query {text!r}: {error}") from None


def run_query(query: Any, data: Any) -> Any:
    """``query`` on ``data`` as az runs it (multiselect hashes keep their order)."""
    return query.search(plain(data), jmespath.Options(dict_cls=OrderedDict))


def plain(data: Any) -> Any:
    """``data`` as JSON values (dates and paths as text), mappings kept as they are."""
    if isinstance(data, Mapping):
        return type(data)((str(k), plain(v)) for k, v in data.items()) \
            if isinstance(data, OrderedDict) else {str(k): plain(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [plain(item) for item in data]
    if data is None or isinstance(data, (str, int, float, bool)):
        return data
    return str(data)


def render(result: Any, output: str, *, query_active: bool = False) -> str:
    """``result`` written as ``output`` (one of :data:`FORMATS`); ``""`` for ``None``."""
    if result is None or output == "none":
        return ""
    if output in ("json", "jsonc"):
        return json.dumps(result, ensure_ascii=False, indent=2, sort_keys=True,
                          separators=(",", ": "), default=str) + "\n"
    if output in ("yaml", "yamlc"):
        return str(yaml.safe_dump(json.loads(json.dumps(result, default=str)),
                                  default_flow_style=False, allow_unicode=True))
    rows = result if isinstance(result, list) else [result]
    if output == "tsv":
        return "".join(_tsv_row(row) + "\n" for row in rows)
    return table(rows, sort_keys=not query_active)


# -- tsv ------------------------------------------------------------------------------------------

def _tsv_field(value: Any) -> str:
    if isinstance(value, list):
        return str(len(value))
    if isinstance(value, dict):
        return ""
    return value if isinstance(value, str) else str(value)


def _tsv_row(row: Any) -> str:
    if isinstance(row, OrderedDict):
        values = list(row.values())
    elif isinstance(row, dict):
        values = [value for _key, value in sorted(row.items())]
    elif isinstance(row, list):
        values = row
    elif isinstance(row, bool):
        return str(row).lower()
    else:
        return _tsv_field(row)
    return "\t".join(_tsv_field(value) for value in values)


# -- table ----------------------------------------------------------------------------------------

def _table_item(item: Any, sort_keys: bool) -> dict[str, Any]:
    if isinstance(item, dict):
        keys = sorted(item) if sort_keys else list(item)
        return {key[:1].upper() + key[1:]: item[key] for key in keys
                if key not in TABLE_SKIPPED_KEYS
                and item[key] is not None and not isinstance(item[key], (list, dict, set))}
    if isinstance(item, list):
        return {f"Column{index + 1}": value for index, value in enumerate(item)}
    return {"Result": item}


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def table(rows: list[Any], *, sort_keys: bool = True) -> str:
    """az's ``-o table`` of ``rows`` (see the module doc)."""
    items = [_table_item(row, sort_keys) for row in rows]
    headers: list[str] = []
    for item in items:
        headers += [key for key in item if key not in headers]
    if not headers:  # nothing to show (no rows, or no scalar values): an empty line, as az
        return "\n"
    columns = [[_cell(item.get(header)) for item in items] for header in headers]
    widths = [max(len(header) + TABLE_MIN_PADDING, *(len(cell) for cell in column))
              for header, column in zip(headers, columns, strict=True)]

    def line(cells: list[str]) -> str:
        padded = (cell.ljust(width) for cell, width in zip(cells, widths, strict=True))
        return "  ".join(padded).rstrip()

    lines = [line(headers), line(["-" * width for width in widths])]
    lines += [line([column[index] for column in columns]) for index in range(len(items))]
    return "\n".join(lines) + "\n"


__all__ = ["FORMATS", "compile_query", "plain", "render", "run_query", "table"]
