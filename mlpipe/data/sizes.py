"""``mini_batch_size`` for a file or a tabular input (read by :mod:`mlpipe.sizes`)."""

from __future__ import annotations

from mlpipe.data.errors import DataError
from mlpipe.sizes import parse_mini_batch_size

DEFAULT_FILE_COUNT = 1  # Azure ML v2 default for file inputs
DEFAULT_TABLE_BYTES = 1024 * 1024  # ParallelRunConfig default for tabular inputs: 1MB


def file_count(text: str | None) -> int:
    """Files per mini-batch: a plain positive number (``"5"``); unset means 1."""
    if text is None or str(text).strip() == "":
        return DEFAULT_FILE_COUNT
    value = str(text).strip()
    size = parse_mini_batch_size(value)
    if size is None or size.count is None or size.count < 1:
        raise DataError(
            f"mini_batch_size for a file input must be a positive number of files, got {value!r}",
            key_path="mini_batch_size", code="mini-batch-size",
            hint="sizes such as '10kb' apply to tabular (read_delimited) inputs only",
        )
    return size.count


def byte_size(text: str | None) -> int:
    """Approximate bytes per mini-batch: ``"10kb"`` (1 kb = 1024 B), ``"1MB"``, ``"100"`` bytes."""
    if text is None or str(text).strip() == "":
        return DEFAULT_TABLE_BYTES
    size = parse_mini_batch_size(text)
    if size is None or size.bytes < 1:
        raise DataError(
            f"mini_batch_size for a tabular input must be a positive size such as "
            f"'100', '10kb', '1MB' or '1GB', got {text!r}",
            key_path="mini_batch_size",
            code="mini-batch-size",
        )
    return size.bytes
