"""The one error handler around every command: each error says its own message and exit
code, one wording per error (a job not found names the closest jobs everywhere), and an
unexpected exception is one line naming the log file that holds its traceback, exit 3."""

from __future__ import annotations

import argparse
import ast
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import mlpipe.cli.jobs
from mlpipe.cli import main
from mlpipe.errors import MlpipeError, UsageError

# Every command that takes a job's name, as arguments after ``mlpipe job`` (J: the name).
BY_NAME = {
    "show": ["show", "J"],
    "show --mini-batches": ["show", "J", "--mini-batches"],
    "list --parent-job-name": ["list", "--parent-job-name", "J"],
    "stream": ["stream", "J"],
    "cancel": ["cancel", "J"],
    "rerun": ["rerun", "J"],
    "download": ["download", "J"],
    "debug": ["debug", "J", "--step", "s", "--mini-batch", "m"],
    "advise": ["advise", "J"],
    "report": ["report", "J"],
}


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    for name in ("word-count", "word-count-2", "other"):
        (runs / name).mkdir(parents=True)
        (runs / name / "job.json").write_text(json.dumps(
            {"name": name, "status": "completed", "steps": {}}))
    return runs


@pytest.mark.parametrize("command", sorted(BY_NAME))
def test_a_job_not_found_has_one_wording_with_did_you_mean(
        runs: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    argv = ["job", *[("word-cont" if arg == "J" else arg) for arg in BY_NAME[command]],
            "--runs-dir", str(runs)]
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert err == (f"mlpipe: no job named 'word-cont' in {runs}; did you mean 'word-count', "
                   "'word-count-2'?\n"), err
    assert not (runs / "word-cont").exists()  # nothing made for a job that is not there


def test_a_job_not_found_in_an_empty_runs_folder_says_where_it_looked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["job", "show", "j1", "--runs-dir", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        f"mlpipe: no job named 'j1' in {tmp_path} (no jobs there at all: is --runs-dir or "
        "$MLPIPE_RUNS_DIR right?)\n")


def test_the_sdk_says_a_missing_job_in_the_same_words(runs: Path) -> None:
    from mlpipe import MLClient

    client = MLClient(runs_dir=runs)
    with pytest.raises(LookupError) as raised:
        client.jobs.get("word-cont")
    assert str(raised.value) == (f"no job named 'word-cont' in {runs}; did you mean "
                                 "'word-count', 'word-count-2'?")


def _raising(error: BaseException):  # type: ignore[no-untyped-def]
    def handler(args: argparse.Namespace) -> int:
        raise error
    return handler


def test_an_unexpected_error_is_one_line_naming_its_log_exit_3(
        runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLPIPE_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setattr(mlpipe.cli.jobs, "list_jobs", _raising(KeyError("steps")))
    assert main(["job", "list", "--runs-dir", str(runs)]) == 3
    err = capsys.readouterr().err
    (log,) = (tmp_path / "logs").glob("mlpipe-error-*.log")
    assert err == (f"mlpipe: unexpected error: KeyError: 'steps' (a defect of mlpipe; its "
                   f"traceback is in {log}; please report it)\n")
    text = log.read_text()
    assert "Traceback (most recent call last):" in text and "KeyError: 'steps'" in text
    assert f"command: mlpipe job list --runs-dir {runs}" in text


def test_an_unexpected_error_whose_log_cannot_be_written_still_says_one_line(
        runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("MLPIPE_LOG_DIR", str(blocker / "logs"))  # below a file: unwritable
    monkeypatch.setenv("TMPDIR", str(blocker / "tmp"))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR is read again
    monkeypatch.setattr(mlpipe.cli.jobs, "list_jobs", _raising(TypeError("bad\nsecond line")))
    assert main(["job", "list", "--runs-dir", str(runs)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mlpipe: unexpected error: TypeError: bad (")


@pytest.mark.parametrize(("error", "code", "said"), [
    (UsageError("--step 'x' is no step"), 2, "mlpipe: error: --step 'x' is no step\n"),
    (MlpipeError("job j1 is being run"), 1, "mlpipe: job j1 is being run\n"),
    (PermissionError(13, "Permission denied", "/runs/j1/job.json"), 1,
     "mlpipe: /runs/j1/job.json: Permission denied [EACCES]\n"),
    (KeyboardInterrupt(), 130, "mlpipe: interrupted\n"),
])
def test_each_error_carries_its_exit_code_and_message(
        runs: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        error: BaseException, code: int, said: str) -> None:
    monkeypatch.setattr(mlpipe.cli.jobs, "list_jobs", _raising(error))
    assert main(["job", "list", "--runs-dir", str(runs)]) == code
    assert capsys.readouterr().err == said


def _handlers(tree: ast.Module) -> set[int]:
    """The ids of the ``except`` clauses inside a command handler (``(args: Namespace) -> int``)."""
    found = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.FunctionDef) and ast.unparse(node.returns or ast.Pass()) == "int"
                and any(ast.unparse(arg.annotation or ast.Pass()).endswith("Namespace")
                        for arg in node.args.args)):
            found |= {id(inner) for inner in ast.walk(node) if isinstance(inner, ast.ExceptHandler)}
    return found


def _offences(clause: ast.ExceptHandler, in_handler: bool) -> Iterator[int]:
    for inner in ast.walk(clause):
        called = ast.unparse(inner.func) if isinstance(inner, ast.Call) else ""
        prints = called == "print" or called.endswith(("stderr.write", "stdout.write"))
        exits = called in ("sys.exit", "exit", "os._exit") or (
            isinstance(inner, ast.Raise) and inner.exc is not None
            and ast.unparse(inner.exc).startswith("SystemExit"))
        returns_code = isinstance(inner, ast.Return) and (
            in_handler or (isinstance(inner.value, ast.Constant)
                           and type(inner.value.value) is int))
        if prints or exits or returns_code:
            yield inner.lineno


def test_handlers_never_print_errors_or_pick_exit_codes() -> None:
    """No ``except`` in a command module prints, exits or returns a code (any return from
    an ``except`` of a command handler picks its exit code): they raise, and
    mlpipe/cli/error_handler.py alone says errors (``job list``'s skipped records are a
    warning, said by the command that lists the others)."""
    cli = Path(mlpipe.cli.jobs.__file__).parent
    offenders = []
    for module in sorted(cli.glob("*.py")):
        if module.name == "error_handler.py":
            continue
        tree = ast.parse(module.read_text())
        handlers = _handlers(tree)
        offenders += [f"{module.name}:{line}" for node in ast.walk(tree)
                      if isinstance(node, ast.ExceptHandler)
                      for line in _offences(node, id(node) in handlers)]
    assert offenders == []
