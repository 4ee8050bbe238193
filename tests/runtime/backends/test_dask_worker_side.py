"""The Dask backend's worker side in this process, without a cluster: a start that fails at
any point gives the process back as it found it; a worker that does not see the run folder
runs the code it was sent and sends back what it wrote, which the driver's inbox writes."""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from mlpipe.frozen import freeze
from mlpipe.runtime.backends import dask_worker
from mlpipe.runtime.backends.dask_code import pack_code
from mlpipe.runtime.backends.dask_transfer import Inbox, Outbox, TransferError
from mlpipe.runtime.backends.dask_worker import (
    run_tasks,
    slot_files,
    start_worker,
    stop_worker,
    transfer_roots,
)
from mlpipe.runtime.read_only import ReadOnly
from mlpipe.runtime.read_only import support as read_only_support
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.results import RowFormat
from mlpipe.runtime.tasks import Task
from mlpipe.runtime.worker import WorkerConfig
from tests.runtime.support import LOADER, file_mini_batches

WORKER = WorkerInfo(0, "process000")

SCRIPT = """\
import os, sys
from pathlib import Path

def init():
    print("init here", flush=True)
    if os.environ.get("FAIL_INIT"):
        raise RuntimeError("no model")

def run(mini_batch):
    out = Path(os.environ["AZUREML_BI_OUTPUT_PATH"])
    for path in mini_batch:
        (out / (Path(path).name + ".copy")).write_text(Path(path).read_text())
        print("ran", Path(path).name)
        print("careful", file=sys.stderr)
    return [Path(p).name for p in mini_batch]
"""


def _config(tmp_path: Path, **changes: object) -> WorkerConfig:
    code = tmp_path / "run" / "step" / "code"
    code.mkdir(parents=True, exist_ok=True)
    (code / "score.py").write_text(SCRIPT, encoding="utf-8")
    out = tmp_path / "run" / "step" / "outputs" / "rows"
    out.mkdir(parents=True, exist_ok=True)
    config = WorkerConfig(code_dir=str(code), entry_script="score.py",
                          logs_dir=str(tmp_path / "run" / "step" / "logs"), output_dir=str(out),
                          working_root=str(tmp_path / "run" / "step" / ".mlpipe" / "working"),
                          loader=LOADER, output_folders=(str(out),))
    return replace(config, **changes)  # type: ignore[arg-type]


def _process_now() -> tuple[object, ...]:
    """Streams, folder, environment, paths, argv, and the modules of the step's code (those
    of installed packages may stay imported, as in any Dask worker)."""
    return (os.fstat(1).st_ino, os.fstat(2).st_ino, os.getcwd(), dict(os.environ),
            list(sys.path), list(sys.argv), "score" in sys.modules)


@pytest.mark.parametrize("how", ["missing code folder", "init() raises", "unwritable logs"])
def test_a_start_that_fails_gives_the_process_back_as_found(tmp_path: Path, how: str) -> None:
    config = _config(tmp_path)
    stage = "start"
    if how == "missing code folder":
        config = replace(config, code_dir=str(tmp_path / "nowhere"))
    elif how == "init() raises":
        config = replace(config, environment_variables=freeze({"FAIL_INIT": "1"}))
        stage = "init"
    else:
        blocker = tmp_path / "blocked"
        blocker.write_text("a file where the logs folder should be")
        config = replace(config, logs_dir=str(blocker))
    before = _process_now()
    files = slot_files(config, WORKER, "t")
    answer = start_worker("k", config, WORKER, files, "run1")
    assert _process_now() == before
    assert answer[0] == "init_failed" and answer[3] == stage, answer
    assert ("init() failed" not in answer[1]) or stage == "init"
    assert not dask_worker._HOSTED


def test_a_worker_that_does_not_see_the_run_folder_sends_back_what_it_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    with capsys.disabled():  # the real streams, as in a Dask worker: the worker redirects them
        _remote_worker_round_trip(tmp_path, monkeypatch)


def _remote_worker_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(tmp_path)
    digest, archive = pack_code(config.code_dir)
    assert pack_code(config.code_dir) == (digest, archive)  # the same code, the same bytes
    machine = tmp_path / "other-machine"
    machine.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(machine))
    inbox = Inbox(transfer_roots(config))
    before = _process_now()

    assert start_worker("k", config, WORKER, None, "run1", digest) == ("no_code", digest)
    answer = start_worker("k", config, WORKER, None, "run1", digest, archive)
    assert answer[0] == "ready", answer
    inbox.receive("k#1", answer[2])
    tasks = [Task(n, mini_batch, 1) for n, mini_batch
             in enumerate(file_mini_batches(tmp_path / "data", 3))]
    dask_worker.SHIP_SECONDS = 0.0  # ship after every bundle here
    try:
        results, shipment = run_tasks("k", tasks)  # type: ignore[misc]
    finally:
        dask_worker.SHIP_SECONDS = 0.2
    assert [r.status for r in results] == ["Succeeded"] * 3
    inbox.receive("k#1", shipment)
    error, ended, shipment, more = stop_worker("k")  # type: ignore[misc]
    assert error is None and ended == [] and not more
    inbox.receive("k#1", shipment)
    inbox.close("k#1")

    assert _process_now() == before
    outputs = Path(config.output_dir)
    assert sorted(p.name for p in outputs.iterdir()) == [
        "f0000.txt.copy", "f0001.txt.copy", "f0002.txt.copy"]
    logs = Path(config.logs_dir) / "user"
    assert (logs / "stdout" / "0" / "process000.stdout.txt").read_text() == \
        "init here\nran f0000.txt\nran f0001.txt\nran f0002.txt\n"
    assert (logs / "stderr" / "0" / "process000.stderr.txt").read_text() == "careful\n" * 3
    assert not (Path(config.code_dir).parent / ".mlpipe").exists()  # nothing of it on the driver
    assert not list((machine / "mlpipe-work").iterdir())  # its scratch folder is gone
    assert [p.name for p in (machine / "mlpipe-code").iterdir()] == [digest]  # the code stays


def test_outbox_appends_what_grew_resends_what_changed_and_stays_within_its_limit(
        tmp_path: Path) -> None:
    worker_logs, worker_out = tmp_path / "w" / "logs", tmp_path / "w" / "out"
    driver_logs, driver_out = tmp_path / "d" / "logs", tmp_path / "d" / "out"
    for folder in (worker_logs, worker_out, driver_logs, driver_out):
        folder.mkdir(parents=True)
    (driver_logs / "log.txt").write_text("from the worker before\n")  # a replacement appends
    outbox = Outbox({"logs": str(worker_logs), "out0": str(worker_out)}, limit=1000)
    inbox = Inbox({"logs": str(driver_logs), "out0": str(driver_out)})

    def ship() -> None:
        while (shipment := outbox.collect()) is not None:
            inbox.receive("w", shipment)

    (worker_logs / "log.txt").write_text("one\n")
    (worker_out / "model.bin").write_bytes(b"a" * 2500)  # more than one shipment's limit
    first = outbox.collect()
    assert first is not None and first.more and sum(len(p.data) for p in first.pieces) <= 1000
    inbox.receive("w", first)
    assert not (driver_out / "model.bin").exists()  # half a file never replaces a whole one
    ship()
    assert (driver_out / "model.bin").read_bytes() == b"a" * 2500
    with open(worker_logs / "log.txt", "a") as log:
        log.write("two\n")
    (worker_out / "model.bin").write_bytes(b"b" * 10)  # rewritten: sent again, whole
    ship()
    assert (driver_logs / "log.txt").read_text() == "from the worker before\none\ntwo\n"
    assert (driver_out / "model.bin").read_bytes() == b"b" * 10
    assert outbox.collect() is None  # nothing new
    assert not list(driver_out.glob("*.mlpipe-part-*"))


def test_inbox_refuses_a_path_that_leaves_its_folder(tmp_path: Path) -> None:
    from mlpipe.runtime.backends.dask_transfer import Piece, Shipment

    inbox = Inbox({"logs": str(tmp_path / "logs")})
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "link").symlink_to(tmp_path)
    for path in ("../escape.txt", "/etc/passwd", "link/escape.txt"):
        with pytest.raises(TransferError):
            inbox.receive(path, Shipment(1, (Piece("logs", path, "append", 0, b"x"),)))
    assert not (tmp_path / "escape.txt").exists()


WRITER = """\
import errno, os
from pathlib import Path

def init():
    if os.environ.get("FAIL_INIT"):
        raise RuntimeError("no model")

def run(mini_batch):
    rows = []
    for path in mini_batch:
        try:
            with open(path, "a") as changed:
                changed.write("changed\\n")
            verdict = "written"
        except OSError as error:
            verdict = errno.errorcode[error.errno]
        rows.append(f"{Path(path).name} {verdict} {os.getpid()}")
    return rows
"""


@pytest.mark.skipif(read_only_support() is not None, reason="no read-only views here")
@pytest.mark.parametrize("sees_run_folder", [True, False], ids=["shared", "another-machine"])
def test_read_only_inputs_run_the_step_in_a_process_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sees_run_folder: bool) -> None:
    """A step with a read-only input runs init() and run() in a child process of the Dask
    worker that sees the input read-only (the OS refuses the write); the Dask worker's
    process is given back as found, and no process of the step is left, init() failing or
    not."""
    import psutil

    mini_batches = file_mini_batches(tmp_path / "data", 2)
    config = _config(tmp_path, read_only=ReadOnly((str(tmp_path / "data"),)),
                     row_format=RowFormat())
    (Path(config.code_dir) / "score.py").write_text(WRITER, encoding="utf-8")
    machine = tmp_path / "other-machine"
    machine.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(machine))
    digest, archive = pack_code(config.code_dir)
    files = slot_files(config, WORKER, "t") if sees_run_folder else None
    before = _process_now()
    children = {child.pid for child in psutil.Process().children()}  # a test cluster's, Azurite

    def left() -> set[int]:
        return {child.pid for child in psutil.Process().children()} - children

    failing = replace(config, environment_variables=freeze({"FAIL_INIT": "1"}))
    answer = start_worker("k", failing, WORKER, files, "run1", digest, archive)
    assert answer[0] == "init_failed" and answer[3] == "init" and "no model" in answer[1]
    assert _process_now() == before
    assert left() == set()

    answer = start_worker("k", config, WORKER, files, "run1", digest, archive)
    assert answer[0] == "ready", answer
    results, _ = run_tasks("k", [Task(n, mb, 1) for n, mb in enumerate(mini_batches)])  # type: ignore[misc]
    assert stop_worker("k")[0] is None  # type: ignore[index]
    rows = [row.split() for result in results for row in (result.rows or "").splitlines()]
    assert [(name, verdict) for name, verdict, _ in rows] == [
        ("f0000.txt", "EROFS"), ("f0001.txt", "EROFS")]
    assert {int(pid) for *_, pid in rows} != {os.getpid()}  # not in the Dask worker's process
    assert _process_now() == before
    assert left() == set()
    assert {p.read_text() for p in (tmp_path / "data").iterdir()} == {"0\n", "1\n"}
