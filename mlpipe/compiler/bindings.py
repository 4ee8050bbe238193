"""What a binding expression refers to, and how to substitute bindings in text.

The binding lexer (:mod:`mlpipe.schema.bindings`) finds the bindings of a text (both
spellings, ``${{expr}}`` and ``$<<expr>>``); this module gives each expression a meaning:

- ``parent.inputs.x`` / ``parent.outputs.x``: a pipeline input or output,
- ``parent.jobs.<step>.outputs.<y>``: an output of another step,
- ``inputs.x`` / ``outputs.x``: the step's (or component's) own input or output,
- ``name``, ``output_name``, ``default_datastore``: output path templates.

``$[[ ... ]]`` wraps an optional part of a command line: it is dropped when an
input it uses is unset and unwrapped otherwise. ``${data.text}`` (single braces,
prompt-flow column mapping) is not a binding.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from mlpipe.limits import MAX_ARGUMENTS_CHARS
from mlpipe.schema.bindings import binding_expression, lex, substitute_bindings

Scope = Literal["parent_input", "parent_output", "step_output", "input", "output", "template",
                "unknown"]
TEMPLATE_NAMES = frozenset({"name", "output_name", "default_datastore"})
# The text of ``$[[ ... ]]`` stops at the next ``$[[`` too, so a text of many unclosed
# ``$[[`` is scanned once (``.*?`` rescanned the rest of it from each one).
OPTIONAL_PATTERN = re.compile(r"\$\[\[((?:(?!\$\[\[|\]\]).)*)\]\]", re.S)
_IDENT = r"[A-Za-z_][A-Za-z0-9_\-]*"
_INPUT = rf"{_IDENT}(?:\.{_IDENT})*"  # a parameter group's member: group.number
_FORMS: tuple[tuple[Scope, re.Pattern[str]], ...] = (
    ("parent_input", re.compile(rf"^parent\.inputs\.({_INPUT})$")),
    ("parent_output", re.compile(rf"^parent\.outputs\.({_IDENT})$")),
    ("step_output", re.compile(rf"^parent\.jobs\.({_IDENT})\.outputs\.({_IDENT})$")),
    ("input", re.compile(rf"^inputs\.({_INPUT})$")),
    ("output", re.compile(rf"^outputs\.({_IDENT})$")),
)


@dataclass(frozen=True)
class Reference:
    """One parsed binding: its ``scope``, the ``name`` it names and, for
    ``parent.jobs.<step>.outputs.<name>``, the ``step``."""

    scope: Scope
    name: str
    step: str | None = None
    text: str = ""  # the binding as written, e.g. "${{inputs.x}}"

    @property
    def expression(self) -> str:
        expr = binding_expression(self.text)
        return expr if expr is not None else self.text


def parse_reference(expression: str, text: str = "") -> Reference:
    """The meaning of one expression (the part inside ``${{ }}``)."""
    expression = expression.strip()
    text = text or f"${{{{{expression}}}}}"
    for scope, pattern in _FORMS:
        match = pattern.match(expression)
        if match:
            if scope == "step_output":
                return Reference(scope, match.group(2), match.group(1), text)
            return Reference(scope, match.group(1), None, text)
    if expression in TEMPLATE_NAMES:
        return Reference("template", expression, None, text)
    return Reference("unknown", expression, None, text)


def whole_reference(value: object) -> Reference | None:
    """The reference when ``value`` is a string holding exactly one binding."""
    if not isinstance(value, str):
        return None
    expression = binding_expression(value)
    return None if expression is None else parse_reference(expression, value.strip())


def references_in(text: object) -> list[Reference]:
    """Every binding inside the string ``text`` (none for other values)."""
    if not isinstance(text, str):
        return []
    return [parse_reference(b.expression, b.text) for b in lex(text)[0]]


def expand_optional(text: str, keep: Callable[[Reference], bool]) -> str:
    """Drop each ``$[[ ... ]]`` part that uses an input ``keep`` rejects; unwrap the rest."""

    def replace(match: re.Match[str]) -> str:
        inner = match.group(1)
        return inner if all(keep(ref) for ref in references_in(inner)) else ""

    return OPTIONAL_PATTERN.sub(replace, text)


def substitute(text: str, render: Callable[[Reference], str]) -> str:
    """``text`` with every binding replaced by ``render(reference)``."""

    return substitute_bindings(text, lambda b: render(parse_reference(b.expression, b.text)))


def split_arguments(text: str, render: Callable[[Reference], tuple[str, bool]]) -> list[str]:
    """Split a command line like a POSIX shell after substituting its bindings.

    ``render`` returns ``(text, is_path)``. A literal's text is substituted first
    and then split (as Azure does: a literal ``"a b"`` gives two arguments); a
    path always stays one argument, even when it contains spaces. A text over
    :data:`~mlpipe.limits.MAX_ARGUMENTS_CHARS` is a :class:`ValueError`.
    """
    paths: list[str] = []

    def replace(ref: Reference) -> str:
        value, is_path = render(ref)
        if not is_path:
            return value
        paths.append(value)
        return f"\x00{len(paths) - 1}\x00"

    substituted = substitute(text, replace)
    if len(substituted) > MAX_ARGUMENTS_CHARS:
        raise ValueError(f"it is {len(substituted):,} characters long after substitution, "
                         f"the limit is {MAX_ARGUMENTS_CHARS:,}")
    tokens = shlex.split(substituted)
    if not paths:
        return tokens
    return [re.sub(r"\x00(\d+)\x00", lambda m: paths[int(m.group(1))], tok) for tok in tokens]


__all__ = [
    "OPTIONAL_PATTERN",
    "Reference",
    "TEMPLATE_NAMES",
    "expand_optional",
    "parse_reference",
    "references_in",
    "split_arguments",
    "substitute",
    "whole_reference",
]
