"""The journal's compact id -> slot map answers as a dict would, in a fraction of its memory."""

from __future__ import annotations

import os
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from mlpipe.runtime.id_table import IdTable

IDS = st.sampled_from(["a", "b", "mb-0001", "é", os.fsdecode(b"caf\xe9"), "", "x" * 300,
                       *(f"{n:020x}" for n in range(40))])
OPERATIONS = st.lists(st.tuples(st.sampled_from(["add", "find_or_add", "remove"]), IDS),
                      max_size=400)


@settings(max_examples=200, deadline=None)
@given(OPERATIONS)
def test_the_table_answers_as_a_dict_does(operations: list[tuple[str, str]]) -> None:
    table, model, next_slot = IdTable(), dict[str, int](), 0
    for operation, key in operations:
        if operation == "remove":
            assert table.remove(key) == model.pop(key, -1)
        elif operation == "find_or_add" or key not in model:
            slot, added = table.find_or_add(key)
            assert added == (key not in model)
            if added:
                assert slot == next_slot
                model[key], next_slot = slot, next_slot + 1
            assert slot == model[key]
        assert len(table) == len(model)
        assert (key in table) == (key in model) and table.find(key) == model.get(key, -1)
    assert list(table.slots()) == sorted(model.values())  # removed slots are never reused
    assert {table.key(slot): slot for slot in table.slots()} == model
    assert all(table.raw(slot) == key.encode("utf-8", "surrogateescape")
               for key, slot in model.items())


def test_many_ids_cost_a_fraction_of_a_dict() -> None:
    keys = [f"{n:020x}" for n in range(100_000)]
    table = IdTable()
    for key in keys:
        table.add(key)
    assert table.find(keys[65_432]) == 65_432 and table.find("nope") == -1
    held = sum(sys.getsizeof(part) for part in vars(table).values())
    as_dict = sys.getsizeof(dict.fromkeys(keys, 1 << 40)) + sum(map(sys.getsizeof, keys)) \
        + len(keys) * sys.getsizeof(1 << 40)
    assert held < 64 * len(keys) and held * 2 < as_dict, (held, as_dict)
