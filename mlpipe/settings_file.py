"""``parallel_run_step.settings.json``: the file in a parallel step's code folder that
tunes how ``append_row`` writes rows (Azure's ``append_row.pandas.DataFrame.to_csv``).

Read once, by the compiler, when it compiles a step with ``append_row_to`` (a broken file
is a validation error with the file's path); the options travel in the plan
(``ParallelStep.append_row_csv``), so the runtime never reads the file again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mlpipe.errors import MlpipeError
from mlpipe.frozen import FrozenDict, freeze

SETTINGS_FILE = "parallel_run_step.settings.json"


class SettingsFileError(MlpipeError, ValueError):
    """``parallel_run_step.settings.json`` is not valid JSON or has a value of the wrong type."""


def append_row_csv_options(folder: str | Path) -> FrozenDict[str, Any] | None:
    """The ``append_row.pandas.DataFrame.to_csv`` options of ``folder``'s settings file,
    read-only (JSON arrays as tuples); ``None`` when there is no file or no such options."""
    settings_path = Path(folder) / SETTINGS_FILE
    if not settings_path.is_file():
        return None
    try:
        settings = json.loads(settings_path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise SettingsFileError(f"{settings_path}: not valid JSON: {error}") from None
    append_row = settings.get("append_row") if isinstance(settings, dict) else None
    to_csv = append_row.get("pandas.DataFrame.to_csv") if isinstance(append_row, dict) else None
    if to_csv is not None and not isinstance(to_csv, dict):
        raise SettingsFileError(f"{settings_path}: append_row.pandas.DataFrame.to_csv must be an "
                                f"object of pandas.DataFrame.to_csv options, got "
                                f"{type(to_csv).__name__}")
    return None if to_csv is None else _frozen(to_csv)


def _frozen(value: Any) -> Any:
    """A JSON value made immutable (and hashable), as plan values are."""
    if isinstance(value, dict):
        return freeze({key: _frozen(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    return value
