"""The one exception the data layer raises for bad input."""

from __future__ import annotations

from typing import Any

from mlpipe.diagnostics import Diagnostic, Location
from mlpipe.errors import MlpipeError


class DataError(MlpipeError):
    """Bad input data: a missing path, a malformed MLTable, a bad CSV row, ...

    ``diagnostic`` names the file (and the line where there is one) and says
    what was expected. The exception pickles, so a worker can raise it and the
    driver can report it.
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 column: int | None = None, key_path: str = "", code: str = "data",
                 hint: str | None = None) -> None:
        location = Location(file, line, column) if file is not None else None
        self.diagnostic = Diagnostic(message, key_path, location, "error", code, hint)
        super().__init__(self.diagnostic.format())

    @classmethod
    def from_diagnostic(cls, diagnostic: Diagnostic) -> DataError:
        error = cls.__new__(cls)
        error.diagnostic = diagnostic
        Exception.__init__(error, diagnostic.format())
        return error

    def __reduce__(self) -> tuple[Any, ...]:
        return (DataError.from_diagnostic, (self.diagnostic,))


def warning(message: str, *, file: str | None = None, key_path: str = "",
            code: str = "data") -> Diagnostic:
    """A warning diagnostic about the input (reported, never raised)."""
    return Diagnostic(message, key_path, Location(file) if file else None, "warning", code)
