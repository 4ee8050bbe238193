"""A step's ``mini_batch_size`` applied to a file or a tabular input.

The compiler reads the written value once (:func:`mlpipe.sizes.parse_mini_batch_size`);
here the plan's :class:`~mlpipe.sizes.MiniBatchSize` becomes files or bytes per
mini-batch, with the defaults for an unset size. No text is parsed here.
"""

from __future__ import annotations

from mlpipe.data.errors import DataError
from mlpipe.sizes import MiniBatchSize

DEFAULT_FILE_COUNT = 1  # Azure ML v2 default for file inputs
DEFAULT_TABLE_BYTES = 1024 * 1024  # ParallelRunConfig default for tabular inputs: 1MB


def file_count(size: MiniBatchSize | None) -> int:
    """Files per mini-batch: a plain positive number (``"5"``); unset means 1."""
    if size is None:
        return DEFAULT_FILE_COUNT
    if size.count is None or size.count < 1:
        raise DataError(
            f"mini_batch_size for a file input must be a positive number of files, got "
            f"{size.text!r}", key_path="mini_batch_size", code="mini-batch-size",
            hint="sizes such as '10kb' apply to tabular (read_delimited) inputs only",
        )
    return size.count


def byte_size(size: MiniBatchSize | None) -> int:
    """Approximate bytes per mini-batch: ``"10kb"`` (1 kb = 1024 B), ``"1MB"``, ``"100"`` bytes."""
    if size is None:
        return DEFAULT_TABLE_BYTES
    if size.bytes < 1:
        raise DataError(
            f"mini_batch_size for a tabular input must be a positive size such as "
            f"'100', '10kb', '1MB' or '1GB', got {size.text!r}",
            key_path="mini_batch_size",
            code="mini-batch-size",
        )
    return size.bytes
