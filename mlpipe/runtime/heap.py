"""The driver's heap: large blocks go back to the system when they are freed.

A driver that runs a million mini-batches, then reads a million attempts back for
report.html, frees as much as it allocates, in blocks of all sizes and lifetimes. With
glibc's default of raising its mmap threshold each time a mapped block is freed, and
Arrow's own allocator keeping what it freed, those blocks stay in the process: reading the
attempts of 200,000 mini-batches left it 110 MB larger for 21 MB of columns. A fixed
threshold (blocks of 128 KB and more are mapped, and unmapped when freed) and Arrow on the
system allocator leave it 25 MB larger. Small objects (Python's own) are not affected.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any

MMAP_THRESHOLD = 128 * 1024  # glibc's default, made fixed
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)
_done: set[str] = set()


def keep_heap_small() -> None:
    """Map large blocks for good in this process (glibc), and put Arrow, once imported, on
    the system allocator. Call it where a driver starts and before pyarrow reads a large
    file; it acts once per process for each, and never on child processes (the workers'
    allocators stay as the user's code expects)."""
    if "glibc" not in _done:
        _done.add("glibc")
        try:
            if os.confstr("CS_GNU_LIBC_VERSION"):
                ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        except (ValueError, OSError, AttributeError):  # not glibc, or no such confstr name
            pass
    pyarrow = sys.modules.get("pyarrow")
    if "arrow" not in _done and pyarrow is not None and not _initializing(pyarrow):
        _done.add("arrow")
        pyarrow.set_memory_pool(pyarrow.system_memory_pool())


def _initializing(module: Any) -> bool:
    """Whether another thread is still importing ``module`` (it is in ``sys.modules`` from
    the start of its import: a Dask client's thread may be importing pyarrow right now)."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


__all__ = ["MMAP_THRESHOLD", "keep_heap_small"]
