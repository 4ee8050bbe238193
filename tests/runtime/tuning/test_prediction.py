"""The advisor checked against reality: profile a step at one mini_batch_size and
concurrency, predict its wall time at two others, run those, compare (bench/advise_accuracy.py
does it for five workloads and five what-ifs each)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.jobs.support import create
from tests.runtime.tuning.support import tabular_pipeline

TOLERANCE = 0.25
SETTINGS = (("4kb", 2), ("300", 3))  # mini_batch_size (bytes: the input is a table), workers


@pytest.mark.slow
def test_predicted_wall_times_are_within_a_quarter_of_the_measured_ones(tmp_path: Path) -> None:
    """900 rows of random length; run() sleeps 20 ms per call and 10 ms per row, so the
    fixed cost per call and the cost per row are fitted from mini-batches of 1 kb (their row
    counts vary). The prediction uses only what the profiled run measured."""
    folder, runs = tmp_path / "p", tmp_path / "runs"
    shape = {"rows": 900, "per_call": 0.02, "per_row": 0.01}
    profiled = create(tabular_pipeline(folder, size="1kb", concurrency=2, **shape), runs, "base")
    assert profiled.proc.returncode == 0, profiled.proc.stderr
    for size, workers in SETTINGS:
        advised = run_cli("job", "advise", "base", "--runs-dir", str(runs), "-o", "json",
                          "--set", f"jobs.score.mini_batch_size={size}",
                          "--set", f"jobs.score.max_concurrency_per_instance={workers}")
        assert advised.returncode == 0, advised.stderr
        step = json.loads(advised.stdout)["steps"]["score"]
        assert step["settings"]["mini_batch_size"] == size
        name = f"run_{size}_{workers}"
        measured = create(tabular_pipeline(folder, size=size, concurrency=workers, **shape),
                          runs, name)
        assert measured.proc.returncode == 0, measured.proc.stderr
        # the prediction is of this machine without other load: against the measured run's
        # wall time less the run-delay other processes caused (the same on a quiet machine)
        again = run_cli("job", "advise", name, "--runs-dir", str(runs), "-o", "json")
        assert again.returncode == 0, again.stderr
        wall = json.loads(again.stdout)["steps"]["score"]["quiet_wall_s"]
        predicted = step["predicted_wall_s"]
        assert step["low_s"] <= predicted <= step["high_s"]
        assert abs(predicted - wall) <= TOLERANCE * wall, (size, workers, predicted, wall)
