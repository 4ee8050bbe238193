"""The driver tells observers of attempts in batches: the same records, in the same order, as
one by one, each failed attempt on its own; the CSV holds them all across a cancel and resume."""

from __future__ import annotations

import csv
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from mlpipe.frozen import freeze
from mlpipe.runtime import run_parallel_step
from mlpipe.runtime.records import AttemptRecord, StepObserver, takes_batches
from mlpipe.runtime.reports.observer import StepReports
from tests.runtime.support import LOADER, Recorder, file_mini_batches, make_step

SCRIPT = """
    import os

    def run(mini_batch):
        name = os.path.basename(mini_batch[0])
        number = int(name[1:5])
        mark = os.path.join(os.environ["MARKS"], name)
        first = not os.path.exists(mark)
        open(mark, "a").close()
        if number % 7 == 3 and first:
            raise ValueError(f'bad, "{name}"')  # fails once, the retry succeeds
        if number % 11 == 5:
            died = os.path.join(os.environ["MARKS"], "died")
            if os.environ.get("DIE") and not os.path.exists(died):
                open(died, "a").close()
                os._exit(3)  # a ProcessDied attempt, retried on the worker's replacement
            raise ValueError("fails for good")
        return [name]
"""
COUNT = 60


class BatchRecorder(StepObserver):
    """Keeps the batches the driver hands over, and cancels the step after ``cancel_after``
    attempts (when given)."""

    def __init__(self, cancel: threading.Event | None = None, cancel_after: int = 0) -> None:
        self.batches: list[list[AttemptRecord]] = []
        self.cancel, self.cancel_after = cancel, cancel_after

    def attempts_finished(self, records: Sequence[AttemptRecord]) -> None:
        self.batches.append(list(records))
        if self.cancel is not None and sum(map(len, self.batches)) >= self.cancel_after:
            self.cancel.set()

    def attempts(self) -> list[AttemptRecord]:
        return [record for batch in self.batches for record in batch]


@pytest.mark.slow  # two runs of a step with a worker death: seconds under load
def test_batches_hold_every_attempt_in_order_across_a_cancel_and_resume(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    step = make_step(tmp_path, SCRIPT, max_retries=1,
                     environment_variables=freeze({"MARKS": str(marks)}))
    batches = file_mini_batches(tmp_path / "data", COUNT)
    seen: list[AttemptRecord] = []
    for resume in (False, True):  # the resumed run has its worker die once
        cancel = threading.Event()
        one, many = Recorder(), BatchRecorder(cancel, COUNT // 2) if not resume \
            else BatchRecorder()
        run = step if not resume else replace(step, environment_variables=freeze(
            {"MARKS": str(marks), "DIE": "1"}))
        summary = run_parallel_step(run, mini_batches=batches, loader=LOADER, resume=resume,
                                    observers=[one, many], cancel=cancel)
        assert summary.status == ("Canceled" if not resume else "Completed"), summary.reason
        assert many.attempts() == one.attempts and one.attempts
        assert all(len(batch) == 1 for batch in many.batches
                   if any(record.status != "Succeeded" for record in batch))
        assert [r.status for r in one.attempts].count("ProcessDied") == int(resume)
        seen += one.attempts

    csv_path = Path(step.logs_dir) / "sys" / "job_report" / "processed_mini-batches.csv"
    with csv_path.open(newline="") as handle:
        rows = list(csv.reader(handle))[1:]
    assert [(row[0], int(row[1]), row[10]) for row in rows] == \
        [(r.mini_batch_id, r.picked_count, r.status) for r in seen]
    failing = {f"f{n:04d}.txt" for n in range(COUNT) if n % 11 == 5}
    out = Path(step.outputs["out"].path) / "parallel_run_step.txt"
    assert sorted(out.read_text().splitlines()) == \
        sorted({f"f{n:04d}.txt" for n in range(COUNT)} - failing)


class OneByOne(StepReports):
    """A report that adds to attempt_finished alone."""

    def attempt_finished(self, record: AttemptRecord) -> None:
        super().attempt_finished(record)


def test_what_redefines_attempt_finished_alone_is_told_one_attempt_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    step = make_step(tmp_path, SCRIPT)
    reports, one_by_one = StepReports(step), OneByOne(step)
    try:
        assert takes_batches(reports) and takes_batches(BatchRecorder())
        assert not takes_batches(Recorder()) and not takes_batches(one_by_one)
        monkeypatch.setattr(reports, "attempt_finished", lambda record: None)
        assert not takes_batches(reports)
        monkeypatch.undo()
        assert takes_batches(reports)
        monkeypatch.setattr(StepReports, "attempt_finished", lambda self, record: None)
        assert not takes_batches(reports)
    finally:
        reports.close()
        one_by_one.close()
