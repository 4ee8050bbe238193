"""``mini_batch_size``: its grammar and its reading, in one place.

The YAML may say a count (``"5"``: files per mini-batch for file inputs, bytes for
tabular ones) or a size with one unit (``"10kb"``, ``"1MB"``, ``"1GB"``; 1 kb = 1024
bytes): :data:`MINI_BATCH_SIZE_PATTERN`, checked by ``mlpipe.schema.ranges`` and the v1
SDK. :func:`parse_mini_batch_size` reads a value (leniently: spaces, ``k`` without
``b``, ``tb``) into a :class:`MiniBatchSize`; the compiler does so once and the plan
carries the result (the data layer only reads ``count`` / ``bytes``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Azure documents ^\d+([kKmMgG][bB])*$, but azure-ai-ml then reads only one unit, so a
# repeated unit ("10kbkb") can never work: mlpipe allows at most one.
MINI_BATCH_SIZE_PATTERN = re.compile(r"^\d+([kKmMgG][bB])?$")
UNITS = {"": 1, "b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3, "tb": 1024**4}
_READABLE = re.compile(r"^\s*(\d+)\s*([kmgt]?b?)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class MiniBatchSize:
    """A read ``mini_batch_size``: ``count`` when written as a plain number (else ``None``),
    ``bytes`` always (a plain number counts as bytes for tabular inputs), and ``text`` as
    written (what reports show)."""

    count: int | None
    bytes: int
    text: str = ""

    def __str__(self) -> str:
        return self.text


def parse_mini_batch_size(text: str | int) -> MiniBatchSize | None:
    """``"5"`` -> count 5, 5 bytes; ``"10kb"`` -> 10240 bytes; ``None`` when unreadable.
    Zero is readable (``count``/``bytes`` 0): whether it is allowed is the caller's rule."""
    match = _READABLE.match(str(text))
    if not match:
        return None
    number, unit = int(match.group(1)), match.group(2).lower()
    if unit and not unit.endswith("b"):
        unit += "b"
    return MiniBatchSize(count=None if unit else number, bytes=number * UNITS[unit],
                         text=str(text))
