"""``parallel_run_step.settings.json``: the file in a parallel step's code folder that
tunes how ``append_row`` writes rows (Azure's ``append_row.pandas.DataFrame.to_csv``).

One reader for both users: the compiler checks the file when it compiles the step (so a
broken file is a validation error), and the runtime reads it from the step's code
snapshot when the step runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mlpipe.errors import MlpipeError

SETTINGS_FILE = "parallel_run_step.settings.json"


class SettingsFileError(MlpipeError, ValueError):
    """``parallel_run_step.settings.json`` is not valid JSON or has a value of the wrong type."""


def append_row_csv_options(folder: str | Path) -> dict[str, Any] | None:
    """The ``append_row.pandas.DataFrame.to_csv`` options of ``folder``'s settings file
    (``None`` when there is no file or no such options)."""
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
    return to_csv
