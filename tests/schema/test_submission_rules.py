"""What Azure ML rejects at submission: an error in ``job validate`` / ``component validate``,
and, for the service-only rules, one warning each in a local run (``job create``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mlpipe.compiler import check_pipeline, validate_component
from mlpipe.schema import load_component
from mlpipe.schema.submission import component_rules
from tests.compiler.support import line_of, make_project
from tests.conftest import run_cli

REJECTS = "Azure ML rejects this at submission"

COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/parallelComponent.schema.json
type: parallel
name: scorer
inputs:
  data: {type: uri_folder}
  n: {type: integer, default: 1}
outputs:
  out: {type: uri_folder}
input_data: ${{inputs.data}}
mini_batch_size: "1"
task:
  type: run_function
  code: ./src
  entry_script: score.py
  environment: azureml:env:1
"""

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
tags: {team: ml}
settings:
  default_compute: azureml:cpu-cluster
inputs:
  folder: {type: uri_folder, path: ./data}
  label: hello
jobs:
  score:
    type: parallel
    inputs:
      data: ${{parent.inputs.folder}}
      label: ${{parent.inputs.label}}
    outputs:
      out: {type: uri_folder}
    input_data: ${{inputs.data}}
    mini_batch_size: "1"
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      environment: azureml:env:1
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


def job_errors(root: Path, text: str):
    path = root / "pipeline.yml"
    path.write_text(text)
    return path, check_pipeline(path, runs_dir=root / "runs", submission=True).errors


def component_errors(root: Path, text: str):
    path = root / "comp.yml"
    path.write_text(text)
    return path, [d for d in validate_component(path) if d.severity == "error"]


def test_the_reference_files_are_clean(root: Path) -> None:
    assert job_errors(root, PIPELINE)[1] == []
    assert component_errors(root, COMPONENT)[1] == []


# (old text, new text, the line the error is on, key path, message start, hint)
COMPONENT_CASES = {
    "no name": ("name: scorer\n", "", "$schema", "name",
                "a component needs a 'name'", "add name: <lower_case_name>"),
    "upper-case name": ("name: scorer", "name: Scorer", "name: Scorer", "name",
                        "component name 'Scorer' must match ^[a-z][a-z\\d_]*$", "write 'scorer'"),
    "hyphen in name": ("name: scorer", "name: my-scorer", "name: my-scorer", "name",
                       "component name 'my-scorer' must match", "write 'my_scorer'"),
    "type Integer": ("n: {type: integer", "n: {type: Integer", "n: {type: Integer",
                     "inputs.n.type", "type 'Integer': component input and output types are "
                     "case-sensitive", "write 'integer'"),
    "no environment": ("  environment: azureml:env:1\n", "", "task:", "task.environment",
                       "a parallel task needs an 'environment'", None),
    "no task type": ("  type: run_function\n", "", "task:", "task.type",
                     "a parallel task needs a 'type'", "add type: run_function"),
    "eval_mount on uri_folder": ("data: {type: uri_folder}", "data: {type: uri_folder, "
                                 "mode: eval_mount}", "mode: eval_mount", "inputs.data.mode",
                                 "mode 'eval_mount' applies only to mltable inputs, not "
                                 "uri_folder", None),
    "tag value not a string": ("name: scorer\n", "name: scorer\ntags: {version: 3}\n",
                               "tags:", "tags.version", "tag 'version' has a int value",
                               "quote it: '3'"),
}


def check_case(path: Path, errors: list, case: tuple) -> None:
    """The one error of a rule case: its key path, message, line and hint."""
    _, _, needle, key, message, hint = case
    [error] = errors
    assert error.key_path == key and error.message.startswith(message), error.format()
    assert error.message.endswith(": " + REJECTS)
    assert error.location is not None and error.location.line == line_of(path, needle)
    if hint:
        assert error.hint == hint


@pytest.mark.parametrize("case", COMPONENT_CASES)
def test_component_rules(root: Path, case: str) -> None:
    old, new = COMPONENT_CASES[case][:2]
    assert old in COMPONENT
    check_case(*component_errors(root, COMPONENT.replace(old, new, 1)), COMPONENT_CASES[case])


PIPELINE_CASES = {
    "no compute anywhere": ("settings:\n  default_compute: azureml:cpu-cluster\n", "",
                            "  score:", "jobs.score.compute",
                            "step 'score' has no compute and there is no "
                            "settings.default_compute",
                            "set settings.default_compute: azureml:<cluster> (or 'serverless'), "
                            "or a compute on the step"),
    "default_compute without azureml:": ("default_compute: azureml:cpu-cluster",
                                         "default_compute: cpu-cluster", "default_compute",
                                         "settings.default_compute",
                                         "settings.default_compute 'cpu-cluster' is not an "
                                         "azureml: reference",
                                         "write 'azureml:cpu-cluster' (or 'serverless')"),
    "tag with a number": ("tags: {team: ml}", "tags: {team: ml, owner: 7}", "tags:",
                          "tags.owner", "tag 'owner' has a int value; tag values are strings",
                          "quote it: '7'"),
    "default_datastore without azureml:": ("  default_compute: azureml:cpu-cluster\n",
                                           "  default_compute: azureml:cpu-cluster\n"
                                           "  default_datastore: workspaceblobstore\n",
                                           "default_datastore", "settings.default_datastore",
                                           "settings.default_datastore 'workspaceblobstore' is "
                                           "not an azureml: reference",
                                           "write 'azureml:workspaceblobstore'"),
    "tag value not a string": ("tags: {team: ml}", "tags: {team: ml, nightly: true}", "tags:",
                               "tags.nightly", "tag 'nightly' has a bool value; tag values are strings",
                               "quote it: 'true'"),
    "default under a job input": ("  label: hello\n", "  label: {type: string, default: hello}\n",
                                  "label: {type: string", "inputs.label.default",
                                  "a job input takes a value; 'default' is component "
                                  "syntax", "write 'label: hello' or '{type: string, value: "
                                  "hello}'"),
    "step input written as {type, default}": (
        "      label: ${{parent.inputs.label}}\n", "      label: {type: string, default: hi}\n",
        "label: {type: string", "jobs.score.inputs.label.default",
        "a step input takes a value or a binding; {type, default} is component syntax", None),
    "step without task.environment": ("      environment: azureml:env:1\n", "", "    task:",
                                      "jobs.score.task.environment",
                                      "a parallel task needs an 'environment'", None),
    "parallel step without task.type": ("      type: run_function\n", "", "    task:",
                                        "jobs.score.task.type", "a parallel task needs a 'type'",
                                        None),
    "eval_download on uri_folder": ("path: ./data}", "path: ./data, mode: eval_download}",
                                    "eval_download", "inputs.folder.mode",
                                    "mode 'eval_download' applies only to mltable inputs", None),
    "upper-case step name": ("  score:\n", "  Score:\n", "  Score:", "jobs.Score",
                             "step name 'Score' must match ^[a-z_][a-z\\d_]*$",
                             "rename it 'score'"),
    # azure-ai-ml reads an inline step with its job schemas, whose entity takes no comment
    "comment on an inline step": ("    type: parallel\n", "    type: parallel\n    comment: hi\n",
                                  "comment: hi", "jobs.score.comment",
                                  "'comment' is taken only by a step that uses a 'component'",
                                  "remove it, or move the step's definition under "
                                  "'component:'"),
}


@pytest.mark.parametrize("case", PIPELINE_CASES)
def test_pipeline_rules(root: Path, case: str) -> None:
    old, new = PIPELINE_CASES[case][:2]
    assert old in PIPELINE
    check_case(*job_errors(root, PIPELINE.replace(old, new, 1)), PIPELINE_CASES[case])


def test_an_inline_component_without_environment(root: Path) -> None:
    inline = textwrap.indent(COMPONENT.split("\n", 1)[1].replace("name: scorer\n", "")
                             .replace("  environment: azureml:env:1\n", ""), "      ")
    text = PIPELINE.split("    type: parallel\n")[0] + "    type: parallel\n    component:\n" + inline \
        + "    inputs:\n      data: ${{parent.inputs.folder}}\n"
    path, errors = job_errors(root, text)
    [error] = errors  # an inline component needs no name
    assert error.key_path == "jobs.score.component.task.environment"
    assert error.location is not None and error.location.line == line_of(path, "      task:")


@pytest.mark.parametrize("kind, step", [
    ("command", "    type: command\n    command: echo hi\n    environment: azureml:env:1\n"),
    ("spark", "    type: spark\n    code: ./src\n    entry: {file: prep.py}\n"
              "    resources: {instance_type: standard_e4s_v3, runtime_version: '3.3'}\n"
              "    conf: {spark.driver.cores: 1, spark.driver.memory: 2g, "
              "spark.executor.cores: 1, spark.executor.memory: 2g, "
              "spark.executor.instances: 1}\n")])
def test_comment_on_any_inline_step_is_refused_and_taken_with_a_component(
        root: Path, kind: str, step: str) -> None:
    """azure-ai-ml refuses ``comment`` on every inline step (command, parallel, spark, ...)
    and sends it for a step that uses a ``component:``."""
    head = PIPELINE.split("jobs:\n")[0] + "jobs:\n  step:\n"
    path, errors = job_errors(root, head + step + "    comment: hi\n")
    assert [(e.key_path, e.code) for e in errors] == [("jobs.step.comment",
                                                       "azure-inline-comment")]
    (root / "comp.yml").write_text(COMPONENT)
    assert job_errors(root, head + "    type: parallel\n    component: ./comp.yml\n"
                      "    comment: hi\n    inputs:\n      data: ${{parent.inputs.folder}}\n")[1] == []


def test_an_inline_component_is_anonymous_its_name_is_not_checked(root: Path) -> None:
    """azure-ai-ml registers an inline component as ``azureml_anonymous``: a name that breaks
    the pattern is not refused there (a component file submitted on its own is)."""
    inline = textwrap.indent(COMPONENT.split("\n", 1)[1].replace("name: scorer", "name: My-Scorer"),
                             "      ")
    text = PIPELINE.split("    type: parallel\n")[0] + "    type: parallel\n    component:\n" \
        + inline + "    inputs:\n      data: ${{parent.inputs.folder}}\n"
    assert job_errors(root, text)[1] == []


def test_an_import_component_takes_no_inputs_or_outputs(root: Path) -> None:
    """azure-ai-ml fails on them ("got multiple values for keyword argument 'inputs'")."""
    text = ("type: import\nname: imp\nversion: 1\nsource:\n  type: {type: string, default: "
            "azuresqldb}\n  connection: {type: string}\n  query: {type: string}\n"
            "output: {type: mltable}\ninputs:\n  x: {type: string}\n")
    path, errors = component_errors(root, text)
    assert [(e.key_path, e.code) for e in errors] == [("inputs", "azure-import-ports")]


ACCEPTED = {
    "input type path": ("data: {type: uri_folder}", "data: {type: path}"),
    "mini_batch_size 0": ('mini_batch_size: "1"', 'mini_batch_size: "0"'),
    "serverless compute": ("default_compute: azureml:cpu-cluster", "default_compute: serverless"),
    "environment_variables bound to a pipeline input": (
        "    input_data:", "    environment_variables:\n      LABEL: ${{parent.inputs.label}}\n"
                          "    input_data:"),
    "step compute only": ("settings:\n  default_compute: azureml:cpu-cluster\n", ""),
}


@pytest.mark.parametrize("case", ACCEPTED)
def test_what_azure_accepts_is_accepted(root: Path, case: str) -> None:
    old, new = ACCEPTED[case]
    if case == "input type path":
        path, errors = component_errors(root, COMPONENT.replace(old, new))
        assert errors == []
        return
    text = PIPELINE.replace(old, new, 1)
    if case == "step compute only":
        text = text.replace("    type: parallel\n", "    type: parallel\n    compute: azureml:gpu\n")
    path = root / "pipeline.yml"
    path.write_text(text)
    result = check_pipeline(path, runs_dir=root / "runs", submission=True)
    assert result.diagnostics == [] and result.plan is not None
    step = result.plan.step("score")
    if case == "mini_batch_size 0":
        assert step.mini_batch_size is None  # unset: the data layer's default
    if case.startswith("environment_variables"):
        assert step.environment_variables["LABEL"] == "hello"


@pytest.mark.parametrize("key, value", [("services", "{my_jupyter: {type: jupyter_lab}}"),
                                        ("distribution", "{type: mpi}"),
                                        ("queue_settings", "{job_tier: spot}")])
def test_a_cloud_only_key_on_a_parallel_step_gets_one_verdict(root: Path, key: str,
                                                              value: str) -> None:
    path = root / "pipeline.yml"
    path.write_text(PIPELINE.replace("    input_data:", f"    {key}: {value}\n    input_data:"))
    result = check_pipeline(path, runs_dir=root / "runs", submission=True)
    [warning] = result.diagnostics
    assert warning.severity == "warning" and warning.key_path == f"jobs.score.{key}"
    assert warning.message == f"'{key}' is ignored when running locally"
    assert warning.location is not None and warning.location.line == line_of(path, key)


def test_a_local_run_warns_once_per_service_only_rule(root: Path) -> None:
    text = PIPELINE.replace("settings:\n  default_compute: azureml:cpu-cluster\n", "") \
        .replace("      environment: azureml:env:1\n", "")
    second = text.split("jobs:\n", 1)[1].replace("  score:", "  again:")
    path = root / "pipeline.yml"
    path.write_text(text + second)
    result = check_pipeline(path, runs_dir=root / "runs")
    assert result.errors == [] and result.plan is not None
    env = [d for d in result.diagnostics if d.code == "azure-environment"]
    compute = [d for d in result.diagnostics if d.code == "azure-compute"]
    assert len(env) == 1 and len(compute) == 1
    assert env[0].severity == "warning" and env[0].message.endswith("(and 1 more place)")
    assert "a local run does not need it" in env[0].message
    assert [w.code for w in result.plan.warnings].count("azure-environment") == 1
    # job validate reports each place as an error
    errors = check_pipeline(path, runs_dir=root / "runs", submission=True).errors
    assert [d.code for d in errors].count("azure-environment") == 2
    # the CLI: create runs, validate refuses
    proc = run_cli("job", "validate", str(path))
    assert proc.returncode == 1 and proc.stdout.count(REJECTS) == 4  # 2 steps: compute, env


def test_rules_that_matter_locally_stay_errors_for_a_local_run(root: Path) -> None:
    text = PIPELINE.replace("  label: hello\n", "  label: {type: string, default: hello}\n")
    path = root / "pipeline.yml"
    path.write_text(text)
    [error] = check_pipeline(path, runs_dir=root / "runs").errors
    assert error.code == "azure-input-default"


def test_eval_mode_on_a_step_input_typed_by_its_component_file(root: Path) -> None:
    (root / "comp.yml").write_text(COMPONENT)
    text = PIPELINE.split("    type: parallel\n")[0] + textwrap.indent(textwrap.dedent("""\
        type: parallel
        component: ./comp.yml
        inputs:
          data:
            path: ${{parent.inputs.folder}}
            mode: eval_mount
        """), "    ")
    path, errors = job_errors(root, text)
    [error] = errors
    assert error.key_path == "jobs.score.inputs.data"
    assert error.message == f"mode 'eval_mount' applies only to mltable inputs, not uri_folder: {REJECTS}"
    assert error.location is not None and error.location.line == line_of(path, "data:")


def test_a_referenced_component_is_anonymous_its_name_is_not_checked(root: Path) -> None:
    (root / "score.yml").write_text(COMPONENT.replace("name: scorer", "name: r-iris-example"))
    text = PIPELINE.split("    type: parallel\n")[0] + \
        "    type: parallel\n    component: ./score.yml\n" \
        "    inputs:\n      data: ${{parent.inputs.folder}}\n"
    _path, errors = job_errors(root, text)
    assert errors == []
    # submitted on its own (az ml component create), the name is checked
    [error] = component_rules(load_component(root / "score.yml").data,
                              load_component(root / "score.yml").positions, standalone=True)
    assert error.code == "azure-component-name" and error.location.line == 3


@pytest.mark.parametrize(("value", "message"), [
    ("{type: integer}", "job input 'label' is declared integer but has no value"),
    ("{type: integer, value: 3}", "a job input takes a value; a typed literal mapping "
                                  "is component syntax"),
])
def test_a_pipeline_input_is_a_value(root: Path, value: str, message: str) -> None:
    path, errors = job_errors(root, PIPELINE.replace("  label: hello\n", f"  label: {value}\n"))
    [error] = errors
    assert error.message == f"{message}: {REJECTS}" and error.code == "azure-input-value"
    assert error.location.line == line_of(path, "  label:")
    assert check_pipeline(path, runs_dir=root / "runs").errors[0].code == "azure-input-value"


def test_a_parallel_components_run_settings_are_values_not_bindings(root: Path) -> None:
    bound = COMPONENT.replace('mini_batch_size: "1"', "mini_batch_size: ${{inputs.n}}")
    assert bound != COMPONENT
    (root / "score.yml").write_text(bound)
    loaded = load_component(root / "score.yml")
    [error] = loaded.errors
    assert error.message == ("a component's mini_batch_size cannot be a binding "
                             "(${{inputs.n}}): azure-ai-ml reads it as written and rejects it")
    assert error.location.line == line_of(root / "score.yml", "mini_batch_size")


def test_a_boolean_default_of_a_true_false_string_input_is_its_text(root: Path) -> None:
    flag = COMPONENT.replace("inputs:\n", "inputs:\n  flag: {type: string, default: True, "
                                          "enum: ['True', 'False']}\n", 1)
    (root / "score.yml").write_text(flag)
    assert load_component(root / "score.yml").errors == []
    (root / "score.yml").write_text(flag.replace("enum: ['True', 'False']", "enum: [a, b]"))
    [error] = load_component(root / "score.yml").errors
    assert error.message == "default must be a string, got boolean true"
