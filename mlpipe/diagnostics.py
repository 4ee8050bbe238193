"""Problems found in user input, with where they are and how to fix them.

Every layer reports bad input as :class:`Diagnostic` objects; the CLI prints
them as ``file:line:col: key.path: message`` and the SDK raises them together
in one :class:`ValidationError`.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from mlpipe.errors import MlpipeError

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Location:
    """A place in a file; ``line`` and ``column`` are 1-based, ``None`` when unknown."""

    file: str | None = None
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        parts = [self.file or "<unknown>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)


@dataclass(frozen=True)
class Diagnostic:
    """One problem (or warning) about the user's input.

    ``key_path`` is dotted from the document root (``jobs.score.retry_settings.timeout``);
    ``code`` is a short stable identifier tests and tools can match
    (``unknown-key``, ``range``, ``type``, ``binding``, ``missing-path``, ``cycle``, ...).
    """

    message: str
    key_path: str = ""
    location: Location | None = None
    severity: Severity = "error"
    code: str = "invalid"
    hint: str | None = None

    def format(self) -> str:
        """``file:line:col: [warning: ]key.path: message (hint)`` on one line."""
        head = str(self.location) if self.location else "<input>"
        sev = "" if self.severity == "error" else f"{self.severity}: "
        key = f"{self.key_path}: " if self.key_path else ""
        tail = f" ({self.hint})" if self.hint else ""
        return f"{head}: {sev}{key}{self.message}{tail}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        loc = data.pop("location") or {}
        data.update(file=loc.get("file"), line=loc.get("line"), column=loc.get("column"))
        return data

    __str__ = format


def errors_of(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics of severity ``error``."""
    return [d for d in diagnostics if d.severity == "error"]


def warnings_of(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics that are not errors (warnings and notes)."""
    return [d for d in diagnostics if d.severity != "error"]


class HasDiagnostics:
    """``errors`` and ``warnings`` of a result that holds its ``diagnostics``."""

    diagnostics: list[Diagnostic]

    @property
    def errors(self) -> list[Diagnostic]:
        return errors_of(self.diagnostics)

    @property
    def warnings(self) -> list[Diagnostic]:
        return warnings_of(self.diagnostics)


class ValidationError(MlpipeError):
    """Raised with every problem found, not just the first.

    The command line says each diagnostic on its line, then the count of problems, of
    :attr:`subject` (the file) and with its :attr:`consequence` when they are known
    (:meth:`about`)."""

    subject: str | None = None  # what was checked (a file), named in the summary
    consequence: str | None = None  # what follows from the problems ("nothing was run")

    def __init__(self, diagnostics: Sequence[Diagnostic]):
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        errors = errors_of(self.diagnostics)
        lines = [d.format() for d in errors] or [d.format() for d in self.diagnostics]
        count = len(errors)
        super().__init__(
            f"{count} problem{'s' if count != 1 else ''} found:\n" + "\n".join(lines)
        )

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(errors_of(self.diagnostics))

    def about(self, subject: str, consequence: str | None = None) -> ValidationError:
        """This error, said as problems of ``subject`` with ``consequence`` (set once: the
        innermost caller that knows them names them)."""
        if self.subject is None:
            self.subject = subject
        if self.consequence is None:
            self.consequence = consequence
        return self

    def details(self) -> tuple[str, ...]:
        return tuple(d.format() for d in self.diagnostics)

    def summary(self) -> str:
        count = len(self.errors)
        text = f"{count} problem{'s' if count != 1 else ''}"
        if self.subject:
            text = f"{self.subject}: {text}"
        return f"{text}; {self.consequence}" if self.consequence else text

    def to_json(self) -> str:
        return json.dumps([d.to_dict() for d in self.diagnostics], indent=2)


@dataclass
class DiagnosticBag:
    """Collects diagnostics while a layer works through a document."""

    items: list[Diagnostic] = field(default_factory=list)

    def add(self, diagnostic: Diagnostic) -> None:
        self.items.append(diagnostic)

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.items.extend(diagnostics)

    @property
    def errors(self) -> list[Diagnostic]:
        return errors_of(self.items)

    @property
    def warnings(self) -> list[Diagnostic]:
        return warnings_of(self.items)

    def raise_if_errors(self) -> None:
        if self.errors:
            raise ValidationError(self.items)


def did_you_mean(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """``"did you mean 'x'?"`` for the closest of ``choices``, or ``None``."""
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return f"did you mean '{match[0]}'?" if match else None
