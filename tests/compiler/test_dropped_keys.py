"""Keys of a component document that azure-ai-ml drops from the job it submits
(``mlpipe.schema.submission.DROPPED_COMPONENT_KEYS``): the cloud runs the step without them,
so a local run does not apply them either, and validation warns where the value belongs.

The table is checked against azure-ai-ml's own component schemas when azure-ai-ml is
installed (here or in ``MLPIPE_AZURE_AI_ML_PYTHON``): every key mlpipe's component models
accept that azure-ai-ml does not write must be in it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from mlpipe.compiler import check_pipeline, validate_component
from mlpipe.import_mirrors import real_package_installed
from mlpipe.schema.command import CommandComponent
from mlpipe.schema.parallel import ParallelComponent
from mlpipe.schema.pipeline import PipelineComponent
from mlpipe.schema.spark import SparkComponent
from mlpipe.schema.submission import DROPPED_COMPONENT_KEYS
from tests.compiler.support import line_of, make_project

DUMP = Path(__file__).with_name("dump_component_schemas.py")
MODELS = {"command": CommandComponent, "parallel": ParallelComponent,
          "spark": SparkComponent, "pipeline": PipelineComponent}

COMPONENTS = {
    "parallel": """\
type: parallel
name: scorer
inputs:
  data: {type: uri_folder}
outputs:
  out: {type: uri_folder}
input_data: ${{inputs.data}}
mini_batch_size: "1"
task:
  type: run_function
  code: ./src
  entry_script: score.py
  environment: azureml:env:1
""",
    "command": """\
type: command
name: prep
inputs:
  data: {type: uri_folder}
outputs:
  out: {type: uri_folder}
code: ./src
command: python prep.py ${{inputs.data}} ${{outputs.out}}
environment: azureml:env:1
""",
}
# the value each dropped key is written with
VALUES = {("environment_variables",): "environment_variables:\n  SEED: '1'\n  MODE: fast\n",
          ("task", "args"): "  args: --label x\n",
          ("additional_includes",): "additional_includes:\n  - ./data\n"}


def _component(kind: str, path: tuple[str, ...]) -> str:
    text = COMPONENTS[kind]
    if path == ("task", "args"):
        return text + VALUES[path]  # task is the last mapping of the component
    return text.replace("inputs:\n", VALUES[path] + "inputs:\n", 1)


CASES = [(d.path, kind) for d in DROPPED_COMPONENT_KEYS for kind in d.kinds
         if kind in COMPONENTS]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


def _pipeline(root: Path, component: str, inline: bool) -> Path:
    if inline:
        body = "    component:\n" + "".join(f"      {line}\n" for line in component.splitlines())
    else:
        (root / "comp.yml").write_text(component)
        body = "    component: ./comp.yml\n"
    path = root / "pipeline.yml"
    path.write_text("type: pipeline\nsettings: {default_compute: azureml:cpu}\njobs:\n"
                    "  step:\n    type: " + component.split("\n", 1)[0].split()[1] + "\n"
                    + body + "    inputs:\n      data: {type: uri_folder, path: ./data}\n")
    return path


@pytest.mark.parametrize("path, kind", CASES)
@pytest.mark.parametrize("where", ["file", "inline", "alone"])
def test_a_dropped_component_key_is_warned_where_it_is_written(root: Path, path: tuple[str, ...],
                                                               kind: str, where: str) -> None:
    dropped = next(d for d in DROPPED_COMPONENT_KEYS if d.path == path)
    component = _component(kind, path)
    if where == "alone":
        (root / "comp.yml").write_text(component)
        diagnostics = validate_component(root / "comp.yml")
        file, prefix = root / "comp.yml", ""
    else:
        file = _pipeline(root, component, where == "inline")
        result = check_pipeline(file, runs_dir=root / "runs")
        assert result.plan is not None, [d.format() for d in result.diagnostics]
        diagnostics = result.diagnostics
        step = result.plan.step("step")
        if path == ("environment_variables",):  # not applied: the cloud has none of them
            assert dict(step.environment_variables) == {}
        if path == ("additional_includes",):  # not in the snapshot: the cloud's has none
            assert step.additional_includes == ()
        if dropped.applied:  # a legacy spelling still read here (args: program_arguments)
            assert list(step.program_arguments) == ["--label", "x"]
        prefix = "jobs.step.component." if where == "inline" else ""
        if where == "file":
            file = root / "comp.yml"
    [warning] = [d for d in diagnostics if d.code == "dropped-key"]
    assert [d for d in diagnostics if d.severity == "error"] == []
    assert warning.severity == "warning" and warning.key_path == prefix + ".".join(path)
    assert "azure-ai-ml drops" in warning.message and "cloud runs" in warning.message
    assert warning.location is not None and Path(warning.location.file) == file
    assert warning.location.line == line_of(file, path[-1] + ":")
    if path == ("environment_variables",):
        assert "(SEED, MODE)" in warning.message and "are not applied" in warning.message
        assert "environment_variables" in (warning.hint or "")
        if where != "alone":
            assert "jobs.step.environment_variables" in (warning.hint or "")
    else:
        assert dropped.instead.split(".")[-1] in (warning.hint or "")


def test_a_steps_own_variables_are_applied_beside_its_components_dropped_ones(root: Path) -> None:
    file = _pipeline(root, _component("parallel", ("environment_variables",)), inline=False)
    file.write_text(file.read_text() + "    environment_variables: {OWN: 'on'}\n")
    plan = check_pipeline(file, runs_dir=root / "runs").plan
    assert plan is not None and dict(plan.step("step").environment_variables) == {"OWN": "on"}


def test_the_legacy_args_of_an_inline_step_are_warned_too(root: Path) -> None:
    component = _component("parallel", ("task", "args"))
    steps = "".join(f"    {line}\n" for line in component.splitlines() if not line.startswith("name"))
    path = root / "pipeline.yml"
    path.write_text("type: pipeline\nsettings: {default_compute: azureml:cpu}\njobs:\n  step:\n"
                    + steps.replace("    inputs:\n      data: {type: uri_folder}\n",
                                    "    inputs:\n      data: {type: uri_folder, path: ./data}\n"))
    result = check_pipeline(path, runs_dir=root / "runs")
    [warning] = [d for d in result.diagnostics if d.code == "dropped-key"]
    assert warning.key_path == "jobs.step.task.args" and warning.hint == \
        "rename it to program_arguments"


# keys the dump does not show for their own reasons: a component's `compute` is unknown to
# azure-ai-ml and has its own warning (schema.checks.check_component: "not used");
# `intellectual_property` is an experimental field the dump leaves out, though azure-ai-ml
# submits it (as `intellectualProperty`, entities/_component/component.py `_to_rest_object`)
OWN_WARNING_OR_SUBMITTED = frozenset({"compute", "intellectual_property"})


def _azure_python() -> str | None:
    configured = os.environ.get("MLPIPE_AZURE_AI_ML_PYTHON")
    if configured:
        return configured
    return sys.executable if real_package_installed("azure.ai.ml") else None


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _our_keys(model: type[BaseModel], depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        models = _models_in(field.annotation)
        out[field.alias or name] = _our_keys(models[0], depth + 1) if models and depth < 1 \
            else None
    return out


@pytest.mark.skipif(_azure_python() is None, reason="needs azure-ai-ml (MLPIPE_AZURE_AI_ML_PYTHON)")
def test_every_key_azure_ai_ml_does_not_submit_is_in_the_table() -> None:
    python = _azure_python()
    assert python is not None
    proc = subprocess.run([python, str(DUMP)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 0, proc.stderr
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    missing = []
    table = {(d.path, kind) for d in DROPPED_COMPONENT_KEYS for kind in d.kinds}
    for kind, model in MODELS.items():
        for key, sub in _our_keys(model).items():
            if key in OWN_WARNING_OR_SUBMITTED:
                continue
            if key not in theirs[kind]:
                missing += [] if ((key,), kind) in table else [f"{kind}: {key}"]
            elif isinstance(sub, dict) and isinstance(theirs[kind][key], dict):
                missing += [f"{kind}: {key}.{inner}" for inner in sub
                            if inner not in theirs[kind][key] and ((key, inner), kind) not in table]
    assert not missing, f"dropped by azure-ai-ml, not in DROPPED_COMPONENT_KEYS: {missing}"


# a block of a component azure-ai-ml loads whatever keys it has, the key it does not know,
# and that key's line in the component text below
LENIENT = {"command": [("distribution", "mpi_flag"), ("resources", "gpu_count")],
           "parallel": [("resources", "gpu_count"), ("retry_settings", "max_retires"),
                        ("task", "program_argument")]}
LENIENT_TEXT = {
    "command": "type: command\nname: c\ncommand: echo hi\nenvironment: azureml:env:1\n"
               "distribution:\n  type: mpi\n  mpi_flag: 1\nresources:\n  instance_count: 1\n"
               "  gpu_count: 2\n",
    "parallel": COMPONENTS["parallel"].replace("inputs:\n", "resources:\n  gpu_count: 2\n"
                                               "retry_settings:\n  max_retires: 3\ninputs:\n", 1)
    + "  program_argument: --x 1\n",
}


@pytest.mark.parametrize("kind", sorted(LENIENT))
@pytest.mark.parametrize("where", ["file", "inline"])
def test_a_key_a_lenient_block_does_not_have_is_a_warning_where_it_is_written(
        root: Path, kind: str, where: str) -> None:
    # azure-ai-ml 1.35.2: load_component / load_job accept these, _validate() passes, and the
    # submitted component has none of them; its job and node schemas refuse them ("Unknown field")
    file = _pipeline(root, LENIENT_TEXT[kind], where == "inline")
    result = check_pipeline(file, runs_dir=root / "runs")
    assert result.plan is not None, [d.format() for d in result.diagnostics]
    warnings = {d.key_path: d for d in result.diagnostics if d.code == "dropped-key"}
    prefix = "jobs.step.component." if where == "inline" else ""
    shown = file if where == "inline" else root / "comp.yml"
    assert sorted(warnings) == sorted(prefix + ".".join(p) for p in LENIENT[kind])
    for block, key in LENIENT[kind]:
        warning = warnings[f"{prefix}{block}.{key}"]
        assert warning.severity == "warning" and "leaves it out of the job" in warning.message
        assert warning.location is not None and Path(warning.location.file) == shown
        assert warning.location.line == line_of(shown, f"{key}:")
    if kind == "parallel":  # "did you mean": the names it has
        assert warnings[f"{prefix}retry_settings.max_retires"].hint == "did you mean 'max_retries'?"
