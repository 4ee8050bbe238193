"""Broken user code through ``mlpipe job create``: the step fails (exit 1) with the user's
own frames and message, never mlpipe's internals; an empty input succeeds with a note."""

from __future__ import annotations

import re
import time
from pathlib import Path

import psutil
import pytest

from tests.cli.support import project
from tests.conftest import run_cli


def create(tmp_path: Path, source: Path):
    return run_cli("job", "create", "--file", str(source), "--runs-dir", str(tmp_path / "runs"),
                   "--no-progress")


def test_syntax_error_shows_the_users_line_not_mlpipes_frames(tmp_path: Path) -> None:
    proc = create(tmp_path, project(tmp_path, "broken.py", "def init(:\n    pass\n"))
    assert proc.returncode == 1
    out = proc.stdout
    assert "step p failed: No worker could start: cannot load the entry script broken.py: " \
           "SyntaxError: invalid syntax (broken.py, line 1)" in out
    assert f'{tmp_path / "src" / "broken.py"}", line 1' in out and "def init(:" in out
    assert "/p/code/broken.py" not in out  # the user's file, not the run's snapshot of it
    assert "mlpipe/runtime" not in out and "<frozen" not in out


def test_import_error_names_the_missing_module(tmp_path: Path) -> None:
    script = "import no_such_module_for_mlpipe\n\ndef run(mini_batch):\n    return mini_batch\n"
    proc = create(tmp_path, project(tmp_path, "needs.py", script))
    assert proc.returncode == 1
    assert "cannot load the entry script needs.py: ModuleNotFoundError: No module named " \
           "'no_such_module_for_mlpipe'" in proc.stdout
    assert "needs.py\", line 1, in <module>" in proc.stdout and "mlpipe/runtime" not in proc.stdout


def test_missing_run_is_a_load_failure_not_an_init_failure(tmp_path: Path) -> None:
    proc = create(tmp_path, project(tmp_path, "norun.py", "def init():\n    pass\n"))
    assert proc.returncode == 1
    assert "step p failed: No worker could start: cannot load the entry script norun.py: it " \
           "defines no run(mini_batch) function" in proc.stdout
    assert "Traceback" not in proc.stdout and "init() failed" not in proc.stdout


def test_init_calling_sys_exit_fails_the_step_with_its_line(tmp_path: Path) -> None:
    script = "import sys\n\ndef init():\n    sys.exit(0)\n\ndef run(mini_batch):\n    return mini_batch\n"
    proc = create(tmp_path, project(tmp_path, "quits.py", script))
    assert proc.returncode == 1
    assert "The entry script's init() failed and no worker could start: SystemExit: 0" in proc.stdout
    assert "quits.py\", line 4, in init" in proc.stdout


def test_entry_script_must_be_python(tmp_path: Path) -> None:
    source = project(tmp_path, "score.sh", "echo hi\n")
    proc = create(tmp_path, source)
    assert proc.returncode == 1
    assert f"{source}:19:7: jobs.p.task.entry_script: entry script 'score.sh' must be a Python " \
           "file (.py)" in proc.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    good = project(tmp_path, "score.py", "def run(mini_batch):\n    return mini_batch\n")
    assert run_cli("job", "validate", str(good)).returncode == 0


def test_empty_input_completes_with_a_note_naming_the_step(tmp_path: Path) -> None:
    script = "def run(mini_batch):\n    return mini_batch\n"
    proc = create(tmp_path, project(tmp_path, "echo.py", script, files=0))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{tmp_path / 'empty'}: info: jobs.p.input_data: input 'd' is empty: no mini-batches to " \
           "run; the step completes with nothing to do" in proc.stderr
    assert "no mini-batches: the input is empty" in proc.stdout


@pytest.mark.parametrize("command, code, shown", [
    ("echo about to fail >&2; exit 3", 3, "about to fail"),
    ("definitely_not_a_command_for_mlpipe --flag", 127, "command not found"),
])
def test_failing_command_step_one_line_each(tmp_path: Path, command: str, code: int, shown: str) -> None:
    source = tmp_path / "cmd.yml"
    source.write_text(f"type: pipeline\njobs:\n  c:\n    type: command\n    command: {command}\n",
                      encoding="utf-8")
    proc = create(tmp_path, source)
    assert proc.returncode == 1
    streamed = [line for line in proc.stdout.splitlines() if line.startswith("step c: failed")]
    assert len(streamed) == 1 and f"command exited with code {code}: " in streamed[0]
    assert shown in streamed[0]


def test_processes_started_by_run_end_with_the_step(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = (
        "import subprocess, sys\n\n"
        "def run(mini_batch):\n"
        "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"    with open({str(pids)!r}, 'a') as fh:\n"
        "        fh.write(f'{child.pid}\\n')\n"
        "    return mini_batch\n"
    )
    proc = create(tmp_path, project(tmp_path, "spawns.py", script))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 1
    deadline = time.monotonic() + 5
    while any(psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
              for pid in started):
        assert time.monotonic() < deadline, f"run()'s child {started} outlived the step"
        time.sleep(0.05)


@pytest.mark.parametrize("entry, script, error", [
    ("nosig.py", "def run():\n    return []\n",
     "[UserError] TypeError: run() takes <n> positional arguments but <n> was given: "
     "2 mini-batches failed, 2 failed attempts"),
    ("nothing.py", "def run(mini_batch):\n    return None\n",
     "[ReturnValue] The run() method in the entry script accepts and should return a list or a "
     "pandas DataFrame. The actual type of output '…' is NoneType.: 2 mini-batches failed, "
     "2 failed attempts"),
])
def test_tolerated_failures_are_summarised(tmp_path: Path, entry: str, script: str, error: str) -> None:
    source = project(tmp_path, entry, script, files=4)
    source.write_text(source.read_text().replace("    max_concurrency_per_instance: 1\n",
                                                 "    max_concurrency_per_instance: 1\n"
                                                 "    error_threshold: -1\n"
                                                 "    mini_batch_error_threshold: -1\n"))
    proc = create(tmp_path, source)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # Azure: -1 tolerates every failure
    lines = proc.stdout.splitlines()
    at = lines.index("step p: completed, but 2 mini-batches (4 items) failed (within its "
                     "error thresholds):")
    assert lines[at + 1] == f"  {error}"
    assert lines[at + 2].startswith("  details: ") and lines[at + 2].endswith("/p/logs/user/error.txt")


def test_errors_naming_object_addresses_count_as_one(tmp_path: Path) -> None:
    # run() returns a generator: each message names a new address ("at 0x7f..."), yet it is
    # one error; the error files keep every message as it was.
    script = ("KEEP = []\n\ndef run(mini_batch):\n    KEEP.append((x for x in mini_batch))\n"
              "    return KEEP[-1]\n")
    source = project(tmp_path, "gen.py", script, files=4)
    source.write_text(source.read_text().replace("    max_concurrency_per_instance: 1\n",
                                                 "    max_concurrency_per_instance: 1\n"
                                                 "    error_threshold: -1\n"
                                                 "    mini_batch_error_threshold: -1\n"))
    proc = create(tmp_path, source)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    at = lines.index("step p: completed, but 2 mini-batches (4 items) failed (within its "
                     "error thresholds):")
    # labelled by its signature (the address masked), attempts and mini-batches named
    assert re.fullmatch(r"  \[ReturnValue\] .*'…' is generator\.: 2 mini-batches failed, "
                        r"2 failed attempts", lines[at + 1]), lines[at + 1]
    assert lines[at + 2].startswith("  details: ")
    error_txt = Path(lines[at + 2].removeprefix("  details: "))
    summary = error_txt.read_text(encoding="utf-8")
    assert summary.startswith("2 failed attempts (2 mini-batches failed) in 1 kind of error"), \
        summary
    tracebacks = (error_txt.parent / "error" / "0" / "process000.txt").read_text(encoding="utf-8")
    assert len(set(re.findall(r"<genexpr> at (0x[0-9a-f]+)>", tracebacks))) == 2, tracebacks
