"""The failed-items limit the driver enforces is the one job_result.txt shows."""

from __future__ import annotations

from pathlib import Path

from mlpipe.plan import PrsOptions
from mlpipe.runtime.thresholds import Thresholds
from tests.runtime.reports.support import make_step


def test_the_plans_error_threshold_is_the_failed_items_limit(tmp_path: Path) -> None:
    # which of the attribute and --error_threshold applies is the compiler's rule
    # (tests/compiler/test_rules.py): the runtime reads the one value the plan carries
    step = make_step(tmp_path, error_threshold=3, prs=PrsOptions(resource_monitor_interval=0))
    thresholds = Thresholds.of(step)
    assert thresholds.check(0, 3, 10, False) is None
    breach = thresholds.check(0, 4, 10, False)
    assert breach is not None and (breach.name, breach.limit) == ("error_threshold", 3)
