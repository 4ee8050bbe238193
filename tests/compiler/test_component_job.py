"""A pipeline job made from a pipeline component (``component:`` instead of ``jobs:``), as
azure-ai-ml's PipelineJobSchema reads it (its own test configs ``pipeline_component_job.yml``
and ``pipeline_component_job_with_overrides.yml``): the component's steps are the job's,
under their own names; the job's inputs and outputs are the component's."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mlpipe.compiler import compile_pipeline
from mlpipe.diagnostics import ValidationError
from tests.conftest import run_cli

COMPONENT = """\
    type: pipeline
    name: pc
    inputs:
      n: {type: integer, default: 3}
      greeting: {type: string}
    outputs:
      out: {type: uri_folder}
    jobs:
      write:
        type: command
        inputs: {n: "${{parent.inputs.n}}", g: "${{parent.inputs.greeting}}"}
        outputs: {o: "${{parent.outputs.out}}"}
        component:
          command: >-
            python -c "import sys; open(sys.argv[1] + '/x.txt', 'w').write(sys.argv[2] * int(sys.argv[3]))"
            ${{outputs.o}} ${{inputs.g}} ${{inputs.n}}
          environment: azureml:env:1
          inputs: {n: {type: integer}, g: {type: string}}
          outputs: {o: {type: uri_folder}}
    """


def _job(tmp_path: Path, inputs: str, component: str = COMPONENT) -> Path:
    (tmp_path / "comps").mkdir()
    (tmp_path / "comps" / "pc.yml").write_text(textwrap.dedent(component))
    job = tmp_path / "job.yml"
    job.write_text("type: pipeline\nsettings: {default_compute: azureml:cpu}\n"
                   f"inputs:\n{inputs}component: ./comps/pc.yml\n")
    return job


def test_the_components_steps_are_the_jobs(tmp_path: Path) -> None:
    plan = compile_pipeline(_job(tmp_path, "  greeting: hi\n"), runs_dir=tmp_path / "runs")
    assert [step.name for step in plan.steps] == ["write"]  # not "<node>.write"
    step = plan.step("write")
    assert step.inputs["g"].value == "hi" and step.inputs["n"].value == 3  # the default
    assert plan.outputs["out"].path == step.outputs["o"].path


def test_the_job_runs_and_writes_the_components_output(tmp_path: Path) -> None:
    job = _job(tmp_path, "  greeting: hi\n  n: 2\n")
    proc = run_cli("job", "create", "--file", str(job), "--runs-dir", str(tmp_path / "runs"),
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    written = list((tmp_path / "runs").rglob("x.txt"))
    assert len(written) == 1 and written[0].read_text() == "hihi"
    assert written[0].parent.parent.parent.name == "write"


def test_a_component_that_is_not_a_pipeline_is_refused(tmp_path: Path) -> None:
    command = "type: command\nname: c\ncommand: echo\nenvironment: azureml:env:1\n"
    with pytest.raises(ValidationError) as info:
        compile_pipeline(_job(tmp_path, "  greeting: hi\n", command), runs_dir=tmp_path / "r")
    assert "is type 'command'" in str(info.value)


def test_a_required_component_input_the_job_leaves_out_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as info:
        compile_pipeline(_job(tmp_path, "  n: 2\n"), runs_dir=tmp_path / "runs")
    assert "greeting" in str(info.value)
