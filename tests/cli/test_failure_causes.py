"""A step failed by a threshold names its cause: the top errors with their counts, where
``user/error.txt`` is, and tracebacks that point at the user's file (not the snapshot)."""

from __future__ import annotations

from pathlib import Path

from mlpipe.wording import plural
from tests.cli.support import project
from tests.conftest import run_cli

SCRIPT = """\
def run(mini_batch):
    for path in mini_batch:
        if path.endswith("f1.txt"):
            raise ValueError("cannot parse " + path.rsplit("/", 1)[-1])
    return list(mini_batch)
"""


def test_threshold_failure_names_the_errors_and_the_users_file(tmp_path: Path) -> None:
    source = project(tmp_path, "score.py", SCRIPT, files=3)
    text = source.read_text(encoding="utf-8").replace(
        "retry_settings:", "mini_batch_error_threshold: 0\n    retry_settings:")
    source.write_text(text, encoding="utf-8")
    proc = run_cli("job", "create", "--file", str(source), "--runs-dir", str(tmp_path / "runs"),
                   "-n", "fails", "--no-progress")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    logs = tmp_path / "runs" / "fails" / "p" / "logs"
    *lines, report = proc.stdout.rstrip().splitlines()
    assert report == f"report:     {tmp_path / 'runs' / 'fails' / 'report.html'}"
    at = lines.index("step p failed: 1 mini-batch failed, more than mini_batch_error_threshold = 0")
    assert lines[at:at + 4] == [
        "step p failed: 1 mini-batch failed, more than mini_batch_error_threshold = 0",
        "  [UserError] ValueError: cannot parse f<n>.txt: 1 mini-batch failed, 1 failed attempt",
        f"  details: {logs / 'user' / 'error.txt'}",
        f"  logs: {logs}",
    ]
    user_file = tmp_path / "src" / "score.py"
    (error_file,) = (logs / "user" / "error").rglob("*.txt")
    tracebacks = error_file.read_text(encoding="utf-8")
    assert f'File "{user_file}", line 4, in run' in tracebacks
    assert "/p/code/" not in tracebacks
    assert (logs / "user" / "error.txt").read_text(encoding="utf-8").startswith(
        "1 failed attempt (1 mini-batch failed) in 1 kind of error")
    job_result = (logs / "job_result.txt").read_text(encoding="utf-8").splitlines()
    assert job_result[0] == "Failed: 1 mini-batch failed, more than mini_batch_error_threshold = 0"
    assert ("  [UserError] ValueError: cannot parse f<n>.txt: 1 mini-batch failed, "
            "1 failed attempt") in job_result
    assert "      e.g. ValueError: cannot parse f1.txt (raised in score.py:4 in run)" in job_result
    master = [line.split("|", 4)[-1] for line in
              (logs / "sys" / "master_role.txt").read_text(encoding="utf-8").split("\n20")]
    assert any(m.startswith("Errors by signature") and "\n  [UserError] ValueError: cannot "
               "parse f<n>.txt: 1 mini-batch failed, 1 failed attempt" in m for m in master)


def test_plural() -> None:
    assert [plural(n, "mini-batch") for n in (0, 1, 2)] == \
        ["0 mini-batches", "1 mini-batch", "2 mini-batches"]
    assert plural(1, "item") == "1 item" and plural(3, "process") == "3 processes"
    assert plural(2, "kind of error", "kinds of error") == "2 kinds of error"
    assert plural(1234567, "item") == "1234567 items" and plural(2.5, "second") == "2.5 seconds"


COMMAND = """\
type: pipeline
jobs:
  prep:
    type: command
    code: ./src
    command: python prep.py
"""


def test_command_step_traceback_names_the_users_file(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "prep.py").write_text("def main():\n    raise KeyError('column')\n\n\nmain()\n")
    source = tmp_path / "pipeline.yml"
    source.write_text(COMMAND, encoding="utf-8")
    proc = run_cli("job", "create", "--file", str(source), "--runs-dir", str(tmp_path / "runs"),
                   "-n", "cmd", "--no-progress")
    assert proc.returncode == 1
    assert f'File "{tmp_path / "src" / "prep.py"}", line 2, in main' in proc.stdout, proc.stdout
    assert "/prep/code/prep.py" not in proc.stdout
