"""Input data to mini-batches (file lists, MLTable tables, partitions).

Driver side: :func:`iter_mini_batches` turns a parallel step's major input into a
stream of small, picklable :class:`MiniBatch` descriptors (no table data is
parsed). Worker side: :func:`load_mini_batch` turns one descriptor into the
``run()`` argument: a list of absolute paths or a pandas DataFrame.
See docs/data.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlpipe.exports import exports_on_first_use

if TYPE_CHECKING:  # pandas and pyarrow load only where tables are read
    import pandas as pd

    from mlpipe.data.batches import input_kind, iter_mini_batches
    from mlpipe.data.errors import DataError
    from mlpipe.data.minibatch import MiniBatch
    from mlpipe.data.mltable_spec import MLTableSpec, load_spec
    from mlpipe.data.sizes import byte_size, file_count

# imported on first use: a worker importing mlpipe.data.minibatch (every worker does) would
# otherwise pay for the listing, MLTable and YAML modules it never uses (~0.08 s of CPU)
_EXPORTS = {"input_kind": "mlpipe.data.batches", "iter_mini_batches": "mlpipe.data.batches",
            "DataError": "mlpipe.data.errors", "MiniBatch": "mlpipe.data.minibatch",
            "MLTableSpec": "mlpipe.data.mltable_spec", "load_spec": "mlpipe.data.mltable_spec",
            "byte_size": "mlpipe.data.sizes", "file_count": "mlpipe.data.sizes"}
__getattr__ = exports_on_first_use(__name__, _EXPORTS)


def load_mini_batch(mb: MiniBatch) -> list[str] | pd.DataFrame:
    """The ``run()`` argument for ``mb`` (call it in the worker process).

    File batches give a new list of absolute path strings; tabular batches a
    DataFrame with the MLTable transformations applied. Raises :class:`DataError`
    for unreadable or malformed data (file and line named).
    """
    if mb.kind == "files":
        if not isinstance(mb.payload, tuple):  # a streamed cloud input's blobs
            from mlpipe.data.cloud.reader import load_blob_files  # noqa: PLC0415

            return load_blob_files(mb.payload)
        return list(mb.payload)
    from mlpipe.data.segments import load_table  # noqa: PLC0415

    return load_table(mb.payload)


def item_count(mb: MiniBatch) -> int:
    """How many items ``mb`` stands for, also when its data cannot be parsed: its files, else
    the records of its byte ranges or its parquet rows (at least 1). A failure that ends a
    mini-batch before run() counts these items as failed."""
    if mb.items is not None:
        return mb.items
    if mb.kind == "files":
        return len(mb.payload)
    from mlpipe.data.segments import planned_rows  # noqa: PLC0415

    return planned_rows(mb.payload)


def read_mltable(path: str) -> pd.DataFrame:
    """The whole table an MLTable (folder or file) stands for, transformations applied.

    take/skip/filter act on the whole table. An MLTable without a read_*
    transformation gives one ``Path`` column, one row per item (as mltable does).
    """
    from mlpipe.data.tables import read_mltable as read  # noqa: PLC0415

    return read(path)


__all__ = [
    "DataError",
    "MLTableSpec",
    "MiniBatch",
    "byte_size",
    "file_count",
    "input_kind",
    "item_count",
    "iter_mini_batches",
    "load_mini_batch",
    "load_spec",
    "read_mltable",
]
