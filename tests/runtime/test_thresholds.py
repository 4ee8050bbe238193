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


ROW_COUNT = "def run(mini_batch):\n    return [str(len(mini_batch))]\n"


def _unparsable_table(folder: Path, files: int, rows: int) -> Path:
    """``files`` CSV files of ``rows`` rows each; every file has one row with a field too many
    (the reader cannot parse it)."""
    folder.mkdir(parents=True)
    for number in range(files):
        lines = [f"{number}-{row},{row}" for row in range(rows - 1)] + ["x,1,extra"]
        (folder / f"p{number}.csv").write_text("name,row\n" + "\n".join(lines) + "\n")
    (folder / "MLTable").write_text("paths:\n  - pattern: ./*.csv\ntransformations:\n"
                                    "  - read_delimited:\n      delimiter: ','\n")
    return folder


def test_a_mini_batch_whose_data_cannot_be_parsed_fails_its_items(tmp_path: Path) -> None:
    """v1's error_threshold counts items: an unreadable tabular mini-batch holds its rows."""
    from mlpipe.frozen import freeze
    from mlpipe.plan import PlanInput
    from mlpipe.runtime import run_parallel_step
    from mlpipe.sizes import parse_mini_batch_size
    from tests.runtime.support import make_step as runtime_step

    table = _unparsable_table(tmp_path / "table", files=4, rows=10)
    step = runtime_step(tmp_path, ROW_COUNT, max_retries=0, error_threshold=15,
                        inputs=freeze({"t": PlanInput("t", "mltable", path=str(table))}),
                        input_data="t", mini_batch_size=parse_mini_batch_size("1kb"), workers=1)
    summary = run_parallel_step(step)
    assert summary.status == "Failed" and summary.breach is not None
    assert summary.breach.name == "error_threshold"
    assert summary.items_failed >= 20 and summary.items_failed % 10 == 0  # whole files failed
    result = (Path(step.logs_dir) / "job_result.txt").read_text()
    assert "items failed, more than error_threshold = 15" in result


def test_a_tabular_mini_batch_whose_worker_died_fails_its_rows(tmp_path: Path) -> None:
    from mlpipe.frozen import freeze
    from mlpipe.plan import PlanInput
    from mlpipe.runtime import run_parallel_step
    from mlpipe.sizes import parse_mini_batch_size
    from tests.runtime.support import make_step as runtime_step

    table = tmp_path / "table"
    table.mkdir()
    (table / "t.csv").write_text("name,row\n" + "".join(f"n{row},{row}\n" for row in range(7)))
    (table / "MLTable").write_text("paths:\n  - file: ./t.csv\ntransformations:\n"
                                   "  - read_delimited:\n      delimiter: ','\n")
    dies = "import os\ndef run(mini_batch):\n    os._exit(3)\n"
    step = runtime_step(tmp_path, dies, max_retries=0,
                        inputs=freeze({"t": PlanInput("t", "mltable", path=str(table))}),
                        input_data="t", mini_batch_size=parse_mini_batch_size("1mb"), workers=1)
    summary = run_parallel_step(step)
    assert (summary.mini_batches_failed, summary.items_failed) == (1, 7)
