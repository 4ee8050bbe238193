"""``--set key.path=value`` overrides, like ``az ml job create --set``.

Each override names a dotted key path in the loaded YAML data
(``jobs.score.mini_batch_size=5``, ``inputs.data.path=./other``,
``jobs.train.partition_keys.0=Store``). The value is read as a YAML scalar
(``5`` is an int, ``true`` a bool, ``[a, b]`` a list); when the key already holds
a string, the text is kept as a string, so ``mini_batch_size=5`` stays ``"5"``.
Mappings missing on the way are made, as ``az ml``'s ``--set`` does
(``settings.force_rerun=True`` in a file with no ``settings``), except a step: a key
path that names no step of ``jobs`` is an error (with "did you mean"); a value on the
way that is not a mapping is an error too.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

import yaml

from mlpipe.compiler.context import SAFE_LOADER
from mlpipe.diagnostics import Diagnostic, Location, did_you_mean
from mlpipe.errors import UsageError
from mlpipe.limits import MAX_DEPTH, InputLimitError, check_yaml_text

_INDEX = re.compile(r"-?[0-9]{1,18}")


class OverrideSyntaxError(UsageError):
    """An override is not written ``key.path=value`` (a usage error)."""


def parse_override(text: str) -> tuple[list[str], str]:
    """``"a.b=c"`` -> ``(["a", "b"], "c")``; :class:`OverrideSyntaxError` otherwise."""
    key, sep, value = text.partition("=")
    parts = key.strip().split(".")
    if not sep or not key.strip() or any(not p for p in parts):
        raise OverrideSyntaxError(
            f"invalid --set {text!r}: expected KEY.PATH=VALUE, e.g. jobs.score.mini_batch_size=5")
    if len(parts) > MAX_DEPTH:  # a file may not nest deeper; nor may what --set makes of it
        shown = key.strip() if len(key.strip()) <= 60 else key.strip()[:57] + "..."
        raise OverrideSyntaxError(f"invalid --set {shown}=...: the key path has {len(parts)} "
                                  f"parts, more than the {MAX_DEPTH} levels a document may nest")
    return parts, value


def _index(part: str) -> int | None:
    """``"2"`` / ``"-1"`` -> a list index; anything else -> ``None``."""
    return int(part) if _INDEX.fullmatch(part) else None


def _yaml_value(text: str) -> Any:
    """The value of ``text`` read as YAML (the text itself when it is not YAML);
    :class:`InputLimitError` when it is over a limit of :mod:`mlpipe.limits`."""
    check_yaml_text(text)
    try:
        return yaml.load(text, Loader=SAFE_LOADER) if text.strip() else ""
    except yaml.YAMLError:
        return text


def apply_overrides(data: Any, overrides: Sequence[str]) -> tuple[Any, list[Diagnostic]]:
    """A copy of ``data`` with every override applied, and the problems found.

    Raises :class:`OverrideSyntaxError` for an override that is not ``KEY=VALUE``.
    """
    parsed = [parse_override(item) for item in overrides]
    if not parsed:
        return data, []
    data = copy.deepcopy(data)
    problems: list[Diagnostic] = []
    for parts, text in parsed:
        try:
            problem = _apply_one(data, parts, text)
        except InputLimitError as exc:
            problem = _problem(parts, f"cannot set: the value is over a limit: {exc.message}",
                               exc.hint)
        if problem is not None:
            problems.append(problem)
    return data, problems


def _apply_one(data: Any, parts: list[str], text: str) -> Diagnostic | None:
    node = data
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        where = ".".join(parts[:depth]) or "the document"
        if isinstance(node, dict):
            if last:
                old = node.get(part)
                node[part] = text if isinstance(old, str) else _yaml_value(text)
                return None
            if part not in node and parts[:depth] != ["jobs"]:
                node[part] = {}  # az ml's --set makes the mappings a key path needs
            if node.get(part, "") is None:  # an empty mapping written as nothing (`x:`)
                node[part] = {}
            if part not in node or not isinstance(node[part], (dict, list)):
                hint = did_you_mean(part, [str(k) for k in node]) if part not in node else None
                reason = (f"no key '{part}' in {where}" if part not in node
                          else f"'{part}' in {where} is not a mapping")
                return _problem(parts, f"cannot set: {reason}", hint)
            node = node[part]
        elif isinstance(node, list):
            index = _index(part)
            if index is None or not -len(node) <= index < len(node):
                return _problem(parts, f"cannot set: {where} is a list of {len(node)} items; "
                                       f"'{part}' is not an index in it")
            if last:
                old = node[index]
                node[index] = text if isinstance(old, str) else _yaml_value(text)
                return None
            node = node[index]
        else:
            return _problem(parts, f"cannot set: {where} is not a mapping")
    return None


def overridden_paths(data: Any, overrides: Sequence[str]) -> list[tuple[str | int, ...]]:
    """The key paths ``overrides`` set in ``data`` (list indices as ints), so problems with
    those values can point at ``--set`` rather than at the file's old line."""
    paths: list[tuple[str | int, ...]] = []
    for item in overrides:
        parts, _text = parse_override(item)
        node: Any = data
        path: list[str | int] = []
        for part in parts:
            index = _index(part) if isinstance(node, list) else None
            if isinstance(node, list) and index is not None:
                path.append(index)
                node = node[index] if -len(node) <= index < len(node) else None
            else:
                path.append(part)
                node = node.get(part) if isinstance(node, dict) else None
        paths.append(tuple(path))
    return paths


def _problem(parts: list[str], message: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic(message=message, key_path=".".join(parts), location=Location("--set"),
                      code="override", hint=hint)


__all__ = ["OverrideSyntaxError", "apply_overrides", "overridden_paths", "parse_override"]
