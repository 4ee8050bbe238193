"""processed_mini-batches.csv read a piece at a time (step_logs.read_attempts) gives the same
attempts as the csv module reads, whatever falls on a piece's edge: a traceback's newlines
inside a quoted value, a torn row, a number that is not one, an id that is not ASCII. The
files of each mini-batch (the widest column) are read again only for the rows asked for, and
nothing of it imports pandas."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from mlpipe.runtime import step_logs
from mlpipe.runtime.step_logs import PROCESSED_COLUMNS, StepLogs, read_attempts

TRACEBACK = 'Traceback (most recent call last):\n  File "score.py", line 3\nValueError: "bad"'


def write_csv(logs: StepLogs, rows: list[list[str]], tail: str = "") -> None:
    logs.processed.parent.mkdir(parents=True, exist_ok=True)
    with open(logs.processed, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(PROCESSED_COLUMNS)
        writer.writerows(rows)
        handle.write(tail)


def row(n: int, *, failed: bool = False, identifier: str | None = None) -> list[str]:
    return [identifier or f"{n:020x}", "1", f"0/process00{n % 2}",
            f"2026-11-28T04:42:{n % 60:02d}.{n:06d}", "1", "0" if failed else "1",
            "1" if failed else "0", f"{n / 1000:.6f}", "0.000010", "0.000001",
            "Failed" if failed else "Succeeded", "UserError" if failed else "",
            TRACEBACK if failed else "", f'{{"files": ["/data/f{n:07d}.dat"]}}']


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(step_logs, "READ_BLOCK_BYTES", 512)  # a few rows a piece


def test_pieces_read_every_row_as_the_csv_module_does(tmp_path: Path, small_pieces: None) -> None:
    logs = StepLogs.of(tmp_path / "logs")
    rows = [row(n, failed=n % 7 == 3) for n in range(300)]
    write_csv(logs, rows)
    attempts = read_attempts(logs)
    assert len(attempts) == 300
    got = attempts.rows()
    assert [a.mini_batch_id for a in got] == [r[0] for r in rows]
    assert [a.message for a in got] == [r[12] for r in rows]  # newlines inside quotes kept
    assert [a.detail for a in got] == [r[13] for r in rows]
    assert [a.status for a in got] == [r[10] for r in rows]
    assert attempts.processes == ("0/process000", "0/process001")
    assert int(attempts.ok.sum()) == sum(r[10] == "Succeeded" for r in rows)
    assert list(attempts.mini_batch_id[:2].astype(str)) == [rows[0][0], rows[1][0]]


def test_a_torn_row_and_a_bad_number_are_skipped(tmp_path: Path, small_pieces: None) -> None:
    logs = StepLogs.of(tmp_path / "logs")
    bad = row(5)
    bad[7] = "soon"  # Elapsed Seconds that is no number
    write_csv(logs, [row(n) for n in range(5)] + [bad] + [row(n) for n in range(6, 40)],
              tail='0000ffff,1,0/process000,2026-11-28T04:4')  # a killed run's last row
    attempts = read_attempts(logs)
    ids = [a.mini_batch_id for a in attempts.rows()]
    assert ids == [f"{n:020x}" for n in range(40) if n != 5]
    assert [a.detail for a in attempts.take([3, 4, 5]).rows()] == [
        row(n)[13] for n in (3, 4, 6)]  # the detail of the rows kept, not of their places


def test_ids_that_are_not_ascii_stay_text(tmp_path: Path) -> None:
    logs = StepLogs.of(tmp_path / "logs")
    write_csv(logs, [row(0, identifier="caf\u00e9"), row(1)])
    assert [a.mini_batch_id for a in read_attempts(logs).rows()] == ["caf\u00e9", f"{1:020x}"]


def test_reading_and_the_report_do_not_import_pandas(tmp_path: Path) -> None:
    logs = StepLogs.of(tmp_path / "logs")
    write_csv(logs, [row(n, failed=n == 2) for n in range(50)])
    probe = ("import sys; sys.modules['pandas'] = None\n"
             "from mlpipe.runtime.step_logs import StepLogs, read_attempts\n"
             "from mlpipe.runtime.reports.charts import slowest\n"
             f"a = read_attempts(StepLogs.of({str(tmp_path / 'logs')!r}))\n"
             "print(len(a), slowest(a, 3)[0].detail, a.take(~a.ok).rows()[0].message[:9])\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["50", '{"files":', '["/data/f0000049.dat"]}', "Traceback"]
