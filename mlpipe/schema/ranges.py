"""The documented ranges of parallel-step settings, as reusable checks.

The schema layer applies them to values written in the YAML; the compiler applies
the *same* functions to values that arrive through a binding
(``max_concurrency_per_instance: ${{parent.inputs.n}}``) once it has resolved them.
Every check raises :class:`SettingError` with a message in the house style
(``must be in (0, 259200], got -5``) or returns the normalised value.

Integers follow azure-ai-ml's (marshmallow's) lenient reading — ``5``, ``5.0`` and
``"5"`` all mean 5 — except that a fractional number such as ``2.5`` is an error
instead of being truncated silently, and ``true``/``false`` are never integers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mlpipe.errors import MlpipeError
from mlpipe.limits import MAX_INT_DIGITS
from mlpipe.schema.yamlio import describe_value
from mlpipe.sizes import MINI_BATCH_SIZE_PATTERN

INT_MAX = 2**31 - 1  # Azure documents ranges as [x, int.max] (a .NET Int32)
LOGGING_LEVELS = ("DEBUG", "INFO", "WARNING")
_INT_TEXT = re.compile(r"^\s*[-+]?\d+\s*$")


class SettingError(MlpipeError, ValueError):
    """A setting's value is wrong; ``message`` is ready to show, ``hint`` optional."""

    def __init__(self, message: str, *, code: str = "range", hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.hint = hint


@dataclass(frozen=True)
class IntRange:
    """An integer interval; ``None`` bounds are open-ended (shown as ``int.max``)."""

    low: int
    high: int = INT_MAX
    low_open: bool = False
    high_open: bool = False

    def __str__(self) -> str:
        high = "int.max" if self.high == INT_MAX else str(self.high)
        return f"{'(' if self.low_open else '['}{self.low}, {high}{')' if self.high_open else ']'}"

    def contains(self, value: int) -> bool:
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    def check(self, value: Any) -> int:
        """``value`` as an int inside the range, else :class:`SettingError`."""
        number = to_int(value)
        if not self.contains(number):
            raise SettingError(f"must be in {self}, got {number}", code="range")
        return number


# Key paths relative to the step (or component) -> documented range.
INT_SETTINGS: dict[str, IntRange] = {
    "retry_settings.timeout": IntRange(0, 259200, low_open=True),
    "retry_settings.max_retries": IntRange(0),
    "error_threshold": IntRange(-1),
    "mini_batch_error_threshold": IntRange(-1),
    "resources.instance_count": IntRange(1),
    "max_concurrency_per_instance": IntRange(1),
}


def to_int(value: Any) -> int:
    """5, 5.0 and "5" -> 5; 2.5, true, "abc" -> :class:`SettingError` (code ``type``)."""
    if isinstance(value, bool):
        raise SettingError(f"must be an integer, got {describe_value(value)}", code="type")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise SettingError(f"must be an integer, got {describe_value(value)}", code="type")
        if not value.is_integer():
            raise SettingError(
                f"must be a whole number, got {value!r}", code="type",
                hint="a fractional value would be truncated silently by azure-ai-ml")
        return int(value)
    if isinstance(value, str) and _INT_TEXT.match(value):
        if sum(c.isdigit() for c in value) > MAX_INT_DIGITS:
            raise SettingError(f"integer too long: more than {MAX_INT_DIGITS} digits",
                               code="range")
        return int(value)
    raise SettingError(f"must be an integer, got {describe_value(value)}", code="type")


def to_number(value: Any) -> int | float:
    """5, 2.5 and "2.5" -> the number (marshmallow's ``Float``); true and "abc" are a
    :class:`SettingError`."""
    if isinstance(value, bool):
        raise SettingError(f"must be a number, got {describe_value(value)}", code="type")
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            pass
        else:
            if number == number and number not in (float("inf"), float("-inf")):
                return number
    raise SettingError(f"must be a number, got {describe_value(value)}", code="type")


TRUTHY = frozenset({"t", "true", "y", "yes", "on", "1"})
FALSY = frozenset({"f", "false", "n", "no", "off", "0"})


def to_bool(value: Any) -> bool:
    """true/false, and the words and 0/1 marshmallow's ``Boolean`` reads ("True", "yes", 1)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in TRUTHY | FALSY:
        return value.lower() in TRUTHY
    raise SettingError(f"must be true or false, got {describe_value(value)}", code="type")


def check_int_setting(name: str, value: Any) -> int:
    """Check the integer setting ``name`` (a key of :data:`INT_SETTINGS`)."""
    return INT_SETTINGS[name].check(value)


def check_mini_batch_size(value: Any) -> str:
    """A string like ``"10"`` (files) or ``"10kb"``/``"1MB"`` (bytes), greater than 0;
    ``"0"`` means unset (the default applies), as azure-ai-ml writes it."""
    if isinstance(value, bool) or not isinstance(value, str):
        hint = (f'quote it: "{value}"' if isinstance(value, int) and not isinstance(value, bool)
                else None)
        raise SettingError(
            f'must be a string such as "10", "10kb" or "1MB", got {describe_value(value)}',
            code="type",
            hint=hint,
        )
    if not MINI_BATCH_SIZE_PATTERN.match(value):
        compact = value.replace(" ", "")
        hint = (f"write '{compact}'" if compact != value and MINI_BATCH_SIZE_PATTERN.match(compact)
                else None)
        raise SettingError(
            f"must match {MINI_BATCH_SIZE_PATTERN.pattern} (a count, or a size with kb, mb or gb), "
            f"got {value!r}",
            code="pattern",
            hint=hint,
        )
    digits = re.match(r"\d+", value).group()  # type: ignore[union-attr]
    if len(digits) > MAX_INT_DIGITS:
        raise SettingError(f"number too long: more than {MAX_INT_DIGITS} digits", code="range")
    if value.strip().isdigit() and int(digits) == 0:
        return value  # "0": unset (what azure-ai-ml sends when no size is given)
    if int(digits) == 0:
        raise SettingError(f"must be greater than 0, got {value!r}", code="range")
    return value


def check_logging_level(value: Any) -> str:
    """Exactly ``DEBUG``, ``INFO`` or ``WARNING``."""
    if isinstance(value, str) and value in LOGGING_LEVELS:
        return value
    hint = None
    if isinstance(value, str) and value.upper() in LOGGING_LEVELS:
        hint = f"did you mean '{value.upper()}'?"
    elif isinstance(value, str) and value.upper() == "WARN":
        hint = "did you mean 'WARNING'?"
    raise SettingError(f"must be one of DEBUG, INFO, WARNING, got {describe_value(value)}",
                       code="enum", hint=hint)


def check_partition_keys(value: Any) -> list[str]:
    """A non-empty list of non-empty strings."""
    if not isinstance(value, list):
        raise SettingError(f"must be a list of column names, got {describe_value(value)}",
                           code="type")
    if not value:
        raise SettingError("must name at least one column", code="range")
    for item in value:
        if not isinstance(item, str) or not item:
            raise SettingError(f"must hold column names (strings), got {describe_value(item)}",
                               code="type")
    return list(value)


def check_setting(name: str, value: Any) -> Any:
    """Check any resolved parallel setting by its key path relative to the step.

    ``name`` is one of :data:`INT_SETTINGS`' keys, ``mini_batch_size``,
    ``logging_level`` or ``partition_keys``; returns the normalised value.
    """
    if name in INT_SETTINGS:
        return check_int_setting(name, value)
    if name == "mini_batch_size":
        return check_mini_batch_size(value)
    if name == "logging_level":
        return check_logging_level(value)
    if name == "partition_keys":
        return check_partition_keys(value)
    raise KeyError(f"no range check for setting {name!r}")
