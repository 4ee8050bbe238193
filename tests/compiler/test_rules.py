"""Every compiler rule: an accepting case, and a rejecting case that checks message and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlpipe.compiler import compile_pipeline, validate_component
from mlpipe.diagnostics import ValidationError
from mlpipe.sizes import MiniBatchSize
from tests.compiler.support import (
    PARALLEL_STEP,
    compile_result,
    line_of,
    make_project,
    only_error,
    pipeline,
    write,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


def test_valid_parallel_step_compiles(project: Path, tmp_path: Path) -> None:
    path = pipeline(project, PARALLEL_STEP)
    result = compile_result(path, tmp_path)
    assert result.errors == [] and result.plan is not None
    step = result.plan.step("score")
    assert step.program_arguments[:2] == ("--label", "hello")
    assert step.program_arguments[3].endswith("score/outputs/result/parallel_run_step.txt")


# -- bindings name something that exists ------------------------------------------------------

def test_parent_input_binding_must_exist(project: Path, tmp_path: Path) -> None:
    jobs = PARALLEL_STEP.replace("        type: uri_folder\n        path: ./data\n",
                                 "        path: ${{parent.inputs.folder}}\n")
    good = pipeline(project, jobs, head="inputs:\n  folder:\n    type: uri_folder\n    path: ./data\n")
    assert compile_result(good, tmp_path).errors == []
    bad = pipeline(project, jobs.replace("parent.inputs.folder", "parent.inputs.foldr"),
                   head="inputs:\n  folder:\n    type: uri_folder\n    path: ./data\n", name="bad.yml")
    err = only_error(compile_result(bad, tmp_path), "names no pipeline input")
    assert "${{parent.inputs.foldr}}" in err.message and err.hint == "did you mean 'folder'?"
    assert err.location.line == line_of(bad, "parent.inputs.foldr")
    assert err.key_path == "jobs.score.inputs.data.path"


PREP = """\
  prep:
    type: command
    code: ./src
    command: python prep.py --out ${{outputs.prepared}}
    outputs:
      prepared:
        type: uri_folder
"""


def test_step_output_binding_must_exist(project: Path, tmp_path: Path) -> None:
    jobs = PREP + PARALLEL_STEP.replace("        type: uri_folder\n        path: ./data\n",
                                        "        path: ${{parent.jobs.prep.outputs.prepared}}\n")
    good = pipeline(project, jobs)
    plan = compile_result(good, tmp_path).plan
    assert plan is not None and [s.name for s in plan.steps] == ["prep", "score"]
    assert plan.step("score").inputs["data"].path == plan.step("prep").outputs["prepared"].path
    assert plan.step("score").depends_on == ("prep",)
    bad = pipeline(project, jobs.replace("outputs.prepared}}\n", "outputs.prepard}}\n"), name="bad.yml")
    err = only_error(compile_result(bad, tmp_path), "names no output of step 'prep'")
    assert err.hint == "did you mean 'prepared'?"
    assert err.location.line == line_of(bad, "parent.jobs.prep.outputs.prepard")
    bad_step = pipeline(project, jobs.replace("parent.jobs.prep.", "parent.jobs.prepp."), name="bad2.yml")
    err = only_error(compile_result(bad_step, tmp_path), "names no step")
    assert err.hint == "did you mean 'prep'?"
    assert err.location.line == line_of(bad_step, "parent.jobs.prepp")


def test_step_bindings_must_name_own_inputs_and_outputs(project: Path, tmp_path: Path) -> None:
    bad = pipeline(project, PARALLEL_STEP.replace("--label ${{inputs.label}}", "--label ${{inputs.lable}}"))
    err = only_error(compile_result(bad, tmp_path), "names no input of this step")
    assert err.hint == "did you mean 'label'?"
    assert err.location.line == line_of(bad, "program_arguments")
    assert err.key_path == "jobs.score.task.program_arguments"


def test_program_arguments_bind_only_the_steps_own_inputs(project: Path, tmp_path: Path) -> None:
    head = "inputs:\n  lbl: x\n"
    bad = pipeline(project, PARALLEL_STEP.replace("${{inputs.label}}", "${{parent.inputs.lbl}}"), head=head)
    err = only_error(compile_result(bad, tmp_path), "may bind only the step's own inputs and outputs")
    assert err.location.line == line_of(bad, "program_arguments")
    good = pipeline(project, PARALLEL_STEP.replace("label: hello", "label: ${{parent.inputs.lbl}}"),
                    head=head, name="good.yml")
    plan = compile_result(good, tmp_path).plan
    assert plan is not None and plan.step("score").program_arguments[:2] == ("--label", "x")


def test_alternative_binding_spelling(project: Path, tmp_path: Path) -> None:
    path = pipeline(project, PARALLEL_STEP.replace("${{inputs.label}}", "$<<inputs.label>>"))
    plan = compile_result(path, tmp_path).plan
    assert plan is not None and plan.step("score").program_arguments[:2] == ("--label", "hello")


def test_input_data_must_bind_a_step_input(project: Path, tmp_path: Path) -> None:
    bad = pipeline(project, PARALLEL_STEP.replace("input_data: ${{inputs.data}}", "input_data: ${{inputs.dta}}"))
    err = only_error(compile_result(bad, tmp_path), "names no input of this step")
    assert err.key_path == "jobs.score.input_data" and err.hint == "did you mean 'data'?"
    assert err.location.line == line_of(bad, "input_data:")
    literal = pipeline(project, PARALLEL_STEP.replace("input_data: ${{inputs.data}}",
                                                      "input_data: ${{inputs.label}}"), name="lit.yml")
    err = only_error(compile_result(literal, tmp_path), "must name a data input")
    assert err.location.line == line_of(literal, "input_data:")


# -- legacy node binding -------------------------------------------------------------------------

def test_legacy_node_input_binding_gets_azure_message(project: Path, tmp_path: Path) -> None:
    head = "inputs:\n  lbl: x\n"
    bad = pipeline(project, PARALLEL_STEP.replace("label: hello", "label: ${{inputs.lbl}}"), head=head)
    err = only_error(compile_result(bad, tmp_path), "has changed to")
    assert err.message == ("${{inputs.lbl}} has changed to ${{parent.inputs.lbl}}, "
                           "please change to use new format.")
    assert err.location.line == line_of(bad, "label: ${{inputs.lbl}}")


# -- cycles -------------------------------------------------------------------------------------

CYCLE = """\
  a:
    type: command
    code: ./src
    command: python prep.py ${{inputs.x}} ${{outputs.out}}
    inputs:
      x: ${{parent.jobs.b.outputs.out}}
    outputs:
      out:
        type: uri_folder
  b:
    type: command
    code: ./src
    command: python prep.py ${{inputs.x}} ${{outputs.out}}
    inputs:
      x: ${{parent.jobs.a.outputs.out}}
    outputs:
      out:
        type: uri_folder
"""


def test_cycles_are_errors(project: Path, tmp_path: Path) -> None:
    bad = pipeline(project, CYCLE)
    err = only_error(compile_result(bad, tmp_path), "steps form a cycle")
    assert "a -> b -> a" in err.message or "b -> a -> b" in err.message
    assert err.location.line in (line_of(bad, "parent.jobs.b"), line_of(bad, "parent.jobs.a"))
    good = pipeline(project, CYCLE.replace("x: ${{parent.jobs.b.outputs.out}}", "x: ./data"), name="good.yml")
    plan = compile_result(good, tmp_path).plan
    assert plan is not None and [s.name for s in plan.steps] == ["a", "b"]


def test_step_reading_its_own_output(project: Path, tmp_path: Path) -> None:
    bad = pipeline(project, CYCLE.split("  b:")[0].replace("parent.jobs.b.", "parent.jobs.a."))
    err = only_error(compile_result(bad, tmp_path), "reads its own output")
    assert err.message.startswith("step 'a' reads its own output 'out'")
    assert err.location.line == line_of(bad, "parent.jobs.a.outputs.out")


def test_order_is_stable_among_independent_steps(project: Path, tmp_path: Path) -> None:
    jobs = "".join(PREP.replace("prep:", f"{name}:") for name in ("zeta", "alpha", "mid"))
    plan = compile_result(pipeline(project, jobs), tmp_path).plan
    assert plan is not None and [s.name for s in plan.steps] == ["zeta", "alpha", "mid"]


# -- paths ----------------------------------------------------------------------------------------

def test_code_folder_and_entry_script_must_exist(project: Path, tmp_path: Path) -> None:
    bad = pipeline(project, PARALLEL_STEP.replace("code: ./src", "code: ./srcc"))
    err = only_error(compile_result(bad, tmp_path), "code folder './srcc' not found")
    assert err.location.line == line_of(bad, "code: ./srcc")
    bad = pipeline(project, PARALLEL_STEP.replace("entry_script: score.py", "entry_script: scor.py"), name="b.yml")
    err = only_error(compile_result(bad, tmp_path), "entry script 'scor.py' not found")
    assert err.hint == "did you mean 'score.py'?" and err.location.line == line_of(bad, "entry_script")


def test_input_paths_must_exist_unless_path_checks_are_off(project: Path, tmp_path: Path) -> None:
    bad = pipeline(project, PARALLEL_STEP.replace("path: ./data", "path: ./missing"))
    err = only_error(compile_result(bad, tmp_path), "input path './missing' not found")
    assert err.location.line == line_of(bad, "path: ./missing")
    assert err.key_path == "jobs.score.inputs.data.path"
    assert compile_result(bad, tmp_path, check_paths=False).errors == []


def test_component_file_must_exist(project: Path, tmp_path: Path) -> None:
    bad = pipeline(project, "  s:\n    type: parallel\n    component: file:./nope.yml\n")
    err = only_error(compile_result(bad, tmp_path), "component file 'file:./nope.yml' not found")
    assert err.location.line == line_of(bad, "component:")
    assert compile_result(bad, tmp_path, check_paths=False).errors  # never skipped


def test_missing_conda_file_is_a_warning(project: Path, tmp_path: Path) -> None:
    text = PARALLEL_STEP.replace("      environment: azureml:mlpipe-env:1\n", "      environment:\n"
                                 "        image: python:3.11\n        conda_file: ./env.yml\n")
    path = pipeline(project, text)
    result = compile_result(path, tmp_path)
    assert result.errors == [] and result.plan is not None
    warning = [d for d in result.plan.warnings if "conda_file" in d.message]
    assert warning and warning[0].location.line == line_of(path, "conda_file")
    (project / "env.yml").write_text("dependencies:\n  - pandas\n  - pip:\n    - numpy\n")
    plan = compile_result(path, tmp_path).plan
    assert plan is not None and plan.step("score").environment.conda_dependencies == ("pandas", "numpy")


# -- component steps ---------------------------------------------------------------------------

COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/parallelComponent.schema.json
type: parallel
name: scorer
inputs:
  data:
    type: uri_folder
  batch:
    type: integer
    default: 3
    min: 1
    max: 10
  colour:
    type: string
    enum: [red, blue]
    default: red
outputs:
  result:
    type: uri_folder
input_data: ${{inputs.data}}
mini_batch_size: "1"
task:
  type: run_function
  code: ./src
  entry_script: score.py
  program_arguments: --batch ${{inputs.batch}} --colour ${{inputs.colour}} --out ${{outputs.result}}
  environment: azureml:mlpipe-env:1
"""

NODE = """\
  score:
    type: parallel
    component: ./comp.yml
    inputs:
      data:
        type: uri_folder
        path: ./data
"""


def test_component_defaults_and_node_overrides(project: Path, tmp_path: Path) -> None:
    write(project, "comp.yml", COMPONENT)
    path = pipeline(project, NODE + "      batch: 7\n    mini_batch_size: \"4\"\n    logging_level: DEBUG\n")
    plan = compile_result(path, tmp_path).plan
    assert plan is not None
    step = plan.step("score")
    assert step.program_arguments[:4] == ("--batch", "7", "--colour", "red")
    assert step.mini_batch_size.text == "4" and step.logging_level == "DEBUG"
    assert step.code_dir == str((project / "src").resolve())
    assert step.inputs["batch"].value == 7 and step.inputs["colour"].value == "red"


def test_an_undeclared_step_input_or_output_is_dropped_with_a_warning(project: Path,
                                                                     tmp_path: Path) -> None:
    """azure-ai-ml drops a step's inputs and outputs its component does not declare when the
    job is submitted (the cloud step runs without them): the plan drops them too, and says so."""
    write(project, "comp.yml", COMPONENT)
    bad = pipeline(project, NODE + "      batches: 7\n    outputs:\n      extra: {type: uri_folder}\n")
    result = compile_result(bad, tmp_path)
    assert not result.errors, [d.format() for d in result.errors]
    warned = {d.key_path: d for d in result.warnings if "has no" in d.message}
    given = warned["jobs.score.inputs.batches"]
    assert given.message.startswith("component 'scorer' has no input 'batches'")
    assert "azure-ai-ml drops it" in given.message
    assert given.hint == "did you mean 'batch'?" and given.location.line == line_of(bad, "batches: 7")
    assert "component 'scorer' has no output 'extra'" in warned["jobs.score.outputs.extra"].message
    assert result.plan is not None
    step = result.plan.step("score")
    assert "batches" not in step.inputs and "extra" not in step.outputs
    assert "batches" not in " ".join(step.program_arguments)


@pytest.mark.parametrize("value, message", [
    ("abc", "must be an integer"),
    ("2.5", "must be a whole number"),
    ("11", "must be <= 10, got 11"),
    ("0", "must be >= 1, got 0"),
])
def test_literal_must_fit_the_declared_type(project: Path, tmp_path: Path, value: str, message: str) -> None:
    write(project, "comp.yml", COMPONENT)
    bad = pipeline(project, NODE + f"      batch: {value}\n")
    err = only_error(compile_result(bad, tmp_path), message)
    assert err.location.line == line_of(bad, "batch:") and err.key_path == "jobs.score.inputs.batch"


def test_literal_must_be_in_the_enum(project: Path, tmp_path: Path) -> None:
    write(project, "comp.yml", COMPONENT)
    bad = pipeline(project, NODE + "      colour: green\n")
    err = only_error(compile_result(bad, tmp_path), "must be one of red, blue")
    assert err.location.line == line_of(bad, "colour: green")
    good = pipeline(project, NODE + "      colour: blue\n", name="good.yml")
    assert compile_result(good, tmp_path).errors == []


@pytest.mark.parametrize("field, default, message", [
    ("batch", "11", "default must be <= 10, got 11"),
    ("batch", "0", "default must be >= 1, got 0"),
    ("colour", "green", "default must be one of red, blue, got 'green'"),
])
def test_a_default_outside_its_own_range(project: Path, tmp_path: Path, field: str,
                                         default: str, message: str) -> None:
    """azure-ai-ml loads a component whose default is outside its min/max/enum (its test config
    components/input_types_component.yml) and checks no value offline; the job then fails in
    the service. The component file is valid with a warning; a step that leaves the input unset
    (so runs with that default) is an error naming the step; a step that sets it is fine."""
    old = {"batch": "default: 3", "colour": "default: red"}[field]
    comp = write(project, "comp.yml", COMPONENT.replace(old, f"default: {default}"))
    alone = validate_component(comp)
    assert [d.format() for d in alone if d.severity == "error"] == []
    [warned] = [d for d in alone if d.code == "default-range"]
    assert warned.severity == "warning"
    assert warned.key_path == f"inputs.{field}.default" and message in warned.message
    assert warned.location.line == line_of(comp, f"default: {default}")
    unset = pipeline(project, NODE)
    err = only_error(compile_result(unset, tmp_path), message)
    assert err.code == "default-range" and "step 'score' leaves" in err.message
    assert err.hint == f"set jobs.score.inputs.{field}, or fix the default"
    given = {"batch": "5", "colour": "blue"}[field]
    good = pipeline(project, NODE + f"      {field}: {given}\n", name="good.yml")
    assert compile_result(good, tmp_path).errors == []


def test_required_component_input_must_be_given(project: Path, tmp_path: Path) -> None:
    write(project, "comp.yml", COMPONENT)
    bad = pipeline(project, NODE.split("    inputs:")[0])
    err = only_error(compile_result(bad, tmp_path), "required input 'data'")
    assert err.location.line == line_of(bad, "score:")


# -- run settings bound to literals ----------------------------------------------------------------

def test_bound_run_settings_are_resolved_and_range_checked(project: Path, tmp_path: Path) -> None:
    head = "inputs:\n  conc: 3\n  bad: -5\n"
    good = pipeline(project, PARALLEL_STEP + "    max_concurrency_per_instance: ${{parent.inputs.conc}}\n"
                    "    resources:\n      instance_count: ${{parent.inputs.conc}}\n", head=head)
    plan = compile_result(good, tmp_path).plan
    assert plan is not None
    assert plan.step("score").max_concurrency_per_instance == 3 and plan.step("score").instance_count == 3
    bad = pipeline(project, PARALLEL_STEP + "    retry_settings:\n      timeout: ${{parent.inputs.bad}}\n",
                   head=head, name="bad.yml")
    err = only_error(compile_result(bad, tmp_path), "must be in (0, 259200], got -5")
    assert err.message.endswith("(from ${{parent.inputs.bad}})")
    assert err.key_path == "jobs.score.retry_settings.timeout"
    assert err.location.line == line_of(bad, "timeout:")


# -- parallel settings ----------------------------------------------------------------------------

def test_partition_keys_with_mini_batch_size_warns(project: Path, tmp_path: Path) -> None:
    path = pipeline(project, PARALLEL_STEP + "    partition_keys: [a, b]\n")
    result = compile_result(path, tmp_path)
    assert result.plan is not None
    step = result.plan.step("score")
    assert step.partition_keys == ("a", "b") and step.mini_batch_size is None
    warning = [d for d in result.warnings if "partition_keys" in d.message]
    assert warning and warning[0].location.line == line_of(path, "mini_batch_size")
    assert len(warning) == 1


def test_the_plan_carries_mini_batch_size_read_once(project: Path, tmp_path: Path) -> None:
    path = pipeline(project, PARALLEL_STEP.replace('mini_batch_size: "2"', 'mini_batch_size: "10kb"')
                    .replace("type: uri_folder", "type: mltable"))
    step = compile_result(path, tmp_path).plan.step("score")
    assert step.mini_batch_size == MiniBatchSize(count=None, bytes=10 * 1024, text="10kb")
    files = compile_result(pipeline(project, PARALLEL_STEP), tmp_path).plan.step("score")
    assert (files.mini_batch_size.count, files.mini_batch_size.bytes) == (2, 2)


def test_error_threshold_falls_back_to_the_prs_flag(project: Path, tmp_path: Path) -> None:
    path = pipeline(project, PARALLEL_STEP.replace("--label ${{inputs.label}} --out",
                                                   "--error_threshold 4 --out"))
    step = compile_result(path, tmp_path).plan.step("score")
    assert step.error_threshold == 4


def test_partition_keys_must_be_a_non_empty_list_of_strings(project: Path, tmp_path: Path) -> None:
    bad = pipeline(project, PARALLEL_STEP.replace('    mini_batch_size: "2"\n', "    partition_keys: []\n"))
    result = compile_result(bad, tmp_path)
    assert [d for d in result.errors if d.key_path == "jobs.score.partition_keys"
            and d.location.line == line_of(bad, "partition_keys")]


def test_a_pipeline_needs_a_step(project: Path, tmp_path: Path) -> None:
    bad = pipeline(project, "  {}\n")
    result = compile_result(bad, tmp_path)
    assert result.errors and any("at least one" in d.message for d in result.errors)
    assert result.errors[0].location.line == line_of(bad, "jobs:")


# -- program arguments and optional parts -----------------------------------------------------------

def test_prs_flags_are_parsed_and_checked(project: Path, tmp_path: Path) -> None:
    args = ("--label ${{inputs.label}} --error_threshold 4 --allowed_failed_percent 30 "
            "--copy_logs_to_parent True --resource_monitor_interva 20 --profiling_module cProfile")
    path = pipeline(project, PARALLEL_STEP.replace("--label ${{inputs.label}} --out ${{outputs.result}}", args)
                    + "    error_threshold: 9\n")
    result = compile_result(path, tmp_path)
    assert result.plan is not None
    step = result.plan.step("score")
    assert step.error_threshold == 9  # the attribute wins
    assert not hasattr(step.prs, "error_threshold")  # one value in the plan
    assert step.prs.allowed_failed_percent == 30 and step.prs.copy_logs_to_parent is True
    assert step.prs.profiling_module == "cProfile"
    assert "--resource_monitor_interva" in step.program_arguments
    warning = [d for d in result.warnings if "--resource_monitor_interva'" in d.message]
    assert warning and warning[0].hint == "did you mean '--resource_monitor_interval'?"
    bad = pipeline(project, PARALLEL_STEP.replace("--out", "--allowed_failed_percent 130 --out"), name="b.yml")
    err = only_error(compile_result(bad, tmp_path), "--allowed_failed_percent: must be in [0, 100], got 130")
    assert err.location.line == line_of(bad, "program_arguments")


def test_optional_argument_is_dropped_when_unset(project: Path, tmp_path: Path) -> None:
    comp = COMPONENT.replace("  colour:\n    type: string\n    enum: [red, blue]\n    default: red\n",
                             "  colour:\n    type: string\n    optional: true\n")
    write(project, "comp.yml", comp.replace("--colour ${{inputs.colour}}", "$[[--colour ${{inputs.colour}}]]"))
    plan = compile_result(pipeline(project, NODE), tmp_path).plan
    assert plan is not None and "--colour" not in plan.step("score").program_arguments
    plan = compile_result(pipeline(project, NODE + "      colour: blue\n", name="p2.yml"), tmp_path).plan
    assert plan is not None and plan.step("score").program_arguments[2:4] == ("--colour", "blue")
    write(project, "comp.yml", comp)
    bad = pipeline(project, NODE, name="p3.yml")
    err = only_error(compile_result(bad, tmp_path), "input 'colour' has no value")
    assert err.location.file.endswith("comp.yml")
    assert err.location.line == line_of(project / "comp.yml", "program_arguments")


def test_command_substitutes_quoted_paths(project: Path, tmp_path: Path) -> None:
    (project / "my data").mkdir()
    jobs = PREP.replace("--out ${{outputs.prepared}}", "--in ${{inputs.src}} --count ${{inputs.count}} "
                        "--out ${{outputs.prepared}}") + "    inputs:\n      src:\n        type: uri_folder\n" \
                                                         "        path: ./my data\n      count: 3\n"
    plan = compile_result(pipeline(project, jobs), tmp_path).plan
    assert plan is not None
    command = plan.step("prep").command
    assert f"--in '{(project / 'my data').resolve()}'" in command and "--count 3 " in command


# -- outputs, templates and pipeline outputs ---------------------------------------------------------

def test_output_paths(project: Path, tmp_path: Path) -> None:
    head = "name: myjob\noutputs:\n  final:\n    type: uri_folder\n"
    jobs = PARALLEL_STEP.replace(
        "      result:\n        type: uri_file\n",
        "      result:\n        type: uri_file\n"
        "        path: azureml://datastores/${{default_datastore}}/paths/${{name}}/${{output_name}}.csv\n"
        "      extra: ${{parent.outputs.final}}\n")
    plan = compile_result(pipeline(project, jobs, head=head), tmp_path).plan
    assert plan is not None
    runs = (tmp_path / "runs").resolve()
    step = plan.step("score")
    assert plan.run_dir == str(runs / "myjob")
    # ${{name}} is the step's job name in a step's output path, as in Azure ML
    assert step.outputs["result"].path == str(runs / "datastores" / "workspaceblobstore" / "myjob_score"
                                              / "result.csv")
    assert step.outputs["extra"].path == str(runs / "myjob" / "score" / "outputs" / "extra")
    assert plan.outputs["final"].path == step.outputs["extra"].path
    assert plan.outputs["final"].source is not None and plan.outputs["final"].source.step == "score"


def test_output_template_may_use_only_known_names(project: Path, tmp_path: Path) -> None:
    jobs = PARALLEL_STEP.replace("        type: uri_file\n",
                                 "        type: uri_file\n        path: azureml://datastores/x/paths/${{nme}}/a.csv\n")
    bad = pipeline(project, jobs)
    err = only_error(compile_result(bad, tmp_path), "an output path may use only")
    assert err.location.line == line_of(bad, "${{nme}}") and err.key_path == "jobs.score.outputs.result.path"


# -- remote assets and mlpipe.toml ------------------------------------------------------------------

def test_remote_references_are_accepted_and_listed(project: Path, tmp_path: Path) -> None:
    jobs = ("  dl:\n    type: command\n    component: azureml://registries/azureml/components/dl/labels/latest\n"
            "    outputs:\n      out:\n        type: uri_folder\n"
            + PARALLEL_STEP.replace("path: ./data", "path: ${{parent.jobs.dl.outputs.out}}"))
    head = "inputs:\n  web:\n    type: uri_file\n    path: https://example.com/x.csv\n"
    path = pipeline(project, jobs, head=head)
    plan = compile_result(path, tmp_path).plan
    assert plan is not None
    assert [(r.kind, r.key_path) for r in plan.remote_assets] == [
        ("data", "inputs.web.path"), ("component", "jobs.dl.component")]
    assert plan.inputs["web"].remote == "https://example.com/x.csv"
    (project / "dl.yml").write_text("type: command\nname: dl\noutputs:\n  out:\n    type: uri_folder\n"
                                    "code: ./src\ncommand: python prep.py ${{outputs.out}}\n")
    (project / "mlpipe.toml").write_text(
        '[assets]\n"azureml://registries/azureml/components/dl/labels/latest" = "./dl.yml"\n'
        '"https://example.com/x.csv" = "./data/a.txt"\n')
    plan = compile_result(path, tmp_path).plan
    assert plan is not None and plan.remote_assets == ()
    assert plan.inputs["web"].path == str((project / "data" / "a.txt").resolve())
    assert plan.step("dl").command.startswith("python prep.py ")


# -- --set overrides -----------------------------------------------------------------------------

def test_set_overrides(project: Path, tmp_path: Path) -> None:
    path = pipeline(project, PARALLEL_STEP)
    plan = compile_pipeline(path, runs_dir=tmp_path / "r", overrides=["jobs.score.mini_batch_size=5",
                                                                      "jobs.score.inputs.label=bye"])
    assert plan.step("score").mini_batch_size.text == "5"
    assert plan.step("score").program_arguments[:2] == ("--label", "bye")
    with pytest.raises(ValidationError) as info:
        compile_pipeline(path, runs_dir=tmp_path / "r", overrides=["jobs.scor.mini_batch_size=5"])
    err = info.value.errors[0]
    assert "no key 'scor' in jobs" in err.message and err.hint == "did you mean 'score'?"
    with pytest.raises(ValidationError) as info:
        compile_pipeline(path, runs_dir=tmp_path / "r", overrides=["jobs.score.mini_batch_size=0kb"])
    assert [d for d in info.value.errors if "must be greater than 0" in d.message
            and d.location.file == "--set" and d.key_path == "jobs.score.mini_batch_size"]


# -- standalone components -------------------------------------------------------------------------

def test_component_validation(project: Path) -> None:
    good = write(project, "comp.yml", COMPONENT)
    assert [d for d in validate_component(good) if d.severity == "error"] == []
    bad = write(project, "bad.yml", COMPONENT.replace("--out ${{outputs.result}}", "--out ${{outputs.reslt}}"))
    errs = [d for d in validate_component(bad) if d.severity == "error"]
    assert len(errs) == 1 and errs[0].hint == "did you mean 'result'?"
    assert errs[0].location.line == line_of(bad, "program_arguments")


def test_step_type_must_match_its_component(project: Path, tmp_path: Path) -> None:
    write(project, "comp.yml", COMPONENT)
    bad = pipeline(project, NODE.replace("type: parallel", "type: command"))
    err = only_error(compile_result(bad, tmp_path), "the step is type 'command' but its component")
    assert err.location.line == line_of(bad, "type: command")


@pytest.mark.parametrize(("content", "says"), [
    ("{oops", "parallel_run_step.settings.json: not valid JSON"),
    ('{"append_row": {"pandas.DataFrame.to_csv": "sep=;"}}',
     "append_row.pandas.DataFrame.to_csv must be an object"),
])
def test_a_broken_settings_file_in_the_code_folder_is_a_compile_error(
        tmp_path: Path, content: str, says: str) -> None:
    root = make_project(tmp_path / "proj")
    (root / "src" / "parallel_run_step.settings.json").write_text(content)
    path = pipeline(root, PARALLEL_STEP)
    found = only_error(compile_result(path, tmp_path), says)
    assert found.location is not None and found.location.line == line_of(path, "code: ./src")
    assert found.code == "settings-file"


def test_a_valid_settings_file_compiles(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    (root / "src" / "parallel_run_step.settings.json").write_text(
        '{"append_row": {"pandas.DataFrame.to_csv": {"sep": ";"}}}')
    assert compile_result(pipeline(root, PARALLEL_STEP), tmp_path).errors == []


def test_the_plan_carries_the_settings_files_to_csv_options(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    (root / "src" / "parallel_run_step.settings.json").write_text(
        '{"append_row": {"pandas.DataFrame.to_csv": {"sep": ";", "columns": ["a", "b"]}}}')
    step = compile_result(pipeline(root, PARALLEL_STEP), tmp_path).plan.step("score")
    assert step.append_row_csv == {"sep": ";", "columns": ("a", "b")}
    hash(step)  # read-only, as every plan value


def test_a_binding_output_mapping_is_the_binding_alone(project: Path, tmp_path: Path) -> None:
    """azure-ai-ml's OutputBindingStr: ``{path: ${{parent.outputs.x}}, ...}`` without mode,
    name or version is read as the binding, every other key dropped from the submitted job:
    here too, with a warning per dropped key at its line."""
    jobs = ("  prep:\n    type: command\n    command: echo ${{outputs.o}}\n"
            "    environment: azureml:env:1\n    outputs:\n      o:\n"
            "        path: ${{parent.outputs.po}}\n        type: uri_file\n"
            "        uri: azureml://datastores/workspaceblobstore/paths/x\n")
    path = pipeline(project, jobs, head="outputs:\n  po: {type: uri_folder}\n")
    result = compile_result(path, tmp_path)
    assert result.errors == []
    dropped = {d.key_path: d for d in result.warnings if d.code == "dropped-key"}
    assert set(dropped) == {"jobs.prep.outputs.o.type", "jobs.prep.outputs.o.uri"}
    assert dropped["jobs.prep.outputs.o.uri"].location.line == line_of(path, "uri: azureml")
    assert result.plan is not None
    output = result.plan.step("prep").outputs["o"]
    assert output.type == "uri_folder" and output.path == result.plan.outputs["po"].path


@pytest.mark.parametrize("written", [
    '"${{parent.inputs.folder}}/a.txt"',                       # as dsl_pipeline/data_binding_expression
    '{type: uri_file, path: "${{parent.inputs.folder}}/a.txt"}',  # the path: form
])
def test_a_data_input_built_from_a_binding(project: Path, tmp_path: Path, written: str) -> None:
    """``component_in_file: ${{parent.inputs.folder}}/a.txt`` for a declared uri_file input:
    azure-ai-ml submits the text and the service reads it as the input's path, as it reads
    the ``path:`` form; both are the pipeline input's folder joined with the rest, checked
    like any local path."""
    comp = ("type: command\nname: c\ninputs:\n  f: {type: uri_file}\n"
            "command: cat ${{inputs.f}}\nenvironment: azureml:env:1\n")
    write(project, "comp.yml", comp)
    head = "inputs:\n  folder: {type: uri_folder, path: ./data}\n"
    jobs = f"  cat:\n    component: ./comp.yml\n    inputs:\n      f: {written}\n"
    result = compile_result(pipeline(project, jobs, head=head), tmp_path)
    assert result.errors == [], [d.format() for d in result.errors]
    assert result.plan is not None
    given = result.plan.step("cat").inputs["f"]
    assert given.type == "uri_file" and given.value is None
    assert given.path == str((project / "data" / "a.txt").resolve())
    missing = pipeline(project, jobs.replace("a.txt", "none.txt"), head=head, name="missing.yml")
    err = only_error(compile_result(missing, tmp_path), "not found")
    assert err.key_path.startswith("jobs.cat.inputs.f")


def test_the_job_name_binds_a_literal_input(project: Path, tmp_path: Path) -> None:
    """``component_in_string: ${{parent.name}}`` (dsl_pipeline/data_binding_expression/
    input_literal_meta.yml): the pipeline job's name, alone or inside a longer string."""
    jobs = ("  a:\n    type: command\n    command: echo ${{inputs.s}} ${{inputs.t}}\n"
            "    environment: azureml:env:1\n    inputs:\n      s: ${{parent.name}}\n"
            "      t: run-${{parent.name}}-x\n")
    result = compile_result(pipeline(project, jobs), tmp_path, job_name="nightly_7")
    assert result.errors == [], [d.format() for d in result.errors]
    assert result.plan is not None
    inputs = result.plan.step("a").inputs
    assert inputs["s"].value == "nightly_7" and inputs["t"].value == "run-nightly_7-x"


def test_a_key_a_component_step_does_not_have_is_passed_on(project: Path, tmp_path: Path) -> None:
    """azure-ai-ml's node schemas keep keys they do not know on a step that uses a component
    and submit them: a warning at the key (with a did-you-mean), and the plan is built."""
    write(project, "comp.yml", COMPONENT)
    path = pipeline(project, NODE + "    mini_batch_sise: 3\n")
    result = compile_result(path, tmp_path)
    assert result.errors == [], [d.format() for d in result.errors]
    [passed] = [d for d in result.warnings if d.code == "passed-key"]
    assert passed.key_path == "jobs.score.mini_batch_sise"
    assert passed.hint == "did you mean 'mini_batch_size'?"
    assert passed.location.line == line_of(path, "mini_batch_sise")
