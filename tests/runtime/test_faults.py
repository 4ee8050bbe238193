"""Faults of the driver side of a parallel step: the listing, the reports, observers, file names.

Each test runs a real step (real worker processes); the fault comes from the input or from
an observer, and the step must end with a clear reason while keeping what finished.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mlpipe.data import DataError
from mlpipe.data.minibatch import MiniBatch
from mlpipe.plan import PrsOptions
from mlpipe.runtime import run_parallel_step
from mlpipe.runtime.records import AttemptRecord
from tests.runtime.support import LOADER, Recorder, file_mini_batches, make_step

ECHO = """
    import os
    def init():
        pass
    def run(mini_batch):
        return [os.path.basename(p) for p in mini_batch]
"""


def _listing_then(batches: list[MiniBatch], error: BaseException) -> Iterator[MiniBatch]:
    yield from batches
    raise error


@pytest.mark.parametrize("listed", [1, 12])
@pytest.mark.parametrize("error", [
    DataError("cannot read folder: Permission denied", file="/data/locked"),
    PermissionError(13, "Permission denied", "/data/locked"),
])
def test_listing_error_keeps_the_finished_rows_and_names_the_cause(
        tmp_path: Path, listed: int, error: BaseException) -> None:
    step = make_step(tmp_path, ECHO)
    batches = file_mini_batches(tmp_path / "d", listed)
    summary = run_parallel_step(step, mini_batches=_listing_then(batches, error), loader=LOADER)
    assert summary.status == "Failed"
    assert "/data/locked" in (summary.reason or "") and "Permission denied" in summary.reason
    rows = Path(summary.append_row_file or "").read_text().splitlines()
    assert rows == [f"f{i:04d}.txt" for i in range(listed)]  # what was listed still ran
    assert summary.mini_batches_succeeded == listed == summary.mini_batches_total
    result = (Path(step.logs_dir) / "job_result.txt").read_text()
    assert result.startswith("Failed: ") and "/data/locked" in result.splitlines()[0]


def test_non_utf8_file_names_reach_every_report(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    names = [os.fsdecode(b"caf\xe9.txt"), "plain.txt"]
    for name in names:
        (folder / name).write_text("x\n")
    batches = [MiniBatch(id=f"mb-{i}", index=i, kind="files", payload=(str(folder / n),), items=1)
               for i, n in enumerate(names)]
    step = make_step(tmp_path, ECHO + """
    def run(mini_batch):
        if "plain" not in mini_batch[0]:
            raise ValueError("bad file " + mini_batch[0])
        return [os.path.basename(p) for p in mini_batch]
    """, max_retries=0)
    summary = run_parallel_step(step, mini_batches=batches, loader=LOADER)
    assert summary.status == "Completed", summary.reason
    logs = Path(step.logs_dir)
    csv = (logs / "sys" / "job_report" / "processed_mini-batches.csv").read_text(encoding="utf-8")
    assert len(csv.splitlines()) == 3  # header + both attempts, valid UTF-8
    escaped = "caf\\udce9.txt"  # the undecodable byte, as an escape
    assert escaped in csv
    assert escaped in (logs / "user" / "error.txt").read_text(encoding="utf-8")
    tracebacks = "".join(path.read_text(encoding="utf-8")
                         for path in (logs / "user" / "error").rglob("*.txt"))
    assert escaped in tracebacks
    assert (logs / "job_result.txt").read_text(encoding="utf-8").startswith("Succeeded")
    assert escaped in (logs / "sys" / "master_role.txt").read_text(encoding="utf-8")
    rows = Path(summary.append_row_file or "").read_bytes()  # data keeps the original bytes
    assert rows.splitlines() == [b"plain.txt"]


class Broken(Recorder):
    """An observer that raises at its third finished attempt."""

    def attempt_finished(self, record: AttemptRecord) -> None:
        super().attempt_finished(record)
        if len(self.attempts) == 3:
            raise OSError(28, "No space left on device", "/runs/job/report.csv")


def test_an_observer_raising_fails_the_step_and_keeps_the_finished_rows(tmp_path: Path) -> None:
    step = make_step(tmp_path, ECHO, workers=1)
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 20),
                                loader=LOADER, observers=[Broken()])
    assert summary.status == "Failed"
    assert "Broken.attempt_finished" in (summary.reason or "")
    assert "/runs/job/report.csv: No space left on device" in summary.reason
    rows = Path(summary.append_row_file or "").read_text().splitlines()
    assert len(rows) == summary.mini_batches_succeeded >= 3
    assert rows == [f"f{i:04d}.txt" for i in range(len(rows))]
    assert (Path(step.logs_dir) / "job_result.txt").read_text().startswith(
        "Failed: Broken.attempt_finished")


@pytest.mark.parametrize("report", ["sys/perf/0/node_resource_usage.csv",
                                    "sys/job_report/processed_mini-batches.csv"])
def test_a_report_on_a_full_disk_fails_the_step_naming_the_file(tmp_path: Path,
                                                                 report: str) -> None:
    """/dev/full behind a report file: every flush fails with ENOSPC, in the driver's thread
    or in the resource monitor's."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    step = make_step(tmp_path, ECHO + """
    import time
    def run(mini_batch):
        time.sleep(0.05)
        return [os.path.basename(p) for p in mini_batch]
    """, workers=1, prs=PrsOptions(resource_monitor_interval=0.05))
    target = Path(step.logs_dir) / report
    target.parent.mkdir(parents=True)
    target.symlink_to("/dev/full")
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 30),
                                loader=LOADER)
    assert summary.status == "Failed"
    assert "No space left on device" in (summary.reason or "")
    assert str(Path(step.logs_dir) / report.split("/")[0]) in summary.reason
    rows = Path(summary.append_row_file or "").read_text().splitlines()
    assert rows == [f"f{i:04d}.txt" for i in range(len(rows))]  # finished ones, in order
    result = (Path(step.logs_dir) / "job_result.txt").read_text()
    assert result.startswith("Failed: StepReports.") and "No space left on device" in result
