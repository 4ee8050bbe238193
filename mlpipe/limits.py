"""Hard limits on the size and shape of what mlpipe reads, in one place.

Every YAML reader (pipeline and component files, MLTable files, conda files,
``--set`` values, the SDK's ``load_job``) checks its text with
:func:`check_yaml_text` before composing it, and every file with
:func:`check_file_size` before reading it, so a hostile or broken file ends in a
clear error instead of eating memory ("billion laughs" aliases), time, or the
interpreter's stack (deep nesting).

The check is a single pass over libyaml's event stream with a depth counter: it
never recurses, so it is safe on input the recursive composers would crash on.
Aliases are charged the size of the node they repeat (expanded nodes, not alias
tokens), so an alias bomb is stopped long before it is expanded. The limits are
far above anything a real pipeline needs (the largest corpus file has a few
thousand nodes and a nesting depth under 15).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import yaml
from yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    MappingStartEvent,
    ScalarEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

from mlpipe.errors import MlpipeError

MAX_FILE_BYTES = 8 * 1024 * 1024
"""Largest YAML file read (8 MiB)."""
MAX_DEPTH = 100
"""Deepest nesting of mappings and lists in a YAML document."""
MAX_NODES = 100_000
"""Most nodes (keys, values, list items) in a document, counting every alias expansion."""
MAX_KEYS = 40_000
"""Most mapping keys written in a document."""
MAX_INT_DIGITS = 100
"""Longest integer (in digits) in YAML or in a setting written as a string."""
MAX_FILTER_CHARS = 4_000
"""Longest MLTable ``filter`` expression."""
MAX_FILTER_DEPTH = 100
"""Deepest nesting of an MLTable ``filter`` expression (``a + b + c`` is 3 deep)."""

MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024
"""Largest ``.ipynb`` notebook ``mlpipe run-script`` reads (64 MiB: outputs and images included)."""
MAX_JSON_DEPTH = 100
"""Deepest nesting of lists and objects in a JSON document mlpipe reads (a notebook)."""

MAX_ARGUMENTS_CHARS = 131_072
"""Longest ``program_arguments`` after substitution (Linux's limit for one argument)."""
MAX_SCHEMA_PROBLEMS = 500
"""Most schema problems reported for one document (the rest are counted, not described)."""

_INT_TAG = "tag:yaml.org,2002:int"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class InputLimitError(MlpipeError, ValueError):
    """Input over one of the limits above; ``line``/``column`` are 1-based when known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None,
                 hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.hint = hint

    def where(self, file: str | None) -> str:
        """``file:line:col: message`` (the parts that are known)."""
        place = ":".join(str(p) for p in (file, self.line, self.column) if p is not None)
        return f"{place}: {self.message}" if place else self.message


def check_file_size(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> None:
    """Raise :class:`InputLimitError` when the file at ``path`` is over ``limit`` bytes
    (:data:`MAX_FILE_BYTES`, the YAML limit, unless given).

    A file that cannot be stat'ed passes: reading it reports the real problem.
    """
    try:
        size = os.stat(path).st_size
    except (OSError, ValueError):
        return
    if size > limit:
        raise InputLimitError(
            f"file too large: {size:,} bytes, the limit is {limit:,} bytes",
            hint="a pipeline YAML is a few kilobytes; split it or generate it with the SDK"
            if limit == MAX_FILE_BYTES else None)


@dataclass
class _Open:
    """A mapping or list whose end has not been seen yet."""

    anchor: str | None
    mapping: bool
    size: int = 1
    children: int = 0


@dataclass
class _Scan:
    sizes: dict[str, int] = field(default_factory=dict)
    stack: list[_Open] = field(default_factory=list)
    nodes: int = 0
    keys: int = 0

    def add(self, size: int, event: yaml.Event, new_nodes: int | None = None) -> None:
        """Count a finished child of ``size`` nodes in the innermost open collection
        (``new_nodes`` of them not counted yet: all, unless given)."""
        self.nodes += size if new_nodes is None else new_nodes
        if self.nodes > MAX_NODES:
            if not self.sizes:
                raise _at(event, f"more than {MAX_NODES:,} nodes (keys, values and list items)")
            raise _at(event, f"the document expands to more than {MAX_NODES:,} nodes "
                             "(keys, values and list items, aliases counted as expanded)",
                      "an alias that repeats an anchor that repeats aliases grows "
                      "exponentially ('billion laughs'); write the values out")
        if self.stack:
            parent = self.stack[-1]
            if parent.mapping and parent.children % 2 == 0:
                self.keys += 1
                if self.keys > MAX_KEYS:
                    raise _at(event, f"more than {MAX_KEYS:,} mapping keys")
            parent.children += 1
            parent.size += size


def check_yaml_text(text: str) -> None:
    """Raise :class:`InputLimitError` when ``text`` is over a depth, node, key or integer limit.

    Syntax errors are not reported here (the caller's parser reports them with
    its own message); the scan stops at the first one.
    """
    if len(text) > MAX_FILE_BYTES:
        raise InputLimitError(f"YAML text too large: {len(text):,} characters, the limit is "
                              f"{MAX_FILE_BYTES:,}")
    loader = _Loader(text)
    scan = _Scan()
    try:
        while True:
            event = loader.get_event()
            if isinstance(event, StreamEndEvent):
                return
            if isinstance(event, CollectionStartEvent):
                if len(scan.stack) >= MAX_DEPTH:
                    raise _at(event, f"nested more than {MAX_DEPTH} levels deep",
                              "flatten the document")
                scan.stack.append(_Open(event.anchor, isinstance(event, MappingStartEvent)))
            elif isinstance(event, CollectionEndEvent):
                done = scan.stack.pop()
                if done.anchor is not None:
                    scan.sizes[done.anchor] = done.size
                scan.add(done.size, event, new_nodes=1)
            elif isinstance(event, ScalarEvent):
                _check_int(loader, event)
                if event.anchor is not None:
                    scan.sizes[event.anchor] = 1
                scan.add(1, event)
            elif isinstance(event, AliasEvent):
                scan.add(scan.sizes.get(event.anchor, 1), event)
    except yaml.YAMLError as error:
        # libyaml >= 0.2.6 (PyYAML 6.0.4 wheels) stops deep flow nesting itself while it
        # looks ahead, before any event: that is this limit too, not a syntax error left to
        # the recursive composers
        if "maximum nesting depth" in str(error):
            mark = getattr(error, "problem_mark", None)
            raise InputLimitError(f"nested more than {MAX_DEPTH} levels deep",
                                  mark.line + 1 if mark else None,
                                  mark.column + 1 if mark else None,
                                  "flatten the document") from None
        return
    finally:
        loader.dispose()


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def check_json_depth(text: str) -> None:
    """Raise :class:`InputLimitError` when the JSON ``text`` nests lists and objects more
    than :data:`MAX_JSON_DEPTH` deep (the recursive parsers would run out of stack first).

    One pass over the brackets outside strings, no recursion; syntax is not checked.
    """
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                line = text.count("\n", 0, token.start()) + 1
                column = token.start() - (text.rfind("\n", 0, token.start()) + 1) + 1
                raise InputLimitError(f"nested more than {MAX_JSON_DEPTH} levels deep", line,
                                      column)
        elif bracket in "]}":
            depth -= 1


def _check_int(loader: yaml.Loader, event: ScalarEvent) -> None:
    value = event.value
    if len(value) <= MAX_INT_DIGITS:
        return
    if event.tag not in (None, "!"):
        tag = event.tag
    elif event.implicit[0]:
        tag = loader.resolve(ScalarNode, value, (True, False))
    else:
        return
    if tag != _INT_TAG and not tag.endswith(":int"):
        return
    digits = sum(c.isalnum() for c in value)
    if digits > MAX_INT_DIGITS:
        raise _at(event, f"integer too long: {digits:,} digits, the limit is {MAX_INT_DIGITS}",
                  "quote it if it is meant as a string")


def _at(event: yaml.Event, message: str, hint: str | None = None) -> InputLimitError:
    mark = event.start_mark
    if mark is None:
        return InputLimitError(message, hint=hint)
    return InputLimitError(message, mark.line + 1, mark.column + 1, hint)


__all__ = [
    "MAX_ARGUMENTS_CHARS", "MAX_DEPTH", "MAX_FILE_BYTES", "MAX_FILTER_CHARS", "MAX_FILTER_DEPTH",
    "MAX_INT_DIGITS", "MAX_JSON_DEPTH", "MAX_KEYS", "MAX_NODES", "MAX_NOTEBOOK_BYTES",
    "MAX_SCHEMA_PROBLEMS", "InputLimitError", "check_file_size", "check_json_depth",
    "check_yaml_text",
]
