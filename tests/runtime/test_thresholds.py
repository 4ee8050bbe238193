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


def test_a_stopped_tabular_step_does_not_state_the_items_it_never_read(tmp_path: Path) -> None:
    """The records of a text table are counted by the worker that parses them: a step stopped
    early gives its mini-batches' total (the counting pass's) and says the items of those
    not processed are not known, instead of a total of the items it happened to read."""
    from mlpipe.frozen import freeze
    from mlpipe.plan import PlanInput
    from mlpipe.runtime import run_parallel_step
    from mlpipe.sizes import parse_mini_batch_size
    from tests.runtime.support import make_step as runtime_step

    table = _unparsable_table(tmp_path / "table", files=6, rows=10)
    step = runtime_step(tmp_path, ROW_COUNT, max_retries=0, mini_batch_error_threshold=0,
                        inputs=freeze({"t": PlanInput("t", "mltable", path=str(table))}),
                        input_data="t", mini_batch_size=parse_mini_batch_size("1kb"), workers=1)
    summary = run_parallel_step(step)
    assert summary.status == "Failed" and summary.mini_batches_total == 6
    assert not summary.items_known and summary.items_not_processed is None
    result = (Path(step.logs_dir) / "job_result.txt").read_text().splitlines()
    assert (f"Mini-batches: 6 total, 0 succeeded, {summary.mini_batches_failed} failed, "
            f"{summary.mini_batches_not_processed} not processed") in result
    assert (f"Items: {summary.items_total} in the mini-batches that ended, 0 succeeded, "
            f"{summary.items_failed} failed; the items of the "
            f"{summary.mini_batches_not_processed} mini-batches not processed are not known "
            "without reading them") in result


def test_the_counting_pass_counts_items_where_they_are_known_unread(tmp_path: Path) -> None:
    import pandas as pd

    from mlpipe.data.batches import InputCount, count_input
    from mlpipe.frozen import freeze
    from mlpipe.plan import PlanInput
    from mlpipe.sizes import parse_mini_batch_size
    from tests.runtime.support import make_step as runtime_step

    files = tmp_path / "files"
    files.mkdir()
    for number in range(25):
        (files / f"f{number}.txt").write_text("x")
    parquet = tmp_path / "parquet"
    parquet.mkdir()
    pd.DataFrame({"a": range(1000)}).to_parquet(parquet / "t.parquet", row_group_size=100)
    (parquet / "MLTable").write_text("paths:\n  - file: ./t.parquet\ntransformations:\n"
                                     "  - read_parquet\n")
    text = _unparsable_table(tmp_path / "text", files=3, rows=10)

    def step(name: str, path: Path, kind: str, size: str):  # type: ignore[no-untyped-def]
        return runtime_step(tmp_path / name, ROW_COUNT, input_data="d",
                            inputs=freeze({"d": PlanInput("d", kind, path=str(path))}),
                            mini_batch_size=parse_mini_batch_size(size))

    assert count_input(step("a", files, "uri_folder", "4")) == InputCount(7, 25)
    counted = count_input(step("b", parquet, "mltable", "1kb"))
    assert counted.items == 1000 and counted.mini_batches > 1
    assert count_input(step("c", text, "mltable", "1kb")).items is None  # records: parsed
