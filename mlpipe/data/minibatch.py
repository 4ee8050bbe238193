"""The mini-batch descriptor: what the driver schedules and a worker loads.

A descriptor is small and picklable (a list of paths, or a file with a byte or
row range and the transformations to apply). The driver never parses table
data; the worker turns a descriptor into the ``run()`` argument with
``mlpipe.data.load_mini_batch``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from mlpipe.frozen import FrozenDict, freeze


@dataclass(frozen=True)
class MiniBatch:
    """One unit of work for ``run()``.

    ``id`` is stable: the same input and settings always give the same ids and
    contents, so a resumed job can skip finished mini-batches. ``index`` is the
    0-based position in input order (append_row output follows it).
    ``items`` is the item count when the driver knows it without parsing (files,
    parquet row ranges, partitions), else ``None`` (a CSV byte range): the
    worker's loaded data then gives the count.
    """

    id: str
    index: int
    kind: Literal["files", "table"]
    payload: Any  # data-layer specific, picklable
    items: int | None = None
    size_bytes: int = 0
    partition_key_value: FrozenDict[str, Any] | None = None
    # JSON-able, for processed_mini-batches.csv
    detail: FrozenDict[str, Any] = field(default_factory=freeze)

    @classmethod
    def of(cls, id: str, index: int, kind: Literal["files", "table"], payload: Any,  # noqa: A002
           items: int | None = None, size_bytes: int = 0,
           partition_key_value: FrozenDict[str, Any] | None = None,
           detail: FrozenDict[str, Any] | None = None) -> MiniBatch:
        """The same as ``MiniBatch(...)`` with positional fields, in a quarter of the time:
        one is made per mini-batch on the driver's hot path (the listing) and in workers."""
        made = object.__new__(cls)
        made.__dict__.update(id=id, index=index, kind=kind, payload=payload, items=items,
                             size_bytes=size_bytes, partition_key_value=partition_key_value,
                             detail=_EMPTY if detail is None else detail)
        return made


_EMPTY: FrozenDict[str, Any] = freeze()
