"""Objects that remember where the user made and changed them, and the dict builder.

Every SDK entity records the call site that created it and the call site of
each public attribute set afterwards (``node.mini_batch_size = "20"``). When a
job is turned into its YAML-equivalent dict, an :class:`Emitter` collects a
position for each key path, so diagnostics can point at the Python line.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, TypeVar

from mlpipe.diagnostics import Location
from mlpipe.sdk.callsite import call_site

KeyPath = tuple[str | int, ...]
R = TypeVar("R", bound="Record")

_from_file: contextvars.ContextVar[bool] = contextvars.ContextVar("mlpipe_sdk_from_file",
                                                                  default=False)


@contextlib.contextmanager
def from_file() -> Iterator[None]:
    """Objects made inside this block come from a YAML file: they get no Python origin."""
    token = _from_file.set(True)
    try:
        yield
    finally:
        _from_file.reset(token)


def reading_file() -> bool:
    """Whether objects are being made from a YAML file (inside :func:`from_file`)."""
    return _from_file.get()


class Tracked:
    """Base of SDK entities: creation site plus per-attribute change sites."""

    _origin: Location | None
    _sites: dict[str, Location | None]

    def _start_tracking(self, origin: Location | None = None) -> None:
        if origin is None and not _from_file.get():
            origin = call_site()
        object.__setattr__(self, "_origin", origin)
        object.__setattr__(self, "_sites", {})
        object.__setattr__(self, "_ready", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_") and self.__dict__.get("_ready"):
            self._sites[name] = call_site()
        object.__setattr__(self, name, value)

    def _site(self, attr: str) -> Location | None:
        sites: dict[str, Location | None] = self.__dict__.get("_sites", {})
        return sites.get(attr)


class Record(Tracked):
    """An SDK object written as one YAML mapping: ``_keys`` in order, then unknown keywords.

    A subclass sets its attributes in ``__init__`` and ends with ``self._finish(kwargs)``;
    two records are equal when their mappings are.
    """

    _keys: ClassVar[tuple[str, ...]] = ()
    _extra: dict[str, Any]

    def _finish(self, extra: Mapping[str, Any]) -> None:
        """Keep the keywords mlpipe does not know (written to the YAML as given); start tracking."""
        self._extra = dict(extra)
        self._start_tracking()

    def _yaml_value(self, key: str) -> Any:
        return getattr(self, key)

    def to_dict(self) -> dict[str, Any]:
        """The YAML mapping (keys in a fixed order, unset ones left out)."""
        return drop_none({**{key: self._yaml_value(key) for key in self._keys}, **self._extra})

    @classmethod
    def coerce(cls: type[R], value: R | Mapping[str, Any] | None) -> R | None:
        """``value`` as this record: a mapping is converted, anything else left as it is."""
        if isinstance(value, Mapping):
            return cls(**dict(value))
        return value  # None, a record, or a wrong value left for the schema to reject

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self)) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_dict()})"


class Emitter:
    """Collects the Python location of key paths while a dict is being built."""

    def __init__(self) -> None:
        self.marks: dict[KeyPath, Location] = {}

    def mark(self, path: KeyPath, location: Location | None) -> None:
        if location is not None:
            self.marks[path] = location

    def mark_object(self, path: KeyPath, obj: Any, keys: Mapping[str, str] | None = None) -> None:
        """Mark ``path`` with ``obj``'s origin and each changed attribute with its site.

        ``keys`` maps attribute names to YAML keys where they differ.
        """
        if not isinstance(obj, Tracked):
            return
        self.mark(path, obj._origin)
        for attr, site in obj.__dict__.get("_sites", {}).items():
            key = (keys or {}).get(attr, attr)
            self.mark(path + tuple(key.split(".")), site)

    def positions(self, document: Any) -> dict[KeyPath, Location]:
        """A location for every key path in ``document`` (nearest marked ancestor)."""
        out: dict[KeyPath, Location] = {}

        def walk(value: Any, path: KeyPath, inherited: Location | None) -> None:
            here = self.marks.get(path, inherited)
            if here is not None:
                out[path] = here
            if isinstance(value, Mapping):
                for key, child in value.items():
                    walk(child, path + (key,), here)
            elif isinstance(value, list):
                for index, child in enumerate(value):
                    walk(child, path + (index,), here)

        walk(document, (), None)
        return out


def drop_none(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without the keys whose value is ``None`` (order kept)."""
    return {key: value for key, value in data.items() if value is not None}
