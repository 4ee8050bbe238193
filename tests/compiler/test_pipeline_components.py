"""Pipeline components (``type: pipeline`` steps): validated, flattened into qualified steps,
run, and shown; errors inside a component file point at that file's line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from mlpipe.compiler import check_pipeline, validate_component
from tests.compiler.support import line_of
from tests.conftest import run_cli
from tests.jobs.support import create

SCORE = """\
def init():
    pass


def run(mini_batch):
    return [p.rsplit("/", 1)[-1] + ": " + open(p).read().strip() for p in sorted(mini_batch)]
"""

INNER = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineComponent.schema.json
type: pipeline
name: score_pipe
inputs:
  data: {type: uri_folder}
  batch: {type: integer, default: 2}
  threshold: {type: integer, default: -1}
outputs:
  scored: {type: uri_file}
jobs:
  score:
    type: parallel
    inputs:
      data: ${{parent.inputs.data}}
    outputs:
      scored: ${{parent.outputs.scored}}
    input_data: ${{inputs.data}}
    mini_batch_size: ${{parent.inputs.batch}}
    error_threshold: ${{parent.inputs.threshold}}
    max_concurrency_per_instance: 1
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      environment: azureml:env:1
      append_row_to: ${{outputs.scored}}
"""

MIDDLE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineComponent.schema.json
type: pipeline
name: middle
inputs:
  data: {type: uri_folder}
  size: {type: integer}
outputs:
  result: {type: uri_file}
jobs:
  inner:
    type: pipeline
    component: ./inner.yml
    inputs:
      data: ${{parent.inputs.data}}
      batch: ${{parent.inputs.size}}
    outputs:
      scored: ${{parent.outputs.result}}
"""

OUTER = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
inputs:
  folder: {type: uri_folder, path: ./data}
  n: 2
jobs:
  top:
    type: pipeline
    component: ./middle.yml
    inputs:
      data: ${{parent.inputs.folder}}
      size: ${{parent.inputs.n}}
  report:
    type: command
    environment: azureml:env:1
    inputs:
      rows: ${{parent.jobs.top.outputs.result}}
    outputs:
      copy: {type: uri_folder}
    command: cp ${{inputs.rows}} ${{outputs.copy}}/rows.txt
"""


def project(root: Path, outer: str = OUTER, middle: str = MIDDLE, inner: str = INNER) -> Path:
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "score.py").write_text(SCORE)
    (root / "data").mkdir(exist_ok=True)
    for index in range(5):
        (root / "data" / f"f{index}.txt").write_text(f"row {index}\n")
    (root / "inner.yml").write_text(inner)
    (root / "middle.yml").write_text(middle)
    (root / "pipeline.yml").write_text(outer)
    return root / "pipeline.yml"


def test_two_levels_flatten_into_qualified_steps_with_bindings_resolved(tmp_path: Path) -> None:
    source = project(tmp_path)
    result = check_pipeline(source, runs_dir=tmp_path / "runs", submission=True)
    assert result.diagnostics == [] and result.plan is not None
    plan = result.plan
    assert [s.name for s in plan.steps] == ["top.inner.score", "report"]
    score = plan.step("top.inner.score")
    # outer literal n=2 -> middle size -> inner batch -> mini_batch_size, checked after resolving
    assert score.mini_batch_size.text == "2" and score.error_threshold == -1
    assert score.inputs["data"].path == str(tmp_path / "data")
    assert score.step_dir == str(tmp_path / "runs" / "pipeline" / "top.inner.score")
    report = plan.step("report")
    assert report.depends_on == ("top.inner.score",)
    assert report.inputs["rows"].source is not None
    assert (report.inputs["rows"].source.step, report.inputs["rows"].source.output) == \
        ("top.inner.score", "scored")
    assert report.inputs["rows"].path == score.outputs["scored"].path


def test_parallel_step_inside_a_component_runs_and_feeds_an_outer_step(tmp_path: Path) -> None:
    source = project(tmp_path)
    ran = create(source, tmp_path / "runs", "nested", cwd=tmp_path)
    assert ran.proc.returncode == 0, ran.proc.stdout + ran.proc.stderr
    rows = [f"f{i}.txt: row {i}" for i in range(5)]
    assert ran.append_lines("top.inner.score") == rows  # each row once, in order
    copied = ran.output("report", "copy") / "rows.txt"
    assert copied.read_text().splitlines() == rows
    assert (tmp_path / "runs" / "nested" / "top.inner.score" / "logs" / "job_result.txt").is_file()
    shown = run_cli("job", "show", "nested", "--runs-dir", str(tmp_path / "runs"))
    assert shown.returncode == 0 and "top.inner.score" in shown.stdout
    assert "top.inner.score" in ran.proc.stdout  # the summary table


def test_an_error_inside_a_component_file_is_reported_at_its_line(tmp_path: Path) -> None:
    source = project(tmp_path, middle=MIDDLE.replace(
        "      batch: ${{parent.inputs.size}}\n",
        "      batch: ${{parent.inputs.size}}\n      threshold: -5\n"))
    inner = tmp_path / "inner.yml"
    result = check_pipeline(source, runs_dir=tmp_path / "runs", submission=True)
    [error] = result.errors
    assert error.location is not None
    assert (error.location.file, error.location.line) == \
        (str(inner.resolve()), line_of(inner, "error_threshold"))
    assert error.key_path == "jobs.score.error_threshold"
    assert error.message.startswith("must be in [-1, int.max], got -5 "
                                    "(from ${{parent.inputs.threshold}})"), error.message
    # the steps that use it, innermost first
    assert "used by jobs.inner at " in error.message and "middle.yml:10" in error.message
    assert "used by jobs.top at " in error.message and "pipeline.yml:9" in error.message


def test_a_misspelt_binding_in_a_component_file_names_its_line(tmp_path: Path) -> None:
    source = project(tmp_path, middle=MIDDLE.replace("${{parent.inputs.size}}",
                                                     "${{parent.inputs.sise}}"))
    middle = tmp_path / "middle.yml"
    [error] = check_pipeline(source, runs_dir=tmp_path / "runs").errors
    assert error.location is not None and error.location.file == str(middle.resolve())
    assert error.location.line == line_of(middle, "sise")
    assert error.message.startswith("${{parent.inputs.sise}} names no pipeline input "
                                    "(declared inputs: data, size)")
    assert error.hint == "did you mean 'size'?"


def test_outer_binding_to_an_undeclared_component_output_is_an_error(tmp_path: Path) -> None:
    source = project(tmp_path, outer=OUTER.replace("top.outputs.result", "top.outputs.reslt"))
    error = check_pipeline(source, runs_dir=tmp_path / "runs").errors[0]
    assert error.location is not None and error.location.line == line_of(source, "reslt")
    assert "names no output of step 'top'" in error.message and error.hint == "did you mean 'result'?"


def test_a_cycle_through_component_files_is_reported(tmp_path: Path) -> None:
    cyc = textwrap.dedent("""\
        $schema: https://azuremlschemas.azureedge.net/latest/pipelineComponent.schema.json
        type: pipeline
        name: {name}
        jobs:
          again:
            type: pipeline
            component: ./{other}.yml
        """)
    (tmp_path / "a.yml").write_text(cyc.format(name="a", other="b"))
    (tmp_path / "b.yml").write_text(cyc.format(name="b", other="a"))
    source = tmp_path / "p.yml"
    source.write_text("type: pipeline\nsettings: {default_compute: azureml:c}\njobs:\n"
                      "  start:\n    type: pipeline\n    component: ./a.yml\n")
    [error] = check_pipeline(source, runs_dir=tmp_path / "runs").errors
    assert error.code == "cycle" and error.key_path == "jobs.again.component"
    assert error.message.startswith("pipeline components form a cycle: a.yml -> b.yml -> a.yml")
    assert error.location is not None and error.location.file == str((tmp_path / "b.yml").resolve())
    assert error.location.line == 7
    [error] = validate_component(tmp_path / "a.yml")
    assert error.message.startswith("pipeline components form a cycle: a.yml -> b.yml -> a.yml")


def test_inline_pipeline_component(tmp_path: Path) -> None:
    inline = textwrap.indent(INNER.split("\n", 1)[1], "      ")
    outer = OUTER.replace("    component: ./middle.yml\n", "    component:\n" + inline) \
        .replace("size: ${{parent.inputs.n}}", "batch: ${{parent.inputs.n}}") \
        .replace("top.outputs.result", "top.outputs.scored")
    source = project(tmp_path, outer=outer)
    result = check_pipeline(source, runs_dir=tmp_path / "runs", submission=True)
    assert result.errors == [] and result.plan is not None
    assert [s.name for s in result.plan.steps] == ["top.score", "report"]
    assert result.plan.step("top.score").location.line == line_of(source, "  score:")


def test_component_and_job_validate_accept_pipeline_component_files(tmp_path: Path) -> None:
    project(tmp_path)
    proc = run_cli("component", "validate", "middle.yml", "inner.yml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "middle.yml: OK (pipeline component)" in proc.stdout
    proc = run_cli("job", "validate", "pipeline.yml", "middle.yml", "--output", "json", cwd=tmp_path)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and [f["kind"] for f in report["files"]] == ["pipeline", "component"]
    proc = run_cli("component", "validate", "pipeline.yml", cwd=tmp_path)
    assert proc.returncode == 1 and "use 'mlpipe job validate'" in proc.stdout


@pytest.mark.parametrize("batch", ["-3", "0", "5"])
def test_a_component_setting_bound_through_levels_is_range_checked(tmp_path: Path, batch: str) -> None:
    source = project(tmp_path, outer=OUTER.replace("  n: 2", f"  n: {batch}"))
    result = check_pipeline(source, runs_dir=tmp_path / "runs")
    if batch == "-3":
        assert result.errors and result.errors[0].message.startswith(
            "must match ^\\d+([kKmMgG][bB])?$ (a count, or a size with kb, mb or gb), got '-3' "
            "(from ${{parent.inputs.batch}})")
    else:  # "0" is azure-ai-ml's "unset": the data layer's default applies
        assert result.plan is not None
        size = result.plan.step("top.inner.score").mini_batch_size
        assert (size and size.text) == (None if batch == "0" else "5")


SDK_SCRIPT = """\
from mlpipe import Input, Output, command, pipeline
from mlpipe.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score",
    inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(scored=Output(type="uri_file")),
    input_data="${{inputs.data}}",
    mini_batch_size="2",
    max_concurrency_per_instance=1,
    task=RunFunction(code="./src", entry_script="score.py", append_row_to="${{outputs.scored}}",
                     environment="azureml:env:1"),
)
report = command(
    name="report",
    inputs=dict(rows=Input(type="uri_file")),
    outputs=dict(copy=Output(type="uri_folder")),
    command="cp ${{inputs.rows}} ${{outputs.copy}}/rows.txt",
    environment="azureml:env:1",
)


@pipeline()
def scoring(data):
    step = score(data=data)
    return {"scored": step.outputs.scored}


@pipeline()
def middle(data):
    inner = scoring(data=data)
    return {"result": inner.outputs.scored}


@pipeline(default_compute="azureml:cpu-cluster")
def outer(folder):
    top = middle(data=folder)
    copy = report(rows=top.outputs.result)


job = outer(folder=Input(type="uri_folder", path="./data"))
"""


def test_nested_pipeline_functions_become_pipeline_components(tmp_path: Path) -> None:
    import runpy

    import mlpipe

    project(tmp_path)
    script = tmp_path / "nested.py"
    script.write_text(SDK_SCRIPT)
    job = runpy.run_path(str(script))["job"]
    document = job.to_dict()
    top = document["jobs"]["top"]
    assert top["type"] == "pipeline" and top["inputs"] == {"data": "${{parent.inputs.folder}}"}
    assert top["component"]["inputs"] == {"data": {"type": "uri_folder"}}
    assert top["component"]["outputs"] == {"result": {"type": "uri_file"}}
    assert top["component"]["jobs"]["inner"]["type"] == "pipeline"
    assert document["jobs"]["copy"]["inputs"]["rows"] == "${{parent.jobs.top.outputs.result}}"
    assert job.validate() == ()
    job.dump(tmp_path / "dumped.yml")
    again = mlpipe.load_job(tmp_path / "dumped.yml")
    assert again == job
    plan = again.compile(runs_dir=tmp_path / "runs")
    # the step keeps the name of parallel_run_function(name="score"), as azure-ai-ml names it
    assert [s.name for s in plan.steps] == ["top.inner.score", "copy"]
    result = mlpipe.run(job, runs_dir=tmp_path / "runs")
    assert result.status == "completed"
    rows = Path(result.step_outputs["top.inner.score"]["scored"]).read_text().splitlines()
    assert rows == [f"f{i}.txt: row {i}" for i in range(5)]


def test_load_component_of_a_pipeline_component_file_makes_a_pipeline_step(tmp_path: Path) -> None:
    import runpy

    project(tmp_path)
    script = tmp_path / "uses_file.py"
    script.write_text(textwrap.dedent("""\
        from mlpipe import Input, load_component, pipeline

        scoring = load_component("./inner.yml")


        @pipeline(default_compute="azureml:cpu-cluster")
        def p(folder):
            scored = scoring(data=folder, batch=3)


        job = p(folder=Input(type="uri_folder", path="./data"))
        """))
    job = runpy.run_path(str(script))["job"]
    node = job.to_dict()["jobs"]["scored"]
    assert (node["type"], node["component"]) == ("pipeline", "file:./inner.yml")
    plan = job.compile(runs_dir=tmp_path / "runs")
    assert [s.name for s in plan.steps] == ["scored.score"]
    assert plan.step("scored.score").mini_batch_size.text == "3"


def test_a_schema_problem_in_a_component_file_names_the_step_using_it(tmp_path: Path) -> None:
    source = project(tmp_path, inner=INNER.replace("    max_concurrency_per_instance: 1\n",
                                                   "    max_concurency_per_instance: 1\n"))
    inner = tmp_path / "inner.yml"
    [error] = check_pipeline(source, runs_dir=tmp_path / "runs").errors
    assert error.location is not None and error.location.file == str(inner.resolve())
    assert error.location.line == line_of(inner, "max_concurency")
    assert error.message == ("unknown key 'max_concurency_per_instance' (in component used by "
                             f"jobs.inner at {tmp_path / 'middle.yml'}:10)")
    assert error.hint == "did you mean 'max_concurrency_per_instance'?"


@pytest.mark.slow  # runs whole jobs: CI's second stage
def test_a_resumed_job_keeps_the_finished_inner_steps(tmp_path: Path) -> None:
    flag = tmp_path / "ok.flag"
    source = project(tmp_path, outer=OUTER.replace(
        "command: cp ", f"command: test -f {flag} && cp "))
    first = create(source, tmp_path / "runs", "again", cwd=tmp_path)
    assert first.proc.returncode == 1 and first.step("top.inner.score")["status"] == "completed"
    flag.write_text("")
    second = create(source, tmp_path / "runs", "again", cwd=tmp_path)
    assert second.proc.returncode == 0, second.proc.stdout + second.proc.stderr
    assert "step top.inner.score: started" not in second.proc.stdout  # kept, not run again
    assert second.step("report")["status"] == "completed"
    assert second.append_lines("top.inner.score") == [f"f{i}.txt: row {i}" for i in range(5)]


def test_steps_of_a_component_file_need_a_compute_when_the_job_has_none(tmp_path: Path) -> None:
    source = project(tmp_path, outer=OUTER.replace("settings:\n  default_compute: azureml:cpu-cluster\n",
                                                   ""))
    result = check_pipeline(source, runs_dir=tmp_path / "runs", submission=True)
    assert [(e.key_path, e.code) for e in result.errors] == [
        ("jobs.report.compute", "azure-compute"), ("jobs.score.compute", "azure-compute")]
    error = result.errors[1]
    assert error.message.startswith("step 'score' has no compute and the job has no "
                                    "settings.default_compute: Azure ML rejects this at submission")
    assert "(in pipeline component used by jobs.inner" in error.message
    assert error.location is not None and error.location.file == str(tmp_path / "inner.yml")
    assert error.location.line == line_of(tmp_path / "inner.yml", "  score:")
    local = check_pipeline(source, runs_dir=tmp_path / "runs")  # a local run does not need it
    assert local.plan is not None and [w.code for w in local.plan.warnings] == ["azure-compute"]
    (tmp_path / "inner.yml").write_text(INNER.replace("    max_concurrency_per_instance: 1\n",
                                                      "    max_concurrency_per_instance: 1\n"
                                                      "    compute: azureml:cpu-cluster\n"))
    errors = check_pipeline(source, runs_dir=tmp_path / "runs", submission=True).errors
    assert [e.key_path for e in errors] == ["jobs.report.compute"]
