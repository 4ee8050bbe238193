"""The driver's heap settings never trip over a pyarrow another thread is still importing."""

from __future__ import annotations

import importlib.machinery
import sys
import types

import pytest

from mlpipe.runtime import heap


def test_a_pyarrow_still_being_imported_is_left_for_a_later_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    half = types.ModuleType("pyarrow")  # what sys.modules holds while another thread imports it
    half.__spec__ = importlib.machinery.ModuleSpec("pyarrow", None)
    half.__spec__._initializing = True  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pyarrow", half)
    monkeypatch.setattr(heap, "_done", set())
    heap.keep_heap_small()  # was: AttributeError: partially initialized module 'pyarrow'
    assert "arrow" not in heap._done

    pools: list[object] = []
    half.__spec__._initializing = False  # type: ignore[attr-defined]
    half.system_memory_pool = lambda: "system"  # type: ignore[attr-defined]
    half.set_memory_pool = pools.append  # type: ignore[attr-defined]
    heap.keep_heap_small()  # once imported, the next call puts it on the system allocator
    assert pools == ["system"] and "arrow" in heap._done
