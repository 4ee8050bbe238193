"""The failed-items limit the driver enforces is the one job_result.txt shows."""

from __future__ import annotations

from pathlib import Path

from mlpipe.plan import PrsOptions
from mlpipe.runtime.thresholds import Thresholds, item_error_threshold
from tests.runtime.reports.support import make_step


def test_error_threshold_falls_back_to_the_prs_flag(tmp_path: Path) -> None:
    step = make_step(tmp_path, prs=PrsOptions(resource_monitor_interval=0, error_threshold=3))
    assert item_error_threshold(step) == 3
    thresholds = Thresholds.of(step)
    assert thresholds.check(0, 3, 10, False) is None
    breach = thresholds.check(0, 4, 10, False)
    assert breach is not None and (breach.name, breach.limit) == ("error_threshold", 3)


def test_error_threshold_attribute_wins_over_the_prs_flag(tmp_path: Path) -> None:
    step = make_step(tmp_path, error_threshold=5,
                     prs=PrsOptions(resource_monitor_interval=0, error_threshold=3))
    assert Thresholds.of(step).check(0, 4, 10, False) is None
    assert Thresholds.of(step).check(0, 6, 10, False) is not None
