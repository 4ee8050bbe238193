"""Input data to mini-batches (file lists, MLTable tables, partitions).

Driver side: :func:`iter_mini_batches` turns a parallel step's major input into a
stream of small, picklable :class:`MiniBatch` descriptors (no table data is
parsed). Worker side: :func:`load_mini_batch` turns one descriptor into the
``run()`` argument: a list of absolute paths or a pandas DataFrame.
See docs/data.md.
"""

from __future__ import annotations

import pandas as pd

from mlpipe.data.batches import input_kind, iter_mini_batches
from mlpipe.data.errors import DataError
from mlpipe.data.minibatch import MiniBatch
from mlpipe.data.mltable_spec import MLTableSpec, load_spec
from mlpipe.data.sizes import byte_size, file_count
from mlpipe.data.tables import read_mltable


def load_mini_batch(mb: MiniBatch) -> list[str] | pd.DataFrame:
    """The ``run()`` argument for ``mb`` (call it in the worker process).

    File batches give a new list of absolute path strings; tabular batches a
    DataFrame with the MLTable transformations applied. Raises :class:`DataError`
    for unreadable or malformed data (file and line named).
    """
    if mb.kind == "files":
        return list(mb.payload)
    from mlpipe.data.segments import load_table

    return load_table(mb.payload)


__all__ = [
    "DataError",
    "MLTableSpec",
    "MiniBatch",
    "byte_size",
    "file_count",
    "input_kind",
    "iter_mini_batches",
    "load_mini_batch",
    "load_spec",
    "read_mltable",
]
