"""StepReports takes the driver's batches of attempts: whatever the batches, the files and
figures are those of the attempts told one by one, and each CSV row is csv.writer's."""

from __future__ import annotations

import csv
import io
import json
import random
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from mlpipe.runtime.records import AttemptRecord, WorkerInfo
from mlpipe.runtime.reports.job_report import detail_text, processed_row, utc_text
from mlpipe.runtime.reports.observer import StepReports
from mlpipe.runtime.reports.timeline import KEPT

from .support import T0, W0, W1, attempt, make_step, summary

W1_REPLACED = WorkerInfo(W1.node, W1.process, (W1.pid or 0) + 1)
MESSAGE = 'bad, "quoted"\nsecond line'


def _attempts(count: int) -> list[AttemptRecord]:
    """Attempts of every kind: retried and final failures, timeouts, odd ids and messages,
    three worker processes (one a replacement), starts out of order."""
    rng = random.Random(7)
    records = []
    for mb in range(count):
        worker = (W0, W1, W1_REPLACED)[mb % 3]
        kind = rng.random()
        if kind < 0.1:
            record = attempt(mb, worker=worker, status="Failed", final=False,
                             category="UserError", message=MESSAGE)
        elif kind < 0.13:
            record = attempt(mb, worker=worker, status="Timeout", category="Timeout",
                             message="run() took too long")
        elif kind < 0.16:
            record = attempt(mb, worker=worker, total=3, succeeded=1, status="Failed",
                             category="ReturnValue", message="fewer results")
        else:
            record = attempt(mb, worker=worker, elapsed=rng.uniform(1e-5, 2.0))
        records.append(record._replace(
            mini_batch_id=f'mb,{mb} "é"' if mb % 50 == 0 else record.mini_batch_id,
            start_time=T0 + timedelta(seconds=rng.uniform(-5, mb * 0.01 + 5)),
            size_bytes=mb))
    return records


def _report(tmp_path: Path, records: list[AttemptRecord], batches: list[int] | None
            ) -> tuple[StepReports, dict[str, bytes]]:
    step = make_step(tmp_path)
    reports = StepReports(step)
    reports.step_started(step, [W0, W1], T0)
    if batches is None:
        for record in records:
            reports.attempt_finished(record)
    else:
        at = 0
        for size in batches:
            reports.attempts_finished(records[at:at + size])
            at += size
        assert at == len(records)
    reports.step_finished(summary())
    logs = Path(step.logs_dir)
    files = {str(path.relative_to(logs)): path.read_bytes() for path in logs.rglob("*")
             if path.is_file() and path.suffix in (".csv", ".txt") and "overview" not in path.name
             and "master_role" not in path.name and "job_result" not in path.name}
    return reports, files


def test_batches_of_attempts_give_the_files_and_figures_of_one_by_one(tmp_path: Path) -> None:
    records = _attempts(3 * KEPT)  # the timeline's grid starts inside a batch
    rng = random.Random(11)
    sizes: list[int] = []
    while sum(sizes) < len(records):
        sizes.append(min(rng.choice((1, 2, 7, 64, 300)), len(records) - sum(sizes)))
    one, one_files = _report(tmp_path / "one", records, None)
    many, many_files = _report(tmp_path / "many", records, sizes)

    assert many_files == one_files
    rows = list(csv.reader(io.StringIO(one_files["sys/job_report/processed_mini-batches.csv"]
                                       .decode())))
    assert len(rows) == len(records) + 1 and rows[1][0] == 'mb,0 "é"'
    assert any(MESSAGE in row for row in rows)
    assert many.tally.attempt_sums() == one.tally.attempt_sums()  # not the driver's timing
    assert replace(many.counters, started=0) == replace(one.counters, started=0)
    assert many.workers.by_process == one.workers.by_process
    timeline_one, timeline_many = one.timeline, many.timeline
    assert (timeline_many.count, timeline_many.first, timeline_many.last) == \
        (timeline_one.count, timeline_one.first, timeline_one.last)
    assert timeline_many.totals == timeline_one.totals
    for process in timeline_one.totals:
        assert timeline_many.busy(process, 50) == timeline_one.busy(process, 50)
        assert timeline_many.started(process, 50) == timeline_one.started(process, 50)


_text = st.text(max_size=30)


@given(mini_batch_id=_text, category=st.none() | _text, message=st.none() | _text,
       process=_text, files=st.lists(_text, max_size=3), total=st.integers(0, 10**6),
       elapsed=st.floats(0, 1e6))
def test_a_processed_row_is_what_csv_writer_writes(mini_batch_id: str, category: str | None,
                                                   message: str | None, process: str,
                                                   files: list[str], total: int,
                                                   elapsed: float) -> None:
    base = attempt(3)._replace(mini_batch_id=mini_batch_id, error_category=category,
                               error_message=message, detail={"files": files}, total=total,
                               elapsed_seconds=elapsed)
    for record in (base, base._replace(detail={})):  # {}: a mini-batch without detail
        expected = io.StringIO()
        csv.writer(expected).writerow((
            record.mini_batch_id, record.picked_count, process, utc_text(record.start_time),
            record.total, record.succeeded, record.failed, f"{record.elapsed_seconds:.6f}",
            f"{record.process_seconds:.6f}", f"{record.run_method_seconds:.6f}", record.status,
            record.error_category or "", record.error_message or "",
            json.dumps(dict(record.detail), sort_keys=True, ensure_ascii=False)))
        assert processed_row(record, process) == expected.getvalue()
        epoch = record.start_time.timestamp()
        assert processed_row(record, process, epoch) == expected.getvalue()


@given(files=st.lists(st.one_of(_text, st.integers(), st.none(), st.floats(allow_nan=False)),
                      max_size=4),
       other=st.none() | st.dictionaries(_text, _text, max_size=2))
def test_the_detail_column_is_the_json_encoders_text(files: list[object],
                                                     other: dict[str, str] | None) -> None:
    """The hand-joined text of a files mini-batch's detail is json's (sorted keys, non-ASCII
    kept), whatever the files hold; other details go through the encoder."""
    for detail in ({"files": files}, {"files": tuple(files)}, {**(other or {}), "files": files}):
        expected = json.dumps(detail, sort_keys=True, ensure_ascii=False, default=str)
        assert detail_text(detail) == expected
