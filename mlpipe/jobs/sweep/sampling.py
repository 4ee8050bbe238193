"""Draw the parameters of a sweep's trials from its search space.

``random`` draws every trial independently (``seed`` makes the draws repeatable); ``grid``
walks every combination of the ``choice`` entries, in order; ``bayesian`` is drawn like
``random`` here (the runner says so once). The distributions are Azure ML's:
``loguniform(a, b)`` is ``exp(uniform(a, b))``, ``lognormal(mu, sigma)`` is
``exp(normal(mu, sigma))``, the ``q`` kinds round to a multiple of ``q``, and
``randint(upper)`` is an integer in ``[0, upper)``.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from mlpipe.plan import SearchParam


def suggest(space: Sequence[SearchParam], algorithm: str, seed: int | None,
            count: int) -> Iterator[dict[str, Any]]:
    """Up to ``count`` trials' parameters (trial input name -> value)."""
    if algorithm == "grid":
        yield from itertools.islice(grid(space), count)
        return
    rng = random.Random(seed)
    for _ in range(count):
        yield draw_all(space, rng)


def grid(space: Sequence[SearchParam]) -> Iterator[dict[str, Any]]:
    """Every combination of the ``choice`` entries (the first entry varies slowest)."""
    names = [param.name for param in space]
    for combination in itertools.product(*(param.values for param in space)):
        params: dict[str, Any] = {}
        for name, value in zip(names, combination, strict=True):
            _put(params, name, value, None)
        yield params


def draw_all(space: Sequence[SearchParam], rng: random.Random) -> dict[str, Any]:
    """One trial's parameters drawn from every entry."""
    params: dict[str, Any] = {}
    for param in space:
        _put(params, param.name, draw(param, rng), rng)
    return params


def _put(params: dict[str, Any], name: str, value: Any, rng: random.Random | None) -> None:
    """A chosen mapping holds nested entries (a conditional search space): each of its keys
    is a trial input, drawn when it is itself an entry."""
    if not isinstance(value, Mapping):
        params[name] = value
        return
    for key, item in value.items():
        if isinstance(item, Mapping) and "type" in item:
            nested = nested_param(str(key), item)
            _put(params, str(key), draw(nested, rng or random.Random()), rng)
        else:
            params[str(key)] = item


def nested_param(name: str, entry: Mapping[str, Any]) -> SearchParam:
    """A nested search-space entry (a mapping inside a choice) as a :class:`SearchParam`."""
    def num(key: str) -> float | None:
        value = entry.get(key)
        return float(value) if isinstance(value, (int, float)) else None

    upper = entry.get("upper")
    return SearchParam(name, str(entry["type"]).lower(), values=tuple(entry.get("values") or ()),
                       low=num("min_value"), high=num("max_value"), q=num("q"), mu=num("mu"),
                       sigma=num("sigma"), upper=int(upper) if isinstance(upper, int) else None)


def draw(param: SearchParam, rng: random.Random) -> Any:
    """One value of ``param``."""
    kind = param.kind
    if kind == "choice":
        return rng.choice(list(param.values))
    if kind == "randint":
        return rng.randrange(int(param.upper or 1))
    if kind.endswith("uniform"):
        value = rng.uniform(float(param.low or 0.0), float(param.high or 0.0))
    else:
        value = rng.gauss(float(param.mu or 0.0), float(param.sigma or 0.0))
    if "log" in kind:
        value = math.exp(value)
    if kind.startswith("q") and param.q:
        value = round(value / param.q) * param.q
        return int(value) if float(param.q).is_integer() else value
    return value


__all__ = ["draw", "draw_all", "grid", "nested_param", "suggest"]
