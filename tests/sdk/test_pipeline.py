"""@pipeline tracing: node names, wiring, settings changed after construction, outputs, paths."""

from __future__ import annotations

import os
import runpy
import textwrap
from pathlib import Path

import pytest

from mlpipe import Input, Output, ValidationError, load_component, load_job, pipeline
from mlpipe.parallel import (
    JobResourceConfiguration,
    RetrySettings,
    RunFunction,
    parallel_run_function,
)
from mlpipe.sdk import compile_job
from tests.sdk.support import make_file_project, write


def echo_function(**overrides):
    settings = dict(
        inputs=dict(files=Input(type="uri_folder")),
        outputs=dict(lines=Output(type="uri_file")),
        input_data="${{inputs.files}}",
        mini_batch_size="2",
        task=RunFunction(code="./src", entry_script="echo.py",
                         append_row_to="${{outputs.lines}}"),
    )
    settings.update(overrides)
    return parallel_run_function(**settings)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder; the tests' own file is elsewhere, so paths are given absolute."""
    root = make_file_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    return root


def build_in(root: Path, body: str, name: str = "build.py") -> dict:
    """Run a pipeline-building script that lives in ``root`` and return its globals."""
    script = write(root / name, textwrap.dedent(body))
    return runpy.run_path(str(script))


HEAD = """
from mlpipe import Input, Output, pipeline
from mlpipe.parallel import RunFunction, parallel_run_function

echo = parallel_run_function(
    inputs=dict(files=Input(type="uri_folder")),
    outputs=dict(lines=Output(type="uri_file")),
    input_data="${{inputs.files}}",
    mini_batch_size="2",
    task=RunFunction(code="./src", entry_script="echo.py", append_row_to="${{outputs.lines}}"),
)
"""


NAMES = """
@pipeline()
def p(data):
    first = echo(files=data)
    echo(files=data)
    echo(files=data)
    renamed = echo(files=data)
    renamed.name = "chosen"
    first_again = first
job = p(data=Input(path="./data"))
"""


def test_node_names_come_from_variables_then_component_name(project: Path) -> None:
    # The names azure-ai-ml 1.35 gives: the last variable holding a node names it; nodes
    # held by none take the name of a variable holding a node of their component, numbered.
    ns = build_in(project, HEAD + NAMES)
    assert list(ns["job"].jobs) == ["first_again", "first_again_1", "first_again_2", "chosen"]


def test_nodes_of_a_named_parallel_function_keep_its_name(project: Path) -> None:
    # parallel_run_function(name="echo"): azure-ai-ml names every node "echo", whatever
    # variable holds it (output folders follow); the others are numbered.
    named = HEAD.replace("echo = parallel_run_function(", "echo = parallel_run_function(\n"
                         "    name='echo',")
    ns = build_in(project, named + NAMES)
    assert list(ns["job"].jobs) == ["echo", "echo_1", "echo_2", "chosen"]


def test_duplicate_explicit_names_are_rejected(project: Path) -> None:
    with pytest.raises(ValidationError) as err:
        build_in(project, HEAD + """
@pipeline()
def p(data):
    a = echo(files=data)
    a.name = "same"
    b = echo(files=data)
    b.name = "same"
job = p(data=Input(path="./data"))
""")
    assert "two steps are named 'same'" in str(err.value)
    assert f"{project / 'build.py'}:18" in str(err.value)  # b.name = "same"


def test_settings_changed_after_construction_reach_the_plan(project: Path) -> None:
    ns = build_in(project, HEAD + """
@pipeline(default_compute="cpu", continue_on_step_failure=True)
def p(data, threshold: int = 3):
    step = echo(files=data)
    step.resources.instance_count = 3
    step.mini_batch_size = "4"
    step.retry_settings.timeout = 45
    step.retry_settings.max_retries = 0
    step.compute = "gpu-cluster"
    step.max_concurrency_per_instance = 2
    step.mini_batch_error_threshold = threshold
    step.environment_variables = {"FOO": "bar"}
    step.outputs.lines.path = "./out/lines.txt"
    step.outputs.lines.mode = "upload"
    other = echo(files=data)
    other.set_resources(instance_count=2, instance_type="Standard_D2", shm_size="2g")
    return {"all_lines": step.outputs.lines}
job = p(data=Input(path="./data"))
""")
    job = ns["job"]
    plan = compile_job(job, runs_dir=project / "runs", job_name="j", allow_external_outputs=True)
    step = plan.step("step")
    assert step.instance_count == 3 and step.mini_batch_size.text == "4"
    assert (step.retry.timeout, step.retry.max_retries) == (45, 0)
    assert step.compute == "azureml:gpu-cluster"  # "gpu-cluster" as azure-ai-ml writes it
    assert step.max_concurrency_per_instance == 2
    assert step.mini_batch_error_threshold == 3  # ${{parent.inputs.threshold}} resolved
    assert dict(step.environment_variables) == {"FOO": "bar"}
    assert plan.outputs["all_lines"].path == str(project / "out" / "lines.txt")
    assert plan.settings.continue_on_step_failure is True
    other = plan.step("other")
    assert other.instance_count == 2
    data = job.to_dict()
    assert data["jobs"]["step"]["mini_batch_error_threshold"] == "${{parent.inputs.threshold}}"
    assert data["jobs"]["step"]["outputs"]["lines"] == "${{parent.outputs.all_lines}}"
    assert data["outputs"]["all_lines"] == {"type": "uri_file", "path": "./out/lines.txt",
                                            "mode": "upload"}
    assert data["jobs"]["other"]["resources"] == {"instance_count": 2,
                                                  "instance_type": "Standard_D2",
                                                  "shm_size": "2g"}
    assert data["inputs"] == {"data": {"type": "uri_folder", "path": "./data"}, "threshold": 3}


def test_outputs_wire_into_other_nodes(project: Path) -> None:
    ns = build_in(project, HEAD + """
from mlpipe import command
listing = command(
    command="python -c \\"import sys; print(open(sys.argv[1]).read())\\" ${{inputs.lines}}",
    inputs=dict(lines=Input(type="uri_file")),
)
@pipeline()
def p(data):
    score = echo(files=data)
    show = listing(lines=score.outputs.lines)
job = p(data=Input(path="./data"))
""")
    job = ns["job"]
    assert job.to_dict()["jobs"]["show"]["inputs"]["lines"] == \
        "${{parent.jobs.score.outputs.lines}}"
    plan = compile_job(job, runs_dir=project / "runs", job_name="j")
    assert plan.step("show").depends_on == ("score",)
    result = job.run(runs_dir=project / "runs", job_name="wired")
    assert result.ok
    assert result.step_outputs["score"]["lines"].endswith("parallel_run_step.txt")


def test_relative_paths_resolve_against_the_script_folder(project: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    ns = build_in(project, HEAD + """
@pipeline()
def p(data):
    step = echo(files=data)
job = p(data=Input(path="./data"))
""")
    plan = compile_job(ns["job"], runs_dir=tmp_path / "runs", job_name="j")
    assert plan.step("step").code_dir == str(project / "src")
    assert plan.inputs["data"].path == str(project / "data")


def test_cloud_only_arguments_are_recorded(project: Path) -> None:
    ns = build_in(project, HEAD.replace("echo = parallel_run_function(", '''echo = parallel_run_function(
    instance_count=2, instance_type="Standard_NC6", docker_args="--ipc=host", shm_size="8g",
    identity={"type": "managed"}, is_deterministic=False, tags={"team": "ml"},
    properties={"p": "1"}, logging_level="DEBUG", error_threshold=4,''') + """
@pipeline(experiment_name="exp", tags={"t": "1"})
def p(data):
    step = echo(files=data)
job = p(data=Input(path="./data"))
""")
    job = ns["job"]
    node = job.to_dict()["jobs"]["step"]
    assert node["resources"] == {"instance_count": 2, "instance_type": "Standard_NC6",
                                 "shm_size": "8g", "docker_args": "--ipc=host"}
    assert node["identity"] == {"type": "managed"} and node["is_deterministic"] is False
    assert node["tags"] == {"team": "ml"} and node["properties"] == {"p": "1"}
    assert job.to_dict()["experiment_name"] == "exp"
    plan = compile_job(job, runs_dir=project / "runs", job_name="j")
    step = plan.step("step")
    assert step.instance_count == 2 and step.logging_level == "DEBUG"
    assert step.error_threshold == 4
    assert load_job(write(project / "dumped.yml", job.to_yaml())) == job


def test_loaded_components_become_steps(project: Path) -> None:
    write(project / "components" / "echo.yml", textwrap.dedent("""\
        $schema: https://azuremlschemas.azureedge.net/latest/parallelComponent.schema.json
        type: parallel
        name: echo_component
        inputs:
          files: {type: uri_folder}
          tag: {type: string, default: none}
        outputs:
          lines: {type: uri_file}
        input_data: ${{inputs.files}}
        mini_batch_size: "3"
        task:
          type: run_function
          code: ../src
          entry_script: echo.py
          program_arguments: --tag ${{inputs.tag}}
          append_row_to: ${{outputs.lines}}
        """))
    echo_component = load_component("components/echo.yml")
    assert echo_component.input_names == ["files", "tag"]

    @pipeline()
    def p(data):
        scored = echo_component(files=data, tag="blue")
        scored.mini_batch_size = "2"
        echo_component(files=data)
        return {"lines": scored.outputs.lines}

    job = p(data=Input(path=str(project / "data")))
    data = job.to_dict()
    assert data["jobs"]["scored"]["component"].startswith("file:")
    assert data["jobs"]["scored"]["component"].endswith("components/echo.yml")
    # as azure-ai-ml: a node held by no variable takes the name of the variable that holds
    # another node of its component, numbered (differential/programs/name_*.py)
    assert list(job.jobs) == ["scored", "scored_1"]
    result = job.run(runs_dir=project / "runs", job_name="components")
    assert result.ok
    lines = Path(result.outputs["lines"]).read_text().split("\n")
    assert sorted(line.split()[2] for line in lines if line) == ["blue"] * 6

    with pytest.raises(ValidationError) as err:
        @pipeline()
        def q(data):
            echo_component(file=data)
        q(data=Input(path="./data"))
    assert "unknown input 'file'" in str(err.value) and "did you mean 'files'?" in str(err.value)


def test_a_pipeline_must_return_node_outputs(project: Path) -> None:
    echo = echo_function()

    @pipeline()
    def p(data):
        echo(files=data)
        return {"x": data}

    with pytest.raises(ValidationError, match="must be a node output"):
        p(data=Input(path="./data"))


def test_settings_objects_accept_mappings(project: Path) -> None:
    echo = echo_function(retry_settings={"max_retries": 1, "timeout": 9})
    assert isinstance(echo.retry_settings, RetrySettings)
    assert echo.retry_settings.to_dict() == {"max_retries": 1, "timeout": 9}
    resources = JobResourceConfiguration(instance_count=2)
    assert resources.to_dict() == {"instance_count": 2}
    assert os.fspath(project)


def test_steps_made_inside_the_pipeline_are_steps(project: Path) -> None:
    @pipeline()
    def p(data):
        inline = parallel_run_function(  # azure-ai-ml style: made and bound in one go
            inputs=dict(files=data), input_data="${{inputs.files}}", mini_batch_size="3",
            task=RunFunction(code=str(project / "src"), entry_script="echo.py"))
        inline.compute = "cpu-cluster"
        template = echo_function(task=RunFunction(code=str(project / "src"),
                                                  entry_script="echo.py",
                                                  append_row_to="${{outputs.lines}}"))
        used = template(files=data)  # a template that is called is not a step itself
        return {"lines": used.outputs.lines}

    job = p(data=Input(path=str(project / "data")))
    assert list(job.jobs) == ["inline", "used"]
    assert job.to_dict()["jobs"]["inline"]["inputs"] == {"files": "${{parent.inputs.data}}"}
    plan = compile_job(job, runs_dir=project / "runs", job_name="inline")
    assert plan.step("inline").mini_batch_size.text == "3"


def test_load_job_params_override(tmp_path: Path) -> None:
    from tests.sdk.support import SAMPLES

    job = load_job(SAMPLES / "file-batch" / "pipeline.yml",
                   params_override=[{"settings.default_compute": "gpu",
                                     "jobs.count_words.mini_batch_size": "4"}])
    assert job.settings.default_compute == "gpu"
    assert job.jobs["count_words"].mini_batch_size == "4"
    plan = job.compile(runs_dir=tmp_path, job_name="o")
    assert plan.step("count_words").mini_batch_size.text == "4"


def test_outputs_can_be_replaced_and_profilers_are_left_alone(project: Path) -> None:
    import cProfile

    echo = echo_function(name="echo")

    @pipeline()
    def p(data):
        step = echo(files=data)
        step.outputs.lines = Output(type="uri_file", path="./out/x.txt")

    assert p(data=Input(path="./data")).to_dict()["jobs"]["echo"]["outputs"] == {
        "lines": {"type": "uri_file", "path": "./out/x.txt"}}
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        job = p(data=Input(path="./data"))
    finally:
        profiler.disable()
    assert list(job.jobs) == ["echo"]  # no locals under cProfile: the component's name
