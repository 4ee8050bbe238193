"""How failures are grouped: the same error counts once, whatever object addresses it names."""

from __future__ import annotations

import re

# ``<generator object run at 0x7f3a...>``, ``<Foo object at 0x...>``: a new address each time.
_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]+\b")


def error_key(message: str) -> str:
    """``message`` with object addresses replaced by ``at 0x...``, to group equal errors by."""
    return _ADDRESS.sub("at 0x...", message)


__all__ = ["error_key"]
