"""Counts in messages, with the right plural: ``1 mini-batch``, ``2 mini-batches``."""

from __future__ import annotations


def plural(count: float, word: str, many: str | None = None) -> str:
    """``count`` and ``word``, made plural unless ``count`` is 1 (``many`` when irregular)."""
    number = f"{count:g}" if isinstance(count, float) else str(count)
    if count == 1:
        return f"{number} {word}"
    if many is None:
        many = word + ("es" if word.endswith(("ch", "sh", "s", "x", "z")) else "s")
    return f"{number} {many}"


__all__ = ["plural"]
