"""SDK misuse raises one ``mlpipe.ValidationError`` pointing at the user's line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mlpipe import Input, Output, ValidationError, load_job, pipeline
from mlpipe.parallel import RunFunction, parallel_run_function

HERE = str(Path(__file__).resolve())


def line_here() -> int:
    return sys._getframe(1).f_lineno


def make_step(src: Path, entry: str = "score.py"):
    return parallel_run_function(
        name="score", inputs=dict(data=Input(type="uri_folder")),
        outputs=dict(out=Output(type="uri_file")), input_data="${{inputs.data}}",
        task=RunFunction(code=str(src), entry_script=entry, append_row_to="${{outputs.out}}"))  # RUNFUNCTION


@pytest.fixture
def src(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "score.py").write_text("def run(mini_batch):\n    return mini_batch\n")
    (tmp_path / "data").mkdir()
    return tmp_path / "src"


def only_error(info: pytest.ExceptionInfo[ValidationError]):
    (error,) = info.value.errors
    return error


def test_input_and_output_types_and_modes_are_checked_at_the_call(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as info:
        line = line_here(); Input(type="folder", path=str(tmp_path))  # noqa: E702
    error = only_error(info)
    assert (error.location.file, error.location.line) == (HERE, line)
    assert error.message.startswith("Input(type=...): must be one of uri_file, uri_folder,")
    assert error.message.endswith("got 'folder'") and error.hint == "did you mean 'uri_folder'?"
    with pytest.raises(ValidationError) as info:
        line = line_here(); Output(type="uri_file", mode="rw_mnt")  # noqa: E702
    error = only_error(info)
    assert error.location.line == line and error.hint == "did you mean 'rw_mount'?"
    assert error.message == "Output(mode=...): must be one of rw_mount, upload, mount, direct, got 'rw_mnt'"
    with pytest.raises(ValidationError) as info:
        Input(type=3)
    assert only_error(info).message.endswith("got int 3")
    assert Input(type="URI_FOLDER").type == "URI_FOLDER"  # the schema is case-insensitive too
    assert Output(type="mltable", mode="upload").mode == "upload"


def test_inputs_are_keyword_arguments(src: Path) -> None:
    step = make_step(src)

    call_line = line_here() + 4

    @pipeline()
    def positional(data):
        step(data)

    with pytest.raises(ValidationError) as info:
        positional(data=Input(type="uri_folder", path=str(src.parent / "data")))
    error = only_error(info)
    assert error.message == "score() takes its inputs as keyword arguments (data=...), got 1 " \
                            "positional argument"
    assert error.location.file == HERE and error.location.line == call_line


def test_running_a_node_outside_a_pipeline_says_what_to_do(src: Path) -> None:
    import mlpipe

    node = make_step(src)(data=Input(type="uri_folder", path=str(src.parent / "data")))
    with pytest.raises(ValidationError) as info:
        line = line_here(); mlpipe.run(node)  # noqa: E702
    error = only_error(info)
    assert error.location.line == line and error.location.file == HERE
    assert "run() takes a PipelineJob" in error.message and error.message.endswith("got ParallelNode")
    assert error.hint.startswith("a step runs inside a pipeline")


def test_missing_entry_script_points_at_the_run_function_call(src: Path) -> None:
    step = make_step(src, entry="scor.py")

    @pipeline()
    def job(data):
        step(data=data)

    with pytest.raises(ValidationError) as info:
        job(data=Input(type="uri_folder", path=str(src.parent / "data"))).validate()
    error = only_error(info)
    assert error.key_path == "jobs.score.task.entry_script"
    assert error.message.startswith("entry script 'scor.py' not found in code folder")
    assert error.hint == "did you mean 'score.py'?"
    source_lines = Path(HERE).read_text().splitlines()
    run_function_line = next(i for i, text in enumerate(source_lines, 1) if text.endswith("# RUNFUNCTION"))
    assert (error.location.file, error.location.line) == (HERE, run_function_line)


def test_load_job_on_a_bad_file_raises_one_located_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_bytes(b"type: pipeline\ndisplay_name: caf\xe9\n")
    with pytest.raises(ValidationError) as info:
        load_job(bad)
    error = only_error(info)
    assert str(error) == f"{bad}:2:18: not UTF-8 text: byte 0xe9 cannot be decoded (save the file as UTF-8)"
    with pytest.raises(ValidationError) as info:
        load_job(tmp_path / "missing.yml")
    assert only_error(info).message == "file not found"


def test_inputs_and_outputs_of_the_wrong_shape_are_refused_at_the_call(src: Path) -> None:
    task = RunFunction(code=str(src), entry_script="score.py")
    with pytest.raises(ValidationError) as info:
        line = line_here(); parallel_run_function(name="s", inputs=["data"], task=task)  # noqa: E702
    error = only_error(info)
    assert error.location.line == line and error.location.file == HERE
    assert error.message == "inputs must be a dict of input name to Input or value, got list ['data']"
    with pytest.raises(ValidationError) as info:
        parallel_run_function(name="s", outputs=dict(out=5), task=task)
    assert only_error(info).message == "outputs['out'] must be an Output (or a dict of its settings, " \
                                       "or its type), got int 5"
    made = parallel_run_function(name="s", outputs=dict(a="uri_file", b={"type": "mltable"}, c=None),
                                 task=task)
    assert made.to_dict(src)["outputs"] == {"a": {"type": "uri_file"}, "b": {"type": "mltable"},
                                            "c": {"type": "uri_folder"}}


def test_load_component_of_a_pipeline_and_load_job_of_a_non_path(tmp_path: Path) -> None:
    from mlpipe import load_component

    job_file = tmp_path / "pipeline.yml"
    job_file.write_text("type: pipeline\njobs:\n  a:\n    type: command\n    command: echo\n")
    with pytest.raises(ValidationError) as info:
        load_component(job_file)
    error = only_error(info)
    assert str(error) == f"{job_file}:1:1: type: load_component reads component files (type: " \
                         "parallel, command, or a pipeline component); this file is a pipeline " \
                         "job (use load_job() for pipeline jobs)"
    with pytest.raises(ValidationError) as info:
        line = line_here(); load_job(5)  # noqa: E702
    error = only_error(info)
    assert error.message == "expected the path of a YAML file, got int 5"
    assert (error.location.file, error.location.line) == (HERE, line)


def test_pipeline_function_misuse(src: Path) -> None:
    step = make_step(src)

    @pipeline()
    def batch(data):
        step(data=data)

    with pytest.raises(ValidationError) as info:
        line = line_here(); batch(dta=Input(type="uri_folder", path=str(src.parent / "data")))  # noqa: E702
    error = only_error(info)
    assert (error.location.line, error.message, error.hint) == \
        (line, "batch() has no parameter 'dta'", "did you mean 'data'?")

    @pipeline()
    def empty(data):
        pass

    with pytest.raises(ValidationError) as info:
        empty(data=1)
    error = only_error(info)
    assert error.message == "the @pipeline function empty() made no steps: call a " \
                            "parallel_run_function(...), command(...) or loaded component in it"
    assert error.location.file == HERE
