"""Validation from code: one ValidationError listing every problem, with the CLI's messages,
pointing at the Python line that wrote each setting (or at the YAML line for loaded jobs)."""

from __future__ import annotations

import inspect
import runpy
import textwrap
from pathlib import Path

import pytest

from mlpipe import Input, ValidationError, load_job, pipeline
from mlpipe.parallel import RunFunction, parallel_run_function
from tests.conftest import run_cli
from tests.sdk.support import SAMPLES, make_file_project, sample_job, write

BAD_SCRIPT = """\
from mlpipe import Input, Output, pipeline
from mlpipe.parallel import RunFunction, parallel_run_function

echo = parallel_run_function(
    inputs=dict(files=Input(type="uri_folder")),
    outputs=dict(lines=Output(type="uri_file")),
    input_data="${{inputs.file}}",
    retry_settings=dict(max_retries=-3, timeout=30),
    task=RunFunction(code="./src", entry_script="ecko.py",
                     append_row_to="${{outputs.lines}}"),
)


@pipeline()
def bad(data):
    step = echo(files=data)
    step.mini_batch_size = "lots"
    step.resources.instance_count = 0


job = bad(data=Input(path="./data"))
"""


@pytest.fixture
def bad_job(tmp_path: Path):
    root = make_file_project(tmp_path / "proj")
    script = write(root / "bad.py", BAD_SCRIPT)
    return runpy.run_path(str(script))["job"], script


def _key_messages(diagnostics) -> set[tuple[str, str]]:
    return {(d.key_path, d.message) for d in diagnostics if d.severity == "error"}


def test_one_error_lists_every_problem_at_its_python_line(bad_job) -> None:
    job, script = bad_job
    with pytest.raises(ValidationError) as err:
        job.validate()
    where = {d.key_path: (d.location.file, d.location.line) for d in err.value.errors}
    assert where == {
        "jobs.step.input_data": (str(script), 4),  # parallel_run_function(...) call
        "jobs.step.retry_settings.max_retries": (str(script), 4),
        "jobs.step.task.entry_script": (str(script), 9),  # RunFunction(...)
        "jobs.step.mini_batch_size": (str(script), 17),  # set after construction
        "jobs.step.resources.instance_count": (str(script), 18),
    }
    text = str(err.value)
    assert text.startswith("5 problems found:")
    assert f"{script}:17:5: jobs.step.mini_batch_size:" in text
    assert "did you mean 'files'?" in text and "did you mean 'echo.py'?" in text


def test_messages_are_the_clis(bad_job, tmp_path: Path) -> None:
    job, _ = bad_job
    with pytest.raises(ValidationError) as err:
        job.validate()
    dumped = tmp_path / "proj" / "dumped.yml"
    job.dump(dumped)
    with pytest.raises(ValidationError) as from_yaml:
        load_job(dumped).validate()
    assert _key_messages(err.value.diagnostics) == _key_messages(from_yaml.value.diagnostics)
    assert all(d.location.file == str(dumped) for d in from_yaml.value.errors)
    proc = run_cli("job", "validate", "--file", str(dumped))
    assert proc.returncode == 1
    for key, message in _key_messages(err.value.diagnostics):
        assert f"{key}: {message}" in proc.stdout + proc.stderr


def test_valid_job_validates_and_returns_warnings() -> None:
    warnings = sample_job("file-batch").validate()
    assert isinstance(warnings, tuple)
    assert all(w.severity != "error" for w in warnings)


def test_loaded_job_changes_point_at_python_lines() -> None:
    job = load_job(SAMPLES / "file-batch" / "pipeline.yml")
    line = inspect.currentframe().f_lineno + 1
    job.jobs["count_words"].mini_batch_size = "many"
    job.jobs["count_words"].inputs["documents"] = "${{parent.inputs.nothing}}"
    with pytest.raises(ValidationError) as err:
        job.validate()
    where = {d.key_path: d.location for d in err.value.errors}
    assert set(where) == {"jobs.count_words.mini_batch_size", "jobs.count_words.inputs.documents"}
    assert (where["jobs.count_words.mini_batch_size"].file,
            where["jobs.count_words.mini_batch_size"].line) == (__file__, line)
    assert where["jobs.count_words.inputs.documents"].line == line + 1


def test_yaml_positions_kept_for_unchanged_keys(tmp_path: Path) -> None:
    text = (SAMPLES / "file-batch" / "pipeline.yml").read_text()
    bad = write(tmp_path / "bad.yml", text.replace('mini_batch_size: "5"', 'mini_batch_size: "x"'))
    for item in (SAMPLES / "file-batch").iterdir():
        if item.is_dir():
            (tmp_path / item.name).symlink_to(item)
    job = load_job(bad)
    with pytest.raises(ValidationError) as err:
        job.validate()
    (problem,) = err.value.errors
    line = text.splitlines().index('    mini_batch_size: "5"') + 1
    assert (problem.location.file, problem.location.line) == (str(bad), line)


def test_unknown_input_is_reported_at_the_node_call(tmp_path: Path) -> None:
    echo = parallel_run_function(inputs=dict(files=Input()), input_data="${{inputs.files}}",
                                 task=RunFunction(code=".", entry_script="e.py"))

    @pipeline()
    def p(data):
        echo(filez=data)

    with pytest.raises(ValidationError) as err:
        p(data=Input(path="."))
    (problem,) = err.value.errors
    assert problem.location.file == __file__
    assert problem.location.line == p.__wrapped__.__code__.co_firstlineno + 2
    assert problem.hint == "did you mean 'files'?"


def test_a_nested_pipeline_without_steps_is_refused_clearly() -> None:
    @pipeline()
    def inner():
        pass

    @pipeline()
    def outer():
        inner()

    with pytest.raises(ValidationError, match=r"the @pipeline function inner\(\) made no steps"):
        outer()


def test_a_good_script_in_a_file_has_no_problem(tmp_path: Path) -> None:
    root = make_file_project(tmp_path / "proj")
    script = write(root / "good.py", BAD_SCRIPT.replace("inputs.file}", "inputs.files}")
                   .replace("-3", "3").replace("ecko", "echo").replace('"lots"', '"2"')
                   .replace("= 0", "= 1")
                   .replace('append_row_to="${{outputs.lines}}"',
                            'append_row_to="${{outputs.lines}}", environment="azureml:env:1"')
                   .replace("@pipeline()", '@pipeline(default_compute="azureml:cpu")'))
    job = runpy.run_path(str(script))["job"]
    assert job.validate() == ()
    assert textwrap.dedent(job.to_yaml()).startswith("$schema:")


def test_run_refuses_an_invalid_yaml_path_before_running(tmp_path: Path) -> None:
    import mlpipe

    bad = write(tmp_path / "bad.yml", "type: pipeline\njobs:\n  a:\n    type: parallel\n")
    with pytest.raises(mlpipe.ValidationError) as err:
        mlpipe.run(bad, runs_dir=tmp_path / "runs")
    assert all(d.location.file == str(bad) for d in err.value.errors)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_client_refuses_a_non_job_with_a_validation_error(tmp_path: Path) -> None:
    from mlpipe import MLClient

    client = MLClient(runs_dir=tmp_path / "runs")
    with pytest.raises(ValidationError, match="takes a PipelineJob") as caught:
        client.jobs.create_or_update(123, experiment_name="e")  # was an AttributeError
    assert caught.value.diagnostics[0].location.file == __file__
