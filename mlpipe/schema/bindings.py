"""The binding lexer: the one reader of ``${{expr}}`` (and its ``$<<expr>>`` spelling) in text.

:func:`lex` splits a string into its bindings and the problems of its binding syntax: a
``${{`` that is never closed (``--n ${{inputs.n}``), a ``}}`` after a binding-like name but
without an opener (``--n inputs.n}}``), an empty expression (``${{}}``). Everything that
reads bindings (the schema layer recognising a setting written as a binding, the compiler
resolving and substituting them) goes through it, so a broken binding is never half-read.
``$<<inputs.x>>`` is another spelling of ``${{inputs.x}}`` for YAML produced by Jinja or Helm
templates; ``${data.text}`` (single braces) and a plain ``{{ ... }}`` are not bindings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# The JSON-Schema spelling of "a string that is one binding".
BINDING_JSON_PATTERN = r"^\s*(\$\{\{[^{}]*\}\}|\$<<[^<>]*>>)\s*$"
_OPENERS = {"${{": "}}", "$<<": ">>"}
# A "}}" closing this (a name such as inputs.x, parent.jobs.a.outputs.b) lost its "${{".
_ORPHAN_NAME = re.compile(r"(?:parent\.)?(?:inputs|outputs|jobs)\.[\w.\-]*\s*$")
_MARKERS = re.compile(r"\$\{\{|\$<<|\}\}")


@dataclass(frozen=True)
class Binding:
    """One binding in a text: its expression (stripped) and where it is (``text[start:end]``)."""

    expression: str
    start: int
    end: int
    text: str  # as written, e.g. "${{ inputs.x }}"


@dataclass(frozen=True)
class BindingProblem:
    """A broken binding at ``offset`` (0-based) of the text."""

    offset: int
    message: str
    hint: str | None = None


@lru_cache(maxsize=4096)
def lex(text: str) -> tuple[tuple[Binding, ...], tuple[BindingProblem, ...]]:
    """The bindings of ``text`` in order, and the problems of its binding syntax."""
    if "$" not in text and "}}" not in text:
        return (), ()
    bindings: list[Binding] = []
    problems: list[BindingProblem] = []
    done = 0  # text before this offset belongs to a binding already read
    for match in _MARKERS.finditer(text):
        start = match.start()
        if start < done:
            continue
        marker = match.group()
        if marker == "}}":
            orphan = _ORPHAN_NAME.search(text, done, start)
            if orphan:
                name = orphan.group().strip()
                problems.append(BindingProblem(start, "'}}' closes no binding: its '${{' is "
                                                      "missing", f"write '${{{{{name}}}}}'"))
            continue
        closer = _OPENERS[marker]
        end = text.find(closer, start + 3)
        reopened = min((i for i in (text.find("${{", start + 3), text.find("$<<", start + 3))
                        if i != -1), default=-1)
        if end == -1 or (reopened != -1 and reopened < end):
            shown = text[start:start + 40].split()[0]
            problems.append(BindingProblem(start, f"'{marker}' is not closed: expected "
                                           f"'{closer}' in {shown!r}",
                                           f"close it: {marker}<expression>{closer}"))
            done = start + 3
            continue
        expression = text[start + 3:end].strip()
        done = end + 2
        if not expression:
            problems.append(BindingProblem(start, f"empty binding '{text[start:done]}'",
                                           "name what it binds: ${{inputs.<name>}}"))
            continue
        bindings.append(Binding(expression, start, done, text[start:done]))
    return tuple(bindings), tuple(problems)


def find_bindings(text: str) -> list[tuple[str, int, int]]:
    """Every binding in ``text`` as ``(expression, start, end)`` offsets."""
    return [(b.expression, b.start, b.end) for b in lex(text)[0]]


def binding_problems(text: str) -> tuple[BindingProblem, ...]:
    """The problems of ``text``'s binding syntax (unclosed, orphan closer, empty)."""
    return lex(text)[1] if isinstance(text, str) else ()


def _whole(value: Any) -> Binding | None:
    if not isinstance(value, str) or "$" not in value:
        return None
    stripped = value.strip()
    bindings, problems = lex(stripped)
    if len(bindings) == 1 and not problems and bindings[0].start == 0 \
            and bindings[0].end == len(stripped):
        return bindings[0]
    return None


def is_binding(value: Any) -> bool:
    """True when ``value`` is a string holding exactly one binding expression."""
    return _whole(value) is not None


def binding_expression(value: str) -> str | None:
    """``"${{ parent.inputs.x }}"`` -> ``"parent.inputs.x"``; ``None`` when not a binding."""
    found = _whole(value)
    return None if found is None else found.expression


def contains_binding(value: Any) -> bool:
    """True when the string ``value`` has at least one binding somewhere inside."""
    return isinstance(value, str) and bool(lex(value)[0])


def substitute_bindings(text: str, render: Any) -> str:
    """``text`` with each binding replaced by ``render(binding)``."""
    bindings = lex(text)[0]
    if not bindings:
        return text
    parts: list[str] = []
    last = 0
    for binding in bindings:
        parts.append(text[last:binding.start])
        parts.append(render(binding))
        last = binding.end
    parts.append(text[last:])
    return "".join(parts)


__all__ = ["BINDING_JSON_PATTERN", "Binding", "BindingProblem", "binding_expression",
           "binding_problems", "contains_binding", "find_bindings", "is_binding", "lex",
           "substitute_bindings"]
