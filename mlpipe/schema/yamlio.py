"""Read a YAML file into plain Python data and remember where every key and value is.

Files are parsed the way azure-ai-ml's ``load_job`` parses them: with PyYAML's safe
loader (libyaml's C parser when available), i.e. **YAML 1.1** rules: ``yes``/``no``/
``on``/``off`` and ``True``/``False`` are booleans, ``010`` is octal 8, ``y``/``n`` stay
strings. The document is composed into nodes, which carry their line and column, and
turned into plain data here, so every key and value keeps its position. Whatever can go
wrong while reading (unreadable file, syntax error, duplicate key, empty document, a
document that is not a mapping, a boolean key, an unknown ``!tag``, a recursive alias,
a file over one of the limits of :mod:`mlpipe.limits`) becomes a
:class:`~mlpipe.diagnostics.Diagnostic` with a line and column; nothing here raises on bad
input.

(ruamel.yaml's round-trip loader gives the same positions but is pure Python and about
ten times slower: a 200-step pipeline took over a second just to parse.)
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from mlpipe.diagnostics import Diagnostic, Location
from mlpipe.limits import InputLimitError, check_file_size, check_yaml_text

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MERGE_TAG = "tag:yaml.org,2002:merge"
KeyPath = tuple[str | int, ...]
YAML_VERSION = (1, 1)


def format_key_path(path: KeyPath) -> str:
    """``("jobs", "score", "inputs", 0)`` -> ``"jobs.score.inputs[0]"``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


@dataclass
class PositionMap:
    """Where each key path of a document was written (1-based lines and columns).

    ``keys`` holds the position of a mapping key, ``values`` the position of the
    value (or of a list item). :meth:`locate` falls back to the nearest ancestor
    that has a position, so every path gets *some* place in the file.
    """

    file: str | None = None
    keys: dict[KeyPath, Location] = field(default_factory=dict)
    values: dict[KeyPath, Location] = field(default_factory=dict)
    lines: tuple[str, ...] = field(default=(), repr=False, compare=False)  # the source text

    def locate(self, path: KeyPath) -> Location:
        """The key's position for a mapping entry, the item's for a list item;
        the nearest known ancestor's otherwise; the file alone (no line) as a last resort."""
        path = tuple(path)
        while True:
            loc = self.keys.get(path) or self.values.get(path)
            if loc is not None:
                return loc
            if not path:
                return Location(self.file)
            path = path[:-1]

    def locate_value(self, path: KeyPath) -> Location:
        """The value's own position (falls back like :meth:`locate`)."""
        loc = self.values.get(tuple(path))
        return loc if loc is not None else self.locate(path)

    def locate_in_value(self, path: KeyPath, value: str, offset: int) -> Location:
        """Where character ``offset`` of the string ``value`` at ``path`` was written: found in
        the source text from the value's start (quoted and block scalars too), else the
        value's own position."""
        loc = self.locate_value(path)
        # the word holding ``offset`` (a folded scalar joins its lines with spaces)
        first = max(value.rfind(" ", 0, offset), value.rfind("\n", 0, offset)) + 1
        last = min((i for i in (value.find(" ", offset), value.find("\n", offset)) if i != -1),
                   default=len(value))
        fragment = value[first:last]
        if not self.lines or loc.line is None or not fragment:
            return loc
        for index in range(loc.line - 1, len(self.lines)):
            start = (loc.column or 1) - 1 if index == loc.line - 1 else 0
            column = self.lines[index].find(fragment, start)
            if column != -1:
                return Location(loc.file, index + 1, column + 1 + offset - first)
        return loc

    def has(self, path: KeyPath) -> bool:
        path = tuple(path)
        return path in self.keys or path in self.values

    def rebased(self, prefix: KeyPath) -> PositionMap:
        """The same positions with ``prefix`` put in front of every path."""
        prefix = tuple(prefix)
        return PositionMap(
            self.file,
            {prefix + p: loc for p, loc in self.keys.items()},
            {prefix + p: loc for p, loc in self.values.items()},
            self.lines,
        )

    def merge(self, other: PositionMap) -> None:
        """Add ``other``'s positions (``other`` wins on clashes)."""
        self.keys.update(other.keys)
        self.values.update(other.values)


@dataclass
class YamlDocument:
    """A parsed file: ``data`` is ``None`` when it could not be read as a mapping."""

    source: str
    data: dict[str, Any] | None
    positions: PositionMap
    diagnostics: list[Diagnostic] = field(default_factory=list)


def load_yaml_file(path: str | Path) -> YamlDocument:
    """Parse ``path``; every problem is returned as a diagnostic, never raised."""
    source = str(Path(path).resolve())
    positions = PositionMap(source)
    try:
        check_file_size(path)
    except InputLimitError as exc:
        return YamlDocument(source, None, positions, [_limit_diagnostic(exc, source)])
    try:
        raw = Path(path).read_bytes()
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return YamlDocument(source, None, positions, [_decode_diagnostic(raw, exc, source)])
    except FileNotFoundError:
        return YamlDocument(source, None, positions,
                            [Diagnostic("file not found", location=Location(source),
                                        code="unreadable")])
    except IsADirectoryError:
        return YamlDocument(source, None, positions,
                            [Diagnostic("is a folder, not a YAML file", location=Location(source),
                                        code="unreadable")])
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return YamlDocument(source, None, positions,
                            [Diagnostic(f"cannot read file: {reason}", location=Location(source),
                                        code="unreadable")])
    return load_yaml_text(text, source)


def load_yaml_text(text: str, source: str) -> YamlDocument:
    """Parse YAML ``text`` that came from ``source`` (used in messages)."""
    positions = PositionMap(source, lines=tuple(text.splitlines()))
    try:
        check_yaml_text(text)
    except InputLimitError as exc:
        return YamlDocument(source, None, positions, [_limit_diagnostic(exc, source)])
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        return YamlDocument(source, None, positions, [_syntax_diagnostic(exc, source, text)])
    except yaml.YAMLError as exc:  # pragma: no cover - libyaml marks nearly every error
        return YamlDocument(source, None, positions,
                            [Diagnostic(f"invalid YAML: {exc}", location=Location(source, 1, 1),
                                        code="yaml-syntax")])
    finally:
        loader.dispose()
    if node is None:
        return YamlDocument(source, None, positions,
                            [Diagnostic("the file is empty: expected a YAML mapping",
                                        location=Location(source, 1, 1), code="empty-file")])
    reader = _NodeReader(loader, positions)
    if not isinstance(node, MappingNode):
        value = reader.read(node, ())
        return YamlDocument(source, None, positions,
                            [Diagnostic("the document must be a mapping of keys to values, "
                                        f"got {describe_value(value)}",
                                        location=_mark(node, source), code="not-a-mapping")])
    positions.values[()] = _mark(node, source)
    data = reader.read(node, ())
    return YamlDocument(source, data, positions, reader.diagnostics)


def _limit_diagnostic(exc: InputLimitError, source: str) -> Diagnostic:
    return Diagnostic(exc.message, location=Location(source, exc.line, exc.column),
                      code="input-limit", hint=exc.hint)


def _decode_diagnostic(raw: bytes, exc: UnicodeDecodeError, source: str) -> Diagnostic:
    """Where a file stops being UTF-8 text, or that it is not text at all."""
    if b"\0" in raw[:8192]:
        return Diagnostic("not a text file (it contains NUL bytes): expected UTF-8 YAML",
                          location=Location(source), code="unreadable")
    before = raw[:exc.start]
    line = before.count(b"\n") + 1
    column = len(before[before.rfind(b"\n") + 1:].decode("utf-8", errors="replace")) + 1
    return Diagnostic(f"not UTF-8 text: byte 0x{raw[exc.start]:02x} cannot be decoded",
                      location=Location(source, line, column), code="unreadable",
                      hint="save the file as UTF-8")


def _syntax_diagnostic(exc: yaml.MarkedYAMLError, source: str, text: str = "") -> Diagnostic:
    mark = exc.problem_mark or exc.context_mark
    loc = Location(source, mark.line + 1, mark.column + 1) if mark else Location(source)
    problem = (exc.problem or "").strip()
    context = (exc.context or "").strip()
    if "single document" in problem or "single document" in context:
        return Diagnostic("expected a single YAML document, found more than one ('---')",
                          location=loc, code="yaml-syntax")
    message = f"invalid YAML: {problem}" if problem else "invalid YAML"
    if context:
        context_mark = exc.context_mark
        if context_mark is not None and context_mark is not mark and (
                context_mark.line, context_mark.column) != (mark.line, mark.column):
            context += (f" that starts at line {context_mark.line + 1}, "
                        f"column {context_mark.column + 1}")
        message += f" ({context})"
    return Diagnostic(message, location=loc, code="yaml-syntax", hint=_syntax_hint(exc, text))


def _syntax_hint(exc: yaml.MarkedYAMLError, text: str) -> str | None:
    """A likely cause for common mistakes: tabs, and ``${{...}}`` inside ``{...}``/``[...]``."""
    lines = text.splitlines()
    marks = [m for m in (exc.problem_mark, exc.context_mark) if m is not None]
    near = [lines[m.line] for m in marks if m.line < len(lines)]
    if any(line[:len(line) - len(line.lstrip())].count("\t") for line in near) or \
            "'\\t'" in (exc.problem or ""):
        return "YAML does not allow tabs for indentation: indent with spaces"
    if any("${{" in line or "$<<" in line for line in near) and "flow" in (exc.context or ""):
        return "inside {...} or [...], quote a binding: key: '${{parent.inputs.x}}'"
    return None


def _mark(node: Node, source: str | None) -> Location:
    return Location(source, node.start_mark.line + 1, node.start_mark.column + 1)


class _NodeReader:
    """Composed nodes -> plain data, recording positions and problems."""

    def __init__(self, loader: Any, positions: PositionMap):
        self.loader = loader
        self.positions = positions
        self.source = positions.file
        self.diagnostics: list[Diagnostic] = []
        self._active: set[int] = set()

    def _problem(self, message: str, path: KeyPath, location: Location, code: str,
                 hint: str | None = None) -> None:
        self.diagnostics.append(Diagnostic(message, key_path=format_key_path(path),
                                           location=location, code=code, hint=hint))

    def read(self, node: Node, path: KeyPath) -> Any:
        if isinstance(node, ScalarNode):
            return self._scalar(node, path)
        if id(node) in self._active:
            self._problem("an alias refers to the mapping or list that contains it", path,
                          _mark(node, self.source), "yaml-syntax")
            return None
        self._active.add(id(node))
        try:
            if isinstance(node, MappingNode):
                return self._mapping(node, path)
            return self._sequence(node, path)
        finally:
            self._active.discard(id(node))

    def _sequence(self, node: SequenceNode, path: KeyPath) -> list[Any]:
        items = []
        for index, item in enumerate(node.value):
            self.positions.values[path + (index,)] = _mark(item, self.source)
            items.append(self.read(item, path + (index,)))
        return items

    def _mapping(self, node: MappingNode, path: KeyPath) -> dict[str, Any]:
        out: dict[str, Any] = {}
        merged: list[tuple[Node, Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == MERGE_TAG:
                merged.extend(self._merge_sources(value_node, path))
                continue
            name = self._key(key_node, path)
            if name is None:
                continue
            child = path + (name,)
            if name in out:
                self._problem(f"duplicate key '{name}' (first written on line "
                              f"{self.positions.keys[child].line})", child,
                              _mark(key_node, self.source), "duplicate-key",
                              "each key may appear only once in a mapping")
                continue
            self.positions.keys[child] = _mark(key_node, self.source)
            self.positions.values[child] = _mark(value_node, self.source)
            out[name] = self.read(value_node, child)
        for key_node, value_node in merged:  # ``<<: *defaults``: own keys win
            name = self._key(key_node, path)
            if name is not None and name not in out:
                child = path + (name,)
                self.positions.keys[child] = _mark(key_node, self.source)
                self.positions.values[child] = _mark(value_node, self.source)
                out[name] = self.read(value_node, child)
        return out

    def _merge_sources(self, node: Node, path: KeyPath) -> list[tuple[Node, Node]]:
        sources = node.value if isinstance(node, SequenceNode) else [node]
        pairs: list[tuple[Node, Node]] = []
        for source in sources:
            if isinstance(source, MappingNode):
                pairs.extend(source.value)
            else:
                self._problem("'<<' must merge a mapping or a list of mappings", path,
                              _mark(source, self.source), "yaml-syntax")
        return pairs

    def _key(self, node: Node, path: KeyPath) -> str | None:
        where = _mark(node, self.source)
        if not isinstance(node, ScalarNode):
            self._problem("mapping keys must be plain scalars, not a mapping or a list", path,
                          where, "type")
            return None
        value = self._scalar(node, path)
        if isinstance(value, bool):
            self._problem(f"the key {node.value!r} is read as {describe_value(value)} (YAML 1.1 "
                          f"reads yes, no, on, off, true and false as booleans)", path, where,
                          "type", "quote the key")
            return str(node.value)
        if value is None:
            return node.value or "null"
        return value if isinstance(value, str) else str(value)

    def _scalar(self, node: ScalarNode, path: KeyPath) -> Any:
        try:
            value = self.loader.construct_object(node, deep=True)
        except yaml.YAMLError:
            self._problem(f"unsupported YAML tag '{node.tag}'", path, _mark(node, self.source),
                          "yaml-tag")
            return node.value
        except (ValueError, TypeError, OverflowError):  # ``!!int x``, ``!!timestamp 2020-99``
            tag = node.tag.rsplit(":", 1)[-1]
            self._problem(f"{describe_value(node.value)} is not a valid !!{tag}", path,
                          _mark(node, self.source), "yaml-tag", "remove the tag or fix the value")
            return node.value
        if isinstance(value, (_dt.date, _dt.datetime)):
            return value.isoformat()
        if isinstance(value, bytes):
            return node.value
        return value


def describe_value(value: Any) -> str:
    """``integer 5``, ``string 'x'``, ``boolean true``, ``a mapping``, ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"string {shown!r}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return type(value).__name__


def iter_paths(data: Any, path: KeyPath = ()) -> Iterator[tuple[KeyPath, Any]]:
    """Every ``(key path, value)`` of plain ``data``, parents before children."""
    yield path, data
    if isinstance(data, dict):
        for key, value in data.items():
            yield from iter_paths(value, path + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from iter_paths(value, path + (index,))
