"""The picklable descriptors of tabular mini-batches (what the driver sends to workers).

A :class:`TablePayload` is the ``payload`` of a tabular
:class:`~mlpipe.data.minibatch.MiniBatch`: the MLTable's read options and
transformations plus one or more :class:`Segment` (a byte range of a text file,
or row groups / a row range of a parquet file).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlpipe.data.mltable_spec import ReadSpec
from mlpipe.data.transforms import Transform

PATH_COLUMN = "Path"


@dataclass(frozen=True)
class Segment:
    """One piece of one file.

    Text formats: bytes ``[start, end)`` (``end`` ``None`` = end of file) holding
    whole records and no header line. Parquet: ``row_groups`` and, for a piece of
    one large row group, ``row_slice = (offset, length)`` inside it.
    ``first_row`` is the table-wide number of the first row when the
    transformations need row numbers; ``rows`` the record count when known.
    """

    path: str
    start: int = 0
    end: int | None = None
    row_groups: tuple[int, ...] | None = None
    row_slice: tuple[int, int] | None = None
    columns: tuple[str, ...] | None = None  # header names to use (None: the file's own header)
    skip_rows: int = 0  # header rows to skip inside the range (utf-16/utf-32 files)
    first_row: int | None = None
    rows: int | None = None

    def detail(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": self.path}
        if self.row_groups is not None:
            out["row_groups"] = list(self.row_groups)
            if self.row_slice is not None:
                out["rows"] = [self.row_slice[0], self.row_slice[0] + self.row_slice[1]]
        else:
            out["bytes"] = [self.start, self.end]
        return out


@dataclass(frozen=True)
class TableSource:
    """The MLTable parts every segment of one input shares."""

    mltable: str  # MLTable file, for error messages
    read: ReadSpec
    transforms: tuple[Transform, ...] = ()


@dataclass(frozen=True)
class TablePayload:
    """A tabular mini-batch: segments to read, transform and concatenate.

    ``match`` (partition batches whose keys come from the data) keeps only the
    rows whose key columns equal these values after the transformations.
    """

    source: TableSource
    segments: tuple[Segment, ...]
    match: tuple[tuple[str, Any], ...] | None = None
