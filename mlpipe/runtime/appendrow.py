"""Where append_row writes: the output file of a step with ``append_row_to``.

The rows themselves are kept, until the end of the step, in the step's journal
(:mod:`mlpipe.runtime.journal`), which writes them to this target in input order.
"""

from __future__ import annotations

from pathlib import Path

APPEND_ROW_FILE = "parallel_run_step.txt"


def append_row_target(output_path: str, is_file: bool, file_name: str | None = None) -> Path:
    """The append_row file: the uri_file output itself, or in a folder ``file_name``
    (``--append_row_file_name``), else parallel_run_step.txt."""
    return Path(output_path) if is_file else Path(output_path) / (file_name or APPEND_ROW_FILE)


__all__ = ["APPEND_ROW_FILE", "append_row_target"]
