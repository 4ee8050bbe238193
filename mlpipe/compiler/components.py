"""Resolve a step's ``component:`` reference: a local file, an inline mapping, a
prompt flow, or a remote (registry / workspace) component."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from mlpipe.compiler.assets import AssetMap, is_remote, strip_file_prefix
from mlpipe.compiler.containment import escape_warning, unusable_path
from mlpipe.compiler.context import Doc, Reporter
from mlpipe.diagnostics import Diagnostic
from mlpipe.schema import PositionMap, load_component, load_component_data, load_yaml_file
from mlpipe.schema.submission import component_rules
from mlpipe.schema.yamlio import format_key_path

FLOW_FILES = ("flow.dag.yaml", "flow.dag.yml", "flow.flex.yaml", "flow.flex.yml")


@dataclass
class ComponentRef:
    """What ``component:`` points at. ``doc`` is set for local and inline components."""

    kind: Literal["local", "inline", "remote", "flow", "missing"]
    reference: str
    doc: Doc | None = None


class ComponentCache:
    """Loads each component file once per compilation and reports its own problems once."""

    def __init__(self, reporter: Reporter, assets: AssetMap):
        self.reporter = reporter
        self.assets = assets
        self._docs: dict[Path, Doc | Literal["flow"] | None] = {}

    def resolve(self, value: Any, owner: Doc, path: tuple[str | int, ...]) -> ComponentRef:
        """The component named by ``value`` (found at ``path`` of ``owner``)."""
        if isinstance(value, dict):
            return self.inline(_raw_at(owner.raw, path), owner, path)
        reference = str(value).strip()
        unusable = unusable_path(reference)
        if unusable:
            self.reporter.error(owner, path, f"component file '{reference[:80]}' is not a usable "
                                f"path: {unusable}", code="path")
            return ComponentRef("missing", reference)
        if is_remote(reference):
            local = self.assets.local(reference)
            if local is None:
                return ComponentRef("remote", reference)
            return self._local(reference, local, owner, path)
        target = Path(strip_file_prefix(reference)).expanduser()
        target = target if target.is_absolute() else (owner.base_dir / target)
        escape = escape_warning(target, owner.base_dir, "component file", reference)
        if escape and target.exists():
            self.reporter.warn(owner, path, escape, code="path-escape")
        return self._local(reference, target.resolve(), owner, path)

    def inline(self, raw: Any, owner: Doc, path: tuple[str | int, ...]) -> ComponentRef:
        """The inline component ``raw`` written at ``path`` of ``owner`` (validated, its
        problems reported at their lines in ``owner``'s file)."""
        prefix = owner.prefix + tuple(path)
        loaded = load_component_data(raw, str(owner.file),
                                     positions=_inside(owner.positions, prefix))
        self.reporter.extend(_under(prefix, d) for d in loaded.diagnostics)
        return ComponentRef("inline", "<inline>", Doc.validated(
            loaded.parts, raw, owner.file, owner.positions, prefix))

    def _local(self, reference: str, target: Path, owner: Doc,
               path: tuple[str | int, ...]) -> ComponentRef:
        if target.is_dir() and any((target / name).is_file() for name in FLOW_FILES):
            return ComponentRef("flow", reference)
        if not target.is_file():
            self.reporter.error(owner, path,
                                f"component file '{reference}' not found (looked for {target})",
                                code="missing-path")
            return ComponentRef("missing", reference)
        if target.name in FLOW_FILES:
            return ComponentRef("flow", reference)
        if target not in self._docs:
            self._docs[target] = self._load(target, _used_by(owner, path))
        doc = self._docs[target]
        if doc == "flow":
            return ComponentRef("flow", reference)
        return ComponentRef("local", reference, doc) if doc else ComponentRef("missing", reference)

    def _load(self, target: Path, used_by: str) -> Doc | Literal["flow"] | None:
        """Parse ``target`` once: a prompt flow, or a component checked and reported (each
        problem followed by ``used_by``, the step that uses the file first)."""
        parsed = load_yaml_file(target)
        if _is_flow(parsed.data):
            return "flow"
        loaded = load_component(parsed)
        found = loaded.diagnostics + component_rules(loaded.data, loaded.positions,
                                                     standalone=False)
        self.reporter.extend(replace(d, message=f"{d.message} ({used_by})") for d in found)
        if not isinstance(loaded.data, dict):
            return None
        return Doc.validated(loaded.parts, loaded.data, target, loaded.positions)


def _under(prefix: tuple[str | int, ...], diagnostic: Diagnostic) -> Diagnostic:
    """``diagnostic`` of an inline component at ``prefix`` named from the file's root (the
    pipeline's own load reports the same problem there: the two are one)."""
    inner = diagnostic.key_path
    where = format_key_path(prefix)
    joined = where + inner if inner.startswith("[") else ".".join(p for p in (where, inner) if p)
    return replace(diagnostic, key_path=joined)


def _used_by(owner: Doc, path: tuple[str | int, ...]) -> str:
    """``in component used by jobs.score at pipeline.yml:12`` for the step at ``path[:-1]``."""
    step = tuple(path[:-1])
    where = owner.locate(step)
    return (f"in component used by {owner.key_path(step)} at "
            f"{shown_path(where.file or str(owner.file))}:{where.line}")


def shown_path(file: str) -> str:
    """``file`` relative to the working directory when it is below it."""
    relative = os.path.relpath(file)
    return file if relative.startswith("..") else relative


def _inside(positions: PositionMap | None, prefix: tuple[str | int, ...]) -> PositionMap | None:
    """The positions of the part of a document under ``prefix``, with ``prefix`` removed."""
    if positions is None:
        return None
    n = len(prefix)
    return PositionMap(positions.file,
                       {p[n:]: loc for p, loc in positions.keys.items() if p[:n] == prefix},
                       {p[n:]: loc for p, loc in positions.values.items() if p[:n] == prefix},
                       positions.lines)


def _raw_at(raw: Any, path: tuple[str | int, ...]) -> Any:
    """The YAML data at ``path`` of a document's data."""
    for key in path:
        raw = raw.get(key) if isinstance(raw, dict) else None
    return raw


def _is_flow(data: Any) -> bool:
    """A prompt-flow ``Run``/``Flow`` YAML: promptflow ``$schema``, or ``flow:`` and no ``type``."""
    if not isinstance(data, dict):
        return False
    schema = str(data.get("$schema", ""))
    return "promptflow" in schema.lower() or ("flow" in data and "type" not in data)


__all__ = ["ComponentCache", "ComponentRef", "FLOW_FILES", "shown_path"]
