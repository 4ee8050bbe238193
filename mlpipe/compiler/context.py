"""Loaded documents and the diagnostics collected while compiling them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mlpipe.diagnostics import Diagnostic, DiagnosticBag, Location, Severity
from mlpipe.schema.parts import part, plain
from mlpipe.schema.yamlio import KeyPath, PositionMap, format_key_path

# PyYAML's libyaml reader when present: YAML 1.1, like the schema layer and azure-ai-ml.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class Doc:
    """One validated document (a pipeline or a component) with its positions.

    ``model`` is what the schema layer validated (:mod:`mlpipe.schema.parts`: the
    model, or the parts of it that validated); ``data`` is the same tree as plain
    values (:func:`~mlpipe.schema.parts.plain`), which :meth:`get` walks; a key whose
    value did not validate holds :data:`~mlpipe.schema.parts.INVALID` (its error is
    reported). ``raw`` is the YAML data, only to hand a part (an inline component) back
    to the schema layer. Positions come from ``positions`` by key path; ``prefix`` is
    the key path of the document inside its file (an inline component sits at
    ``jobs.<step>.component`` of the pipeline file).
    """

    data: dict[str, Any]
    file: Path
    positions: PositionMap | None = None
    prefix: KeyPath = ()
    model: Any = None
    raw: Any = None

    @classmethod
    def validated(cls, model: Any, raw: Any, file: Path, positions: PositionMap | None,
                  prefix: KeyPath = ()) -> Doc:
        """The document of a validated tree (``None``: nothing validated)."""
        data = plain(model) if model is not None else {}
        return cls(data if isinstance(data, dict) else {}, file, positions, prefix, model, raw)

    def part(self, *path: str) -> Any:
        """The validated (typed) value at ``path``: ``None`` when absent, ``INVALID`` when
        it did not validate."""
        return part(self.model, *path)

    @property
    def base_dir(self) -> Path:
        return self.file.parent

    def get(self, *path: str | int) -> Any:
        """The value at ``path`` inside the document, ``None`` when absent."""
        node: Any = self.data
        for key in path:
            if isinstance(node, dict):
                node = node.get(key)
            elif (isinstance(node, list) and isinstance(key, int)
                  and -len(node) <= key < len(node)):
                node = node[key]
            else:
                return None
        return node

    def has(self, *path: str | int) -> bool:
        parent = self.get(*path[:-1])
        return isinstance(parent, dict) and path[-1] in parent

    def locate(self, path: KeyPath) -> Location:
        full = self.prefix + tuple(path)
        if self.positions is None:
            return Location(str(self.file))
        return self.positions.locate(full)

    def key_path(self, path: KeyPath) -> str:
        return format_key_path(self.prefix + tuple(path))


@dataclass
class Reporter(DiagnosticBag):
    """Collects diagnostics without duplicates, in the order they were found."""

    _seen: set[tuple[Any, ...]] = field(default_factory=set)

    def add(self, diagnostic: Diagnostic) -> None:
        loc = diagnostic.location or Location()
        key = (loc.file, loc.line, loc.column, diagnostic.key_path, diagnostic.message,
               diagnostic.severity)
        if key not in self._seen:
            self._seen.add(key)
            self.items.append(diagnostic)

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        for diagnostic in diagnostics:
            self.add(diagnostic)

    def report(self, doc: Doc, path: KeyPath, message: str, *, code: str = "invalid",
               hint: str | None = None, severity: Severity = "error") -> None:
        self.add(Diagnostic(message=message, key_path=doc.key_path(path), location=doc.locate(path),
                            severity=severity, code=code, hint=hint))

    def error(self, doc: Doc, path: KeyPath, message: str, *, code: str = "invalid",
              hint: str | None = None) -> None:
        self.report(doc, path, message, code=code, hint=hint)

    def warn(self, doc: Doc, path: KeyPath, message: str, *, code: str = "warning",
             hint: str | None = None) -> None:
        self.report(doc, path, message, code=code, hint=hint, severity="warning")

    def has_error_at(self, doc: Doc, path: KeyPath) -> bool:
        """True when an error was already reported for this key (or a key inside it)."""
        key = doc.key_path(path)
        file = doc.locate(()).file
        return any(d.severity == "error" and d.location is not None and d.location.file == file
                   and (d.key_path == key or d.key_path.startswith(key + ".")
                        or d.key_path.startswith(key + "[")) for d in self.items)


__all__ = ["Doc", "Reporter", "SAFE_LOADER"]
