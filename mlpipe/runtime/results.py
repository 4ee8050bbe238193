"""What a run() return value means: item counts, Azure's messages, append_row text.

Runs inside the worker, so the driver receives counts and ready-made text and
never touches user objects.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mlpipe.errors import MlpipeError

RETURN_TYPE_MESSAGE = (
    "The run() method in the entry script accepts and should return a list or a pandas "
    "DataFrame. The actual type of output {value} is {type_name}."
)
MORE_RESULTS_WARNING = (
    "run() returned {returned} results for a mini-batch of {items} items; "
    "only {items} are counted as succeeded."
)
FEWER_RESULTS_MESSAGE = (
    "run() returned {returned} results for a mini-batch of {items} items: "
    "{failed} items are counted as failed."
)


class ReturnValueError(MlpipeError, ValueError):
    """run() returned something that is neither a list, a tuple nor a DataFrame."""


@dataclass(frozen=True)
class RowFormat:
    """How append_row writes rows: ``None`` means summary-only (count, do not write).

    ``to_csv`` holds the ``pandas.DataFrame.to_csv`` options for DataFrame results
    (``parallel_run_step.settings.json``), ``header`` whether a DataFrame's column
    names are written once at the top of the file.
    """

    header: bool = False
    to_csv: Mapping[str, Any] | None = None


def is_dataframe(value: Any) -> bool:
    """True for a pandas DataFrame, without importing pandas when it is not loaded."""
    cls = type(value)
    return cls.__name__ == "DataFrame" and cls.__module__.startswith("pandas")


def count_results(value: Any) -> int:
    """Number of results run() returned; raise :class:`ReturnValueError` with Azure's message."""
    if isinstance(value, (list, tuple)) or is_dataframe(value):
        return len(value)
    shown = repr(value)
    if len(shown) > 200:
        shown = shown[:200] + "..."
    raise ReturnValueError(
        RETURN_TYPE_MESSAGE.format(value=f"'{shown}'", type_name=type(value).__name__)
    )


def format_rows(value: Any, fmt: RowFormat) -> tuple[str, str | None]:
    """The append_row text of ``value`` (one line per element/row) and the header line, if any.

    Lists and tuples give ``str(element)`` per line. DataFrames are written as
    Azure does: space-separated, no header, no index, unless ``fmt`` says otherwise.
    """
    if not is_dataframe(value):
        if not value:
            return "", None
        return "\n".join(map(str, value)) + "\n", None
    options: dict[str, Any] = {"sep": " ", "index": False}
    options.update(fmt.to_csv or {})
    header_wanted = bool(options.pop("header", fmt.header))
    options.pop("path_or_buf", None)
    buffer = io.StringIO()
    value.to_csv(buffer, header=False, **options)
    header = None
    if header_wanted:
        head = io.StringIO()
        value.iloc[0:0].to_csv(head, header=True, **options)
        header = head.getvalue()
    return buffer.getvalue(), header


__all__ = [
    "FEWER_RESULTS_MESSAGE",
    "MORE_RESULTS_WARNING",
    "RETURN_TYPE_MESSAGE",
    "ReturnValueError",
    "RowFormat",
    "count_results",
    "format_rows",
    "is_dataframe",
]
