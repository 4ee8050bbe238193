"""``mini_batch_size`` as written in the YAML: a file count or an approximate byte size."""

from __future__ import annotations

import re

from mlpipe.data.errors import DataError

DEFAULT_FILE_COUNT = 1  # Azure ML v2 default for file inputs
DEFAULT_TABLE_BYTES = 1024 * 1024  # ParallelRunConfig default for tabular inputs: 1MB

_UNITS = {"": 1, "b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3, "tb": 1024**4}
_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?b?)\s*$", re.IGNORECASE)


def file_count(text: str | None) -> int:
    """Files per mini-batch: a plain positive number (``"5"``); unset means 1."""
    if text is None or str(text).strip() == "":
        return DEFAULT_FILE_COUNT
    value = str(text).strip()
    if not value.isdigit() or int(value) < 1:
        raise DataError(
            f"mini_batch_size for a file input must be a positive number of files, got {value!r}",
            key_path="mini_batch_size", code="mini-batch-size",
            hint="sizes such as '10kb' apply to tabular (read_delimited) inputs only",
        )
    return int(value)


def byte_size(text: str | None) -> int:
    """Approximate bytes per mini-batch: ``"10kb"`` (1 kb = 1024 B), ``"1MB"``, ``"100"`` bytes."""
    if text is None or str(text).strip() == "":
        return DEFAULT_TABLE_BYTES
    match = _SIZE.match(str(text))
    if not match or int(match.group(1)) < 1:
        raise DataError(
            f"mini_batch_size for a tabular input must be a positive size such as "
            f"'100', '10kb', '1MB' or '1GB', got {text!r}",
            key_path="mini_batch_size",
            code="mini-batch-size",
        )
    unit = match.group(2).lower()
    if unit and not unit.endswith("b"):
        unit += "b"
    return int(match.group(1)) * _UNITS[unit]
