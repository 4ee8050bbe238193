"""The backends' table: a backend is one module plus one row, and the row owns its rule
(``--backend`` choices, the pre-run check of its packages, its job-wide scope)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mlpipe
from mlpipe.cli import main
from mlpipe.frozen import freeze
from mlpipe.jobs.preflight import BackendUnavailableError, check_backend
from mlpipe.runtime import run_parallel_step
from mlpipe.runtime.backends import (
    BackendChoice,
    BackendOption,
    BackendSpec,
    backend_names,
    get_backend,
    register_backend,
    unregister_backend,
)
from tests.runtime.backends.support import (
    INLINE,
    SCOPES,
    InlineBackend,
    inline_scope,
    pipeline_yaml,
)
from tests.runtime.support import LOADER, file_mini_batches, make_step

SCRIPT = """\
import os
from pathlib import Path

def init():
    global pid
    pid = os.getpid()

def run(mini_batch):
    return [f"{Path(p).name} {pid}" for p in mini_batch]
"""


@pytest.fixture
def inline() -> Iterator[BackendSpec]:
    """The inline test backend, registered through the public table API for one test."""
    register_backend(INLINE)
    try:
        yield INLINE
    finally:
        unregister_backend(INLINE.name)


def _project(tmp_path: Path, steps: tuple[str, ...]) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "score.py").write_text(SCRIPT, encoding="utf-8")
    (tmp_path / "data").mkdir()
    for index in range(5):
        (tmp_path / "data" / f"f{index}.txt").write_text("x\n", encoding="utf-8")
    yaml = tmp_path / "pipeline.yml"
    yaml.write_text(pipeline_yaml(*steps, mini_batch_size=2), encoding="utf-8")
    return yaml


def test_a_new_backend_is_one_module_and_one_row(tmp_path: Path, inline: BackendSpec,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    yaml = _project(tmp_path, ("first", "second"))
    cwd, path = os.getcwd(), list(sys.path)
    code = main(["job", "create", "-f", str(yaml), "-n", "inl", "--runs-dir",
                 str(tmp_path / "runs"), "--backend", "inline", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "inline backend: one scope for the job's 2 parallel steps" in out
    scope = SCOPES[-1]
    assert scope.job == "inl" and sorted(scope.steps) == ["first", "second"]  # one scope, held
    assert not scope.open  # by the runner for the whole job, closed at its end
    for step in ("first", "second"):
        rows = (tmp_path / "runs" / "inl" / step / "outputs" / "rows" / "parallel_run_step.txt")
        assert rows.read_text().split("\n")[:-1] == [f"f{i}.txt {os.getpid()}" for i in range(5)]
    assert json.loads((tmp_path / "runs" / "inl" / "job.json").read_text())["backend"] == "inline"
    assert (os.getcwd(), sys.path) == (cwd, path)  # the process given back
    assert "AZUREML_BI_OUTPUT_PATH" not in os.environ and "score" not in sys.modules


def test_the_table_is_what_every_layer_reads(tmp_path: Path, inline: BackendSpec,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert backend_names() == ("local", "dask", "inline")
    with pytest.raises(SystemExit):
        main(["job", "create", "--help"])
    assert "{local,dask,inline}" in capsys.readouterr().out
    assert check_backend("inline") is inline
    step = make_step(tmp_path, "def run(mini_batch):\n    return mini_batch\n", workers=1)
    summary = run_parallel_step(step, backend="inline", loader=LOADER,  # no job: no scope
                                mini_batches=file_mini_batches(tmp_path / "data", 3))
    assert summary.status == "Completed" and summary.mini_batches_succeeded == 3
    assert isinstance(get_backend("inline"), InlineBackend)


def test_unknown_backend_is_a_usage_error_with_the_tables_names(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["job", "create", "-f", "x.yml", "--backend", "dusk"])
    assert exit_.value.code == 2
    assert re.search(r"invalid choice: 'dusk' \(choose from '?local'?, '?dask'?\)",
                     capsys.readouterr().err)
    with pytest.raises(BackendUnavailableError, match="did you mean 'dask'"):
        check_backend("dusk")


def test_a_missing_package_is_named_with_how_to_install_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = BackendSpec("needy", InlineBackend, requires=("mlpipe_no_such_package",),
                       install_hint="pip install mlpipe-no-such-package")
    register_backend(spec)
    try:
        yaml = _project(tmp_path, ("only",))
        code = main(["job", "create", "-f", str(yaml), "--runs-dir", str(tmp_path / "runs"),
                     "--backend", "needy", "--no-progress"])
    finally:
        unregister_backend("needy")
    captured = capsys.readouterr()
    assert code == 1
    assert ("the 'needy' backend needs 1 package (mlpipe_no_such_package) that is not "
            "installed; install it with: pip install mlpipe-no-such-package") in captured.err
    assert "Traceback" not in captured.err and not list((tmp_path / "runs").glob("*/job.json"))


@dataclasses.dataclass(frozen=True)
class TunedOptions:
    """The options of a test backend that takes some: what its job scope says."""

    greeting: str = "hello"
    loud: bool = False


@contextlib.contextmanager
def tuned_scope(plan: Any, say: Any, cores: int, options: TunedOptions) -> Iterator[Any]:
    """The inline scope, saying the options it was handed."""
    say(f"tuned scope: {options.greeting.upper() if options.loud else options.greeting}")
    with inline_scope(plan, say, cores) as scope:
        yield scope


@pytest.fixture
def tuned() -> Iterator[BackendSpec]:
    """A backend with options of its own: one row, its options declared on it."""
    spec = dataclasses.replace(
        INLINE, name="tuned", job_scope=tuned_scope, read_options=TunedOptions,
        options=(BackendOption("greeting", "what the scope says", metavar="WORDS"),
                 BackendOption("loud", "say it loud", switch=True)))
    register_backend(spec)
    try:
        yield spec
    finally:
        unregister_backend(spec.name)


def test_a_backends_own_options_come_from_its_row(
        tmp_path: Path, tuned: BackendSpec, capsys: pytest.CaptureFixture[str]) -> None:
    yaml = _project(tmp_path, ("only",))
    runs = str(tmp_path / "runs")
    with pytest.raises(SystemExit):
        main(["job", "create", "--help"])
    helped = capsys.readouterr().out
    assert "options of the tuned backend (with --backend tuned)" in helped
    assert "--greeting WORDS" in helped and "--loud" in helped
    assert main(["job", "create", "-f", str(yaml), "-n", "cli", "--runs-dir", runs,
                 "--backend", "tuned", "--greeting", "hi there", "--loud", "--no-progress"]) == 0
    assert "tuned scope: HI THERE" in capsys.readouterr().out
    assert main(["job", "create", "-f", str(yaml), "-n", "plain", "--runs-dir", runs,
                 "--backend", "tuned", "--no-progress"]) == 0
    assert "tuned scope: hello" in capsys.readouterr().out  # the backend's own default
    assert main(["job", "create", "-f", str(yaml), "-n", "implied", "--runs-dir", runs,
                 "--greeting", "no --backend", "--no-progress"]) == 0
    assert "tuned scope: no --backend" in capsys.readouterr().out  # its option chose it
    lines: list[str] = []
    result = mlpipe.run(yaml, runs_dir=runs, job_name="sdk", backend="tuned",
                        backend_options={"greeting": "from python"}, echo=lines.append)
    assert result.status == "completed" and "tuned scope: from python" in lines


def test_an_option_of_another_backend_or_none_is_refused(
        tmp_path: Path, tuned: BackendSpec, capsys: pytest.CaptureFixture[str]) -> None:
    yaml = _project(tmp_path, ("only",))
    assert main(["job", "create", "-f", str(yaml), "--runs-dir", str(tmp_path / "runs"),
                 "--backend", "local", "--greeting", "hi", "--no-progress"]) == 2
    assert capsys.readouterr().err == ("mlpipe: error: --greeting is an option of the tuned "
                                       "backend: add --backend tuned\n")
    with pytest.raises(BackendUnavailableError, match="no option 'greting'.*did you mean "
                                                      "'greeting'"):
        check_backend(BackendChoice("tuned", freeze({"greting": "x"})))
    with pytest.raises(BackendUnavailableError, match="the 'local' backend has no option "
                                                      "'scheduler' \\(it takes none\\)"):
        check_backend(BackendChoice.of("local", {"scheduler": "tcp://x:1"}))
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").glob("*/job.json"))
