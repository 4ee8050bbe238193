"""``Input`` and ``Output``, mirroring ``azure.ai.ml.Input`` / ``azure.ai.ml.Output``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from mlpipe.diagnostics import Diagnostic, ValidationError, did_you_mean
from mlpipe.io_types import DATA_TYPES, INPUT_MODES, LITERAL_TYPES, OUTPUT_MODES
from mlpipe.sdk.callsite import call_site
from mlpipe.sdk.tracking import Record, reading_file

_LITERAL_TYPES = set(LITERAL_TYPES)
INPUT_TYPES: tuple[str, ...] = (*DATA_TYPES, *LITERAL_TYPES)
OUTPUT_TYPES: tuple[str, ...] = DATA_TYPES  # an output is data
P = TypeVar("P", bound="_Port")


def check_choices(what: str, values: dict[str, tuple[Any, Sequence[str]]]) -> None:
    """Raise one :class:`ValidationError` at the caller's line for each value of ``values``
    (``{argument: (value, allowed)}``) that is neither ``None`` nor one of ``allowed``
    (compared case-insensitively, as the YAML schema does)."""
    if reading_file():
        return  # values read from YAML are judged by the schema, with their file lines
    problems = []
    for argument, (value, allowed) in values.items():
        if value is None or (isinstance(value, str) and value.lower() in allowed):
            continue
        got = f"{value!r}" if isinstance(value, str) else f"{type(value).__name__} {value!r}"
        hint = did_you_mean(value, allowed) if isinstance(value, str) else None
        problems.append(Diagnostic(f"{what}({argument}=...): must be one of {', '.join(allowed)}, "
                                   f"got {got}", location=call_site(), code="type", hint=hint))
    if problems:
        raise ValidationError(problems)


class _Port(Record):
    """What ``Input`` and ``Output`` share: ``type`` defaults to ``uri_folder`` in a mapping."""

    @classmethod
    def from_dict(cls: type[P], data: dict[str, Any]) -> P:
        return cls(**{"type": "uri_folder", **data})

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={value!r}" for key, value in self.to_dict().items())
        return f"{type(self).__name__}({fields})"


class Input(_Port):
    """A data or literal input: a declaration (``type``, ``optional``, ...), a value, or both.

    ``Input(type="uri_folder", path="./data", mode="ro_mount")`` binds data;
    ``Input(type="integer", default=2, min=1)`` declares a literal parameter.
    Relative ``path`` values are relative to the script that builds the job.
    """

    _keys = ("type", "path", "mode", "optional", "description", "default", "min", "max", "enum",
             "datastore")

    def __init__(
        self,
        *,
        type: str = "uri_folder",
        path: str | None = None,
        mode: str | None = None,
        optional: bool | None = None,
        description: str | None = None,
        default: Any = None,
        min: int | float | None = None,
        max: int | float | None = None,
        enum: list[Any] | None = None,
        datastore: str | None = None,
        **kwargs: Any,
    ) -> None:
        check_choices("Input", {"type": (type, INPUT_TYPES), "mode": (mode, INPUT_MODES)})
        self.type = type
        self.path = None if path is None else str(path)
        self.mode = mode
        self.optional = optional
        self.description = description
        self.default = default
        self.min = min
        self.max = max
        self.enum = enum
        self.datastore = datastore
        self._finish(kwargs)

    @property
    def is_literal(self) -> bool:
        return self.type in _LITERAL_TYPES


class Output(_Port):
    """A data output: ``Output(type="uri_folder", path=None, mode="rw_mount")``."""

    _keys = ("type", "path", "mode", "description", "name", "version")

    def __init__(
        self,
        *,
        type: str | None = "uri_folder",
        path: str | None = None,
        mode: str | None = None,
        description: str | None = None,
        name: str | None = None,
        version: str | None = None,
        **kwargs: Any,
    ) -> None:
        check_choices("Output", {"type": (type, OUTPUT_TYPES), "mode": (mode, OUTPUT_MODES)})
        self.type = type
        self.path = None if path is None else str(path)
        self.mode = mode
        self.description = description
        self.name = name
        self.version = version
        self._finish(kwargs)


class PipelineInput:
    """A pipeline parameter inside a ``@pipeline`` function: ``${{parent.inputs.<name>}}``."""

    def __init__(self, name: str, value: Any = None) -> None:
        self.name = name
        self.value = value

    def binding(self) -> str:
        return "${{parent.inputs.%s}}" % self.name

    def __str__(self) -> str:
        return self.binding()

    def __repr__(self) -> str:
        return f"PipelineInput({self.name!r})"

    def __format__(self, spec: str) -> str:
        return format(self.binding(), spec)
