"""The driver's memory does not grow with the step: per mini-batch it keeps only the journal's
compact index (about 100 bytes), whatever else a step of many mini-batches reports."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from mlpipe.data.minibatch import MiniBatch
from mlpipe.frozen import freeze
from mlpipe.runtime import run_parallel_step
from tests.runtime.support import LOADER, make_step

ECHO = "def run(mini_batch):\n    return mini_batch\n"


def listing(count: int) -> Iterator[MiniBatch]:
    """``count`` one-item mini-batches, made as they are pulled (as the data layer does)."""
    for n in range(count):
        row = f"/data/f{n:07d}.dat"
        yield MiniBatch(id=f"{n:020x}", index=n, kind="files", payload=(row,), items=1,
                        detail=freeze({"files": [row]}))


def peak_bytes(tmp_path: Path, count: int) -> int:
    step = make_step(tmp_path, ECHO)
    tracemalloc.start()
    try:
        summary = run_parallel_step(step, mini_batches=listing(count), loader=LOADER)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert summary.status == "Completed" and summary.mini_batches_succeeded == count
    rows = Path(summary.append_row_file or "").read_text().splitlines()
    assert rows == [f"/data/f{n:07d}.dat" for n in range(count)]
    return peak


@pytest.mark.slow
def test_the_driver_keeps_about_100_bytes_per_mini_batch(tmp_path: Path) -> None:
    peak_bytes(tmp_path / "warm", 10)  # imports and first-use allocations out of the way
    small, large = 4_000, 12_000
    growth = peak_bytes(tmp_path / "large", large) - peak_bytes(tmp_path / "small", small)
    per_mini_batch = growth / (large - small)
    assert per_mini_batch < 250, f"{per_mini_batch:.0f} bytes per mini-batch"
