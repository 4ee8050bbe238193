"""Counts in messages, with the right plural: ``1 mini-batch``, ``2 mini-batches``."""

from __future__ import annotations


def plural(count: float, word: str, many: str | None = None) -> str:
    """``count`` and ``word``, made plural unless ``count`` is 1 (``many`` when irregular)."""
    if count == 1:
        return f"{count:g} {word}"
    if many is None:
        many = word + ("es" if word.endswith(("ch", "sh", "s", "x", "z")) else "s")
    return f"{count:g} {many}"


__all__ = ["plural"]
