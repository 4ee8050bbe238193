"""Step dependency order and cycle detection."""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence


def order_steps(names: Sequence[str], deps: Mapping[str, Sequence[str]]) -> tuple[list[str],
                                                                                  list[list[str]]]:
    """Steps in dependency order, and the cycles that stop some from being ordered.

    ``deps[step]`` lists the steps ``step`` reads from. Among steps that are ready
    at the same time, the one written first in the YAML comes first (stable).
    Each cycle is a list of step names, ``[a, b, a]`` for a -> b -> a.
    """
    index = {name: i for i, name in enumerate(names)}
    users: dict[str, list[str]] = {name: [] for name in names}
    waiting = {name: 0 for name in names}
    for name in names:
        for dep in dict.fromkeys(deps.get(name, ())):
            if dep in index and dep != name:
                users[dep].append(name)
                waiting[name] += 1
    ready = [index[name] for name in names if waiting[name] == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        name = names[heapq.heappop(ready)]
        order.append(name)
        for user in users[name]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, index[user])
    done = set(order)
    stuck = [name for name in names if name not in done]
    return order, _cycles(stuck, deps) if stuck else []


def _cycles(stuck: Sequence[str], deps: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """One cycle for each group of steps that wait on each other."""
    remaining = set(stuck)
    seen_sets: list[frozenset[str]] = []
    cycles: list[list[str]] = []
    for start in stuck:
        path: list[str] = []
        on_path: dict[str, int] = {}
        node: str | None = start
        while node is not None and node not in on_path:
            on_path[node] = len(path)
            path.append(node)
            node = next((d for d in deps.get(node, ()) if d in remaining and d != node), None)
        if node is None:
            continue
        cycle = path[on_path[node] :] + [node]
        members = frozenset(cycle)
        if members not in seen_sets:
            seen_sets.append(members)
            # A cycle is read "a -> b": a needs b's output.
            cycles.append(list(reversed(cycle)))
    return cycles


__all__ = ["order_steps"]
