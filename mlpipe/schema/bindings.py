"""Recognise binding expressions: ``${{parent.inputs.x}}``, ``${{inputs.x}}``, ``$<<inputs.x>>``.

The schema layer only *recognises* bindings (a setting written as a binding is
accepted as it is); the compiler resolves them and re-checks the resolved value
with :mod:`mlpipe.schema.ranges`. ``$<<inputs.x>>`` is another spelling of
``${{inputs.x}}`` for YAML produced by Jinja or Helm templates.
"""

from __future__ import annotations

import re
from typing import Any

# One expression: ${{ expr }} or $<< expr >>, expr is a dotted name path. The groups hold
# the text between the brackets, spaces included (match_expression strips them): lazy
# groups between optional spaces backtracked in cubic time on "${{" and many spaces.
BINDING_EXPR = r"(?:\$\{\{(?P<curly>[^{}]*)\}\}|\$<<(?P<angle>[^<>]*)>>)"
BINDING_PATTERN = re.compile(BINDING_EXPR)
WHOLE_BINDING = re.compile(rf"^\s*{BINDING_EXPR}\s*$")
# The JSON-Schema spelling of "a string that is one binding".
BINDING_JSON_PATTERN = r"^\s*(\$\{\{[^{}]*\}\}|\$<<[^<>]*>>)\s*$"


def match_expression(match: re.Match[str]) -> str:
    """The expression inside a :data:`BINDING_PATTERN` match, whichever spelling it uses."""
    curly = match.group("curly")
    return (curly if curly is not None else match.group("angle")).strip()


def is_binding(value: Any) -> bool:
    """True when ``value`` is a string holding exactly one binding expression."""
    return isinstance(value, str) and WHOLE_BINDING.match(value) is not None


def binding_expression(value: str) -> str | None:
    """``"${{ parent.inputs.x }}"`` -> ``"parent.inputs.x"``; ``None`` when not a binding."""
    match = WHOLE_BINDING.match(value) if isinstance(value, str) else None
    return None if match is None else match_expression(match)


def contains_binding(value: Any) -> bool:
    """True when the string ``value`` has at least one binding somewhere inside."""
    return isinstance(value, str) and BINDING_PATTERN.search(value) is not None


def find_bindings(text: str) -> list[tuple[str, int, int]]:
    """Every binding in ``text`` as ``(expression, start, end)`` offsets."""
    return [(match_expression(m), m.start(), m.end()) for m in BINDING_PATTERN.finditer(text)]
