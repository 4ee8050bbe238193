"""The pipeline being built: which ``@pipeline`` function call is running in this thread.

Nodes register themselves with :func:`current_builder` when they are made or called;
:mod:`mlpipe.sdk.builder` opens a :class:`Builder` per ``@pipeline`` call with
:func:`building`. Kept below both so nodes and the decorator need not import each other.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_local = threading.local()


class Builder:
    """Collects the nodes made while a pipeline function runs."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []  # mlpipe.sdk.nodes.Node (which imports this module)

    def add(self, node: Any) -> None:
        self.nodes.append(node)

    def discard(self, node: Any) -> None:
        self.nodes = [n for n in self.nodes if n is not node]


def current_builder() -> Builder | None:
    """The builder of the innermost ``@pipeline`` call running in this thread, if any."""
    stack: list[Builder] = getattr(_local, "stack", [])
    return stack[-1] if stack else None


@contextmanager
def building() -> Iterator[Builder]:
    """A new :class:`Builder`, current in this thread until the block ends."""
    builder = Builder()
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(builder)
    try:
        yield builder
    finally:
        stack.pop()
