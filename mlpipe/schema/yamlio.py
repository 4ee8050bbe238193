"""Read a YAML file into plain Python data and remember where every key and value is.

Files are parsed with ruamel.yaml's round-trip loader using **YAML 1.1** rules, the
same rules PyYAML (and so azure-ai-ml's ``load_job``) uses: ``yes``/``no``/``on``/``off``
and ``True``/``False`` are booleans, ``010`` is octal 8, a ``%YAML 1.2`` directive in
the file switches to 1.2. Whatever can go wrong while reading (unreadable file, syntax
error, duplicate key, empty document, a document that is not a mapping, a non-string
key, an unknown ``!tag``) becomes a :class:`~mlpipe.diagnostics.Diagnostic` with a
line and column; nothing here raises on bad input.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver

from mlpipe.diagnostics import Diagnostic, Location

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


class _PyYamlResolver(VersionedResolver):
    """YAML 1.1 as PyYAML reads it: ruamel also takes ``y``/``n`` for booleans, PyYAML
    (and so azure-ai-ml) does not; an input named ``n`` must stay ``"n"``."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode and implicit[0] and value in ("y", "Y", "n", "N"):
            return self.DEFAULT_SCALAR_TAG
        return super().resolve(kind, value, implicit)


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.Resolver = _PyYamlResolver
    yaml.version = YAML_VERSION
    yaml.allow_duplicate_keys = False
    return yaml


def load_yaml_file(path: str | Path) -> YamlDocument:
    """Parse ``path``; every problem is returned as a diagnostic, never raised."""
    source = str(Path(path).resolve())
    positions = PositionMap(source)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return YamlDocument(source, None, positions, [
            Diagnostic("file not found", location=Location(source), code="unreadable")])
    except IsADirectoryError:
        return YamlDocument(source, None, positions, [
            Diagnostic("is a folder, not a YAML file", location=Location(source), code="unreadable")])
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return YamlDocument(source, None, positions, [
            Diagnostic(f"cannot read file: {reason}", location=Location(source), code="unreadable")])
    return load_yaml_text(text, source)


def load_yaml_text(text: str, source: str) -> YamlDocument:
    """Parse YAML ``text`` that came from ``source`` (used in messages)."""
    positions = PositionMap(source)
    diagnostics: list[Diagnostic] = []
    try:
        node = _yaml().load(text)
    except MarkedYAMLError as exc:
        return YamlDocument(source, None, positions, [_syntax_diagnostic(exc, source)])
    except YAMLError as exc:  # pragma: no cover - ruamel marks nearly every error
        return YamlDocument(source, None, positions, [
            Diagnostic(f"invalid YAML: {exc}", location=Location(source, 1, 1), code="yaml-syntax")])
    if node is None:
        return YamlDocument(source, None, positions, [Diagnostic(
            "the file is empty: expected a YAML mapping", location=Location(source, 1, 1),
            code="empty-file")])
    if not isinstance(node, CommentedMap):
        return YamlDocument(source, None, positions, [Diagnostic(
            f"the document must be a mapping of keys to values, got {describe_value(_plain_scalar(node))}",
            location=_node_location(node, source), code="not-a-mapping")])
    positions.values[()] = Location(source, node.lc.line + 1, node.lc.col + 1)
    data = _convert(node, (), positions, diagnostics)
    return YamlDocument(source, data, positions, diagnostics)


def _syntax_diagnostic(exc: MarkedYAMLError, source: str) -> Diagnostic:
    mark = exc.problem_mark or exc.context_mark
    loc = Location(source, mark.line + 1, mark.column + 1) if mark else Location(source)
    problem = (exc.problem or "").strip()
    context = (exc.context or "").strip()
    if "duplicate key" in problem:
        return Diagnostic(problem.replace('"', "'"), location=loc, code="duplicate-key",
                          hint="each key may appear only once in a mapping")
    if "single document" in problem or "single document" in context:
        return Diagnostic("expected a single YAML document, found more than one ('---')",
                          location=loc, code="yaml-syntax")
    message = f"invalid YAML: {problem}" if problem else "invalid YAML"
    if context:
        message += f" ({context})"
    return Diagnostic(message, location=loc, code="yaml-syntax")


def _node_location(node: Any, source: str) -> Location:
    lc = getattr(node, "lc", None)
    if lc is not None and getattr(lc, "line", None) is not None:
        return Location(source, lc.line + 1, lc.col + 1)
    return Location(source, 1, 1)


def _convert(node: Any, path: KeyPath, positions: PositionMap,
             diagnostics: list[Diagnostic]) -> Any:
    """Round-trip node -> plain dict/list/str/int/float/bool/None, recording positions."""
    src = positions.file
    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key in node:
            kpos = _lc(node, "key", key)
            vpos = _lc(node, "value", key)
            if not isinstance(key, str):
                plain_key = _plain_scalar(key)
                if isinstance(plain_key, (dict, list)) or key is None:
                    diagnostics.append(Diagnostic(
                        f"mapping keys must be strings, got {describe_value(plain_key)}",
                        key_path=format_key_path(path), code="type",
                        location=Location(src, *kpos) if kpos else positions.locate(path)))
                    continue
                name = str(plain_key).lower() if isinstance(plain_key, bool) else str(plain_key)
                if isinstance(plain_key, bool):
                    diagnostics.append(Diagnostic(
                        f"this key is read as {describe_value(plain_key)} (YAML 1.1 reads yes, no, "
                        f"on, off, true and false as booleans)", key_path=format_key_path(path),
                        code="type", hint="quote the key",
                        location=Location(src, *kpos) if kpos else positions.locate(path)))
            else:
                name = str(key)
            child = path + (name,)
            if kpos:
                positions.keys[child] = Location(src, *kpos)
            if vpos:
                positions.values[child] = Location(src, *vpos)
            out[name] = _convert(node[key], child, positions, diagnostics)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for index, item in enumerate(node):
            ipos = _lc(node, "item", index)
            if ipos:
                positions.values[path + (index,)] = Location(src, *ipos)
            items.append(_convert(item, path + (index,), positions, diagnostics))
        return items
    if isinstance(node, TaggedScalar):
        value, problem = _tagged(node)
        if problem:
            diagnostics.append(Diagnostic(problem, key_path=format_key_path(path),
                                          location=positions.locate(path), code="yaml-tag"))
        return value
    return _plain_scalar(node)


def _lc(node: CommentedMap | CommentedSeq, kind: str, key: Any) -> tuple[int, int] | None:
    try:
        line, col = getattr(node.lc, kind)(key)
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return line + 1, col + 1


_STANDARD_TAGS = {
    "tag:yaml.org,2002:str": str,
    "tag:yaml.org,2002:int": int,
    "tag:yaml.org,2002:float": float,
}


def _tagged(node: TaggedScalar) -> tuple[Any, str | None]:
    tag = str(getattr(node.tag, "value", node.tag))
    text = node.value
    convert = _STANDARD_TAGS.get(tag)
    if convert is not None:
        try:
            return convert(text), None
        except ValueError:
            return text, f"'{text}' cannot be read as {tag.rsplit(':', 1)[-1]}"
    if tag == "tag:yaml.org,2002:bool":
        return str(text).lower() in ("true", "yes", "on"), None
    if tag == "tag:yaml.org,2002:null":
        return None, None
    return text, f"unsupported YAML tag '{tag}'"


def _plain_scalar(value: Any) -> Any:
    """ruamel's scalar subclasses -> built-in types."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, CommentedMap):
        return dict(value)
    if isinstance(value, CommentedSeq):
        return list(value)
    if isinstance(value, TaggedScalar):
        return value.value
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
