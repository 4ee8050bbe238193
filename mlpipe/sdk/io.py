"""``Input`` and ``Output``, mirroring ``azure.ai.ml.Input`` / ``azure.ai.ml.Output``."""

from __future__ import annotations

from typing import Any

from mlpipe.sdk.tracking import Tracked, drop_none

_LITERAL_TYPES = {"string", "integer", "number", "boolean"}


class Input(Tracked):
    """A data or literal input: a declaration (``type``, ``optional``, ...) and/or a value (``path``).

    ``Input(type="uri_folder", path="./data", mode="ro_mount")`` binds data;
    ``Input(type="integer", default=2, min=1)`` declares a literal parameter.
    Relative ``path`` values are relative to the script that builds the job.
    """

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
        self._extra = dict(kwargs)
        self._start_tracking()

    @property
    def is_literal(self) -> bool:
        return self.type in _LITERAL_TYPES

    def to_dict(self) -> dict[str, Any]:
        """The YAML mapping of this input (keys in a fixed order, unset ones left out)."""
        return drop_none({
            "type": self.type, "path": self.path, "mode": self.mode, "optional": self.optional,
            "description": self.description, "default": self.default, "min": self.min,
            "max": self.max, "enum": self.enum, "datastore": self.datastore, **self._extra,
        })

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Input:
        return cls(**{"type": "uri_folder", **data})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Input) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"Input({', '.join(f'{k}={v!r}' for k, v in self.to_dict().items())})"


class Output(Tracked):
    """A data output: ``Output(type="uri_folder", path=None, mode="rw_mount")``."""

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
        self.type = type
        self.path = None if path is None else str(path)
        self.mode = mode
        self.description = description
        self.name = name
        self.version = version
        self._extra = dict(kwargs)
        self._start_tracking()

    def to_dict(self) -> dict[str, Any]:
        return drop_none({
            "type": self.type, "path": self.path, "mode": self.mode,
            "description": self.description, "name": self.name, "version": self.version,
            **self._extra,
        })

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Output:
        return cls(**{"type": "uri_folder", **data})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Output) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"Output({', '.join(f'{k}={v!r}' for k, v in self.to_dict().items())})"


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
