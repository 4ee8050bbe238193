"""A read-only, picklable mapping for the execution plan."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class FrozenDict(dict[K, V]):
    """A ``dict`` that refuses every change after construction.

    Unlike ``types.MappingProxyType`` it pickles, so plan objects can be sent
    to worker processes and Dask workers as they are.
    """

    def _readonly(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is read-only")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _readonly
    __ior__ = _readonly

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda kv: repr(kv[0]))))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (dict(self),))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


def freeze(value: Mapping[K, V] | Iterable[tuple[K, V]] | None = None) -> FrozenDict[K, V]:
    """Return ``value`` as a :class:`FrozenDict` (empty when ``None``)."""
    return FrozenDict(value or {})
