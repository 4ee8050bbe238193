"""Models: every key of real pipelines accepted, unknown keys and wrong shapes rejected with
the key path, the line and a hint."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mlpipe.diagnostics import ValidationError
from mlpipe.schema import (
    CommandComponent,
    CommandNode,
    DataInput,
    LiteralInput,
    LiteralValueInput,
    ParallelComponent,
    ParallelNode,
    is_binding,
    load_component,
    load_component_data,
    load_pipeline,
    load_pipeline_data,
)
from mlpipe.schema.references import classify_reference
from mlpipe.schema.sweep import SweepNode


def write(tmp_path: Path, text: str, name: str = "doc.yml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


PARALLEL_STEP = """\
    type: parallel
    input_data: ${{inputs.data}}
    inputs:
      data: {type: mltable, path: ./data, mode: eval_mount}
    task:
      entry_script: score.py
"""


def pipeline(steps: str, top: str = "") -> str:
    return "type: pipeline\n" + top + "jobs:\n" + textwrap.indent(textwrap.dedent(steps), "  ")


def test_every_documented_key_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        $schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
        type: pipeline
        name: full_job
        display_name: Full
        description: every key
        experiment_name: exp
        tags: {a: b, n: 1}
        properties: {p: q}
        compute: azureml:cpu
        settings:
          default_compute: azureml:cpu
          default_datastore: azureml:store
          continue_on_step_failure: true
          force_rerun: false
        inputs:
          s: hello
          i: 3
          f: 0.5
          b: False
          v: {value: 7}
          lit: {type: integer, default: 3, min: 1, max: 5, optional: true}
          folder: {type: uri_folder, path: ./d, mode: ro_mount}
          file: {type: uri_file, path: https://host/x.csv, mode: download}
          table: {type: mltable, path: azureml:data:1, mode: direct}
          m1: {type: mlflow_model, path: ./m, mode: eval_download}
          m2: {type: custom_model, path: ./m}
          m3: {type: triton_model, path: ./m}
        outputs:
          o1: {type: uri_folder, mode: rw_mount}
          o2: {type: uri_file, mode: upload, path: ./out.csv}
          o3: {type: mltable, mode: mount, name: reg, version: 1}
          o4: {type: mlflow_model, mode: direct}
          o5: {type: custom_model}
          o6:
        jobs:
          prep:
            type: command
            command: python prep.py --out ${{outputs.out}}
            code: ./src
            environment: {image: python:3.11, conda_file: ./conda.yml}
            limits: {timeout: 60}
            outputs: {out: {type: uri_folder}}
          score:
            type: parallel
            display_name: Score
            compute: azureml:cpu
            inputs:
              data: ${{parent.jobs.prep.outputs.out}}
              n: ${{parent.inputs.i}}
            outputs:
              result: ${{parent.outputs.o2}}
              extra:
            input_data: ${{inputs.data}}
            mini_batch_size: "10kb"
            resources:
              instance_count: ${{parent.inputs.i}}
            max_concurrency_per_instance: 2
            retry_settings: {max_retries: 3, timeout: 30}
            error_threshold: -1
            mini_batch_error_threshold: 0
            logging_level: WARNING
            environment_variables: {FOO: bar}
            is_deterministic: true
            task:
              type: run_function
              code: ./src
              entry_script: score.py
              program_arguments: --n ${{inputs.n}}
              append_row_to: ${{outputs.result}}
              environment: azureml://registries/azureml/environments/sklearn-1.5/labels/latest
          from_file:
            type: parallel
            component: file:./score.yml
            mini_batch_size: "1"
          from_registry:
            type: command
            component: azureml://registries/azureml/components/x/labels/latest
            limits: {}
          sweep_step:
            type: sweep
            trial: ./trial.yml
            objective: {goal: maximize, primary_metric: acc}
            limits: {max_total_trials: 4}
        """)
    loaded = load_pipeline(path)
    assert loaded.errors == [], [d.format() for d in loaded.errors]
    job = loaded.model
    assert isinstance(job.jobs["score"], ParallelNode)
    assert isinstance(job.jobs["prep"], CommandNode)
    assert isinstance(job.jobs["sweep_step"], SweepNode)
    assert isinstance(job.inputs["v"], LiteralValueInput)
    assert isinstance(job.inputs["lit"], LiteralInput)
    assert isinstance(job.inputs["table"], DataInput) and job.inputs["table"].mode == "direct"
    assert job.inputs["b"] is False and job.outputs["o6"] is None
    assert job.jobs["score"].outputs["extra"] is None
    assert job.jobs["score"].resources.instance_count == "${{parent.inputs.i}}"
    assert job.jobs["from_file"].component == "file:./score.yml"
    assert loaded.warnings == []


def test_unknown_keys_get_did_you_mean_with_line(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        type: pipeline
        setings: {}
        jobs:
          s:
            type: parallel
            input_dta: ${{inputs.data}}
            inputs:
              data: {type: mltable, path: ./data}
            task:
              entry_scrip: score.py
        """)
    errors = load_pipeline(path).errors
    got = {(e.key_path, e.message, e.hint, e.location.line) for e in errors if e.code == "unknown-key"}
    assert got == {
        ("setings", "unknown key 'setings'", "did you mean 'settings'?", 2),
        ("jobs.s.input_dta", "unknown key 'input_dta'", "did you mean 'input_data'?", 6),
        ("jobs.s.task.entry_scrip", "unknown key 'entry_scrip'", "did you mean 'entry_script'?", 10),
    }


def test_unknown_key_without_close_match_lists_nothing_misleading(tmp_path: Path) -> None:
    path = write(tmp_path, "type: command\ncommand: echo\nzzz: 1\n")
    [error] = load_component(path).errors
    assert error.message == "unknown key 'zzz'" and error.location.line == 3


def test_cloud_only_keys_warn_once_per_key(tmp_path: Path) -> None:
    step = """\
        type: parallel
        input_data: ${{inputs.data}}
        inputs: {data: {type: mltable, path: ./data}}
        task: {entry_script: score.py}
        identity: {type: managed}
        resources: {instance_type: D2, shm_size: 2g, docker_args: --x, max_instance_count: 3,
                    locations: [westus], properties: {a: 1}}
        """
    steps = textwrap.indent(textwrap.dedent(step), "    ")
    path = write(tmp_path, "type: pipeline\nidentity: {type: user_identity}\njobs:\n"
                 f"  a:\n{steps}  b:\n{steps}")
    loaded = load_pipeline(path)
    assert loaded.errors == []
    warnings = {w.key_path: w.message for w in loaded.warnings}
    assert warnings == {
        "identity": "'identity' is ignored when running locally (and 2 more places)",
        "jobs.a.resources.instance_type": "'instance_type' is ignored when running locally (and 1 more place)",
        "jobs.a.resources.shm_size": "'shm_size' is ignored when running locally (and 1 more place)",
        "jobs.a.resources.docker_args": "'docker_args' is ignored when running locally (and 1 more place)",
        "jobs.a.resources.max_instance_count":
            "'max_instance_count' is ignored when running locally (and 1 more place)",
        "jobs.a.resources.locations": "'locations' is ignored when running locally (and 1 more place)",
        "jobs.a.resources.properties": "'properties' is ignored when running locally (and 1 more place)",
    }
    assert all(w.severity == "warning" and w.code == "cloud-only" for w in loaded.warnings)
    assert loaded.warnings[0].location.line == 2


def test_compute_tags_and_environments_do_not_warn(tmp_path: Path) -> None:
    path = write(tmp_path, pipeline("s:\n" + PARALLEL_STEP + "    compute: azureml:gpu\n",
                                    top="experiment_name: e\ntags: {a: b}\nsettings: "
                                        "{default_compute: azureml:serverless}\n"))
    assert load_pipeline(path).diagnostics == []


def test_step_types(tmp_path: Path) -> None:
    path = write(tmp_path, pipeline("""\
        a: {type: paralel}
        b: {command: echo}  # no type: a command step, as azure-ai-ml reads it
        c: {type: 5}
        d: [1]
        """))
    errors = load_pipeline(path).errors
    assert [(e.key_path, e.message, e.hint) for e in errors] == [
        ("jobs.a.type", "unknown step type 'paralel': must be one of parallel, command, pipeline, sweep, spark, automl, data_transfer, import",
         "did you mean 'parallel'?"),
        ("jobs.c.type", "unknown step type integer 5: must be one of parallel, command, pipeline, sweep, spark, automl, data_transfer, import", None),
        ("jobs.d", "must be a step mapping with a 'type', got a list", None),
    ]
    assert [e.location.line for e in errors] == [3, 5, 6]


def test_inline_steps_need_their_keys_component_steps_do_not(tmp_path: Path) -> None:
    path = write(tmp_path, pipeline("""\
        p: {type: parallel, mini_batch_size: "1"}
        c: {type: command, code: ./src}
        p2: {type: parallel, component: ./score.yml, mini_batch_size: "1"}
        c2: {type: command, component: azureml:cmd:1}
        p3: {type: parallel, input_data: "${{inputs.x}}", task: {type: function}}
        """))
    errors = load_pipeline(path).errors
    assert [(e.key_path, e.message, e.location.line) for e in errors] == [
        ("jobs.p.task", "required key 'task' is missing", 3),
        ("jobs.p.input_data", "required key 'input_data' is missing", 3),
        ("jobs.c.command", "required key 'command' is missing", 4),
        ("jobs.p3.task.entry_script", "required key 'entry_script' is missing", 7),
    ]


def test_inline_component_mapping_is_validated_as_a_component(tmp_path: Path) -> None:
    path = write(tmp_path, pipeline("""\
        p:
          type: parallel
          component:
            type: parallel
            input_data: ${{inputs.x}}
            inputs: {x: {type: uri_folder}}
            retry_settings: {timeout: 0}
            task: {entry_script: s.py}
          inputs: {x: ./data}
        """))
    [error] = load_pipeline(path).errors
    assert error.key_path == "jobs.p.component.retry_settings.timeout"
    assert error.message == "must be in (0, 259200], got 0" and error.location.line == 9


def test_legacy_task_keys_and_args_conflict(tmp_path: Path) -> None:
    base = """\
        type: parallel
        input_data: ${{inputs.x}}
        inputs: {x: {type: uri_folder}}
        task:
          type: function
          entry_script: s.py
          args: --a 1
        """
    assert load_component(write(tmp_path, base)).errors == []
    path = write(tmp_path, base + "  program_arguments: --b 2\n")
    [error] = load_component(path).errors
    assert error.key_path == "task.args" and "not both" in error.message and error.location.line == 7


def test_only_command_components_have_primitive_outputs(tmp_path: Path) -> None:
    """azure-ai-ml's command component schema takes PrimitiveOutputSchema outputs; a parallel
    (or pipeline) component's outputs are data only, so a primitive one is rejected at submission."""
    command = write(tmp_path, """\
        type: command
        command: echo
        outputs:
          value: {type: string}
        """)
    assert load_component(command).errors == []
    parallel = write(tmp_path, """\
        type: parallel
        input_data: ${{inputs.data}}
        inputs:
          data: {type: uri_folder}
        outputs:
          value: {type: string}
        task: {type: run_function, code: ., entry_script: score.py}
        """, "parallel.yml")
    errors = load_component(parallel).errors
    assert [(e.key_path, e.location.line) for e in errors] == [("outputs.value.type", 6)]


def test_component_inputs(tmp_path: Path) -> None:
    good = write(tmp_path, """\
        type: command
        command: echo ${{inputs.n}}
        inputs:
          n: {type: number, default: 10.99, optional: false, description: A number}
          i: {type: integer, default: 2, min: 0, max: 5}
          e: {type: string, enum: [a, b], default: a}
          p: {type: uri_folder, optional: true, mode: download}
        outputs:
          o: {type: mltable, mode: rw_mount}
        """)
    loaded = load_component(good)
    assert loaded.errors == [] and isinstance(loaded.model, CommandComponent)
    bad = write(tmp_path, """\
        type: command
        command: echo
        inputs:
          i: {type: integer, default: 2.5}
          p: {type: uri_folder, min: 1}
          q: {type: strng}
        outputs:
          o: {type: dataframe}
        """, "bad.yml")
    errors = load_component(bad).errors
    assert [(e.key_path, e.location.line) for e in errors] == [
        ("inputs.i", 4), ("inputs.p", 5), ("inputs.q.type", 6), ("outputs.o.type", 8)]
    assert errors[0].message == "default must be an integer, got number 2.5"
    assert "'min' applies only to literal inputs" in errors[1].message
    assert errors[2].hint == "did you mean 'string'?"


def test_types_and_modes_are_case_insensitive_like_azure_ai_ml(tmp_path: Path) -> None:
    path = write(tmp_path, "type: command\ncommand: echo\ninputs:\n  x: {type: URI_Folder, mode: RO_MOUNT}\n")
    loaded = load_component(path)
    assert loaded.errors == [] and loaded.model.inputs["x"].type == "uri_folder"


def test_step_inputs_and_outputs_shapes(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        type: pipeline
        jobs:
          s:
            type: parallel
            input_data: ${{inputs.data}}
            inputs:
              data: {type: mltable, path: ./data}
              bad: [1, 2]
            outputs:
              a: [x]
              b: {type: uri_file, mode: rw_mounts}
            task: {entry_script: score.py}
        """)
    errors = load_pipeline(path).errors
    assert [(e.key_path, e.message) for e in errors] == [
        ("jobs.s.inputs.bad", "must be a literal, a binding or an input mapping, got a list"),
        ("jobs.s.outputs.a", "must be a binding such as ${{parent.outputs.x}}, an output mapping, "
                             "or empty, got a list"),
        ("jobs.s.outputs.b.mode", "must be one of rw_mount, upload, mount, direct, got string "
                                  "'rw_mounts'"),
    ]


def test_environment_forms(tmp_path: Path) -> None:
    base = "type: command\ncommand: echo\nenvironment: {}\n"
    for env in ["azureml:AzureML-Minimal:2", "azureml:my-env@latest",
                "azureml://registries/azureml/environments/x/versions/1",
                "{image: python, conda_file: {dependencies: [python=3.10]}, os_type: linux}",
                "{build: {path: ./docker}}"]:
        path = write(tmp_path, base.replace("{}", env))
        assert load_component(path).errors == [], env
    path = write(tmp_path, base.replace("{}", "my-env:1"))
    [error] = load_component(path).errors
    assert error.key_path == "environment" and error.hint == "write 'azureml:my-env:1'"
    path = write(tmp_path, base.replace("{}", "{docker: {image: x}}"))
    [error] = load_component(path).errors
    assert error.message == "unknown key 'docker'"


def test_pipeline_needs_steps_and_type(tmp_path: Path) -> None:
    errors = load_pipeline(write(tmp_path, "type: pipeline\njobs: {}\n")).errors
    assert [(e.key_path, e.message) for e in errors] == [
        ("jobs", "a pipeline must declare at least one step")]
    errors = load_pipeline(write(tmp_path, "type: parallel\njobs: {a: {type: command, command: x}}\n")).errors
    assert errors[0].message == "must be 'pipeline', got string 'parallel'"
    assert errors[0].hint == "this looks like a parallel component: use 'mlpipe component validate'"
    errors = load_pipeline(write(tmp_path, "name: x\n")).errors
    assert {e.message for e in errors} == {"required key 'type' is missing",
                                           "required key 'jobs' is missing"}


def test_component_type_dispatch(tmp_path: Path) -> None:
    assert isinstance(load_component(write(tmp_path, textwrap.dedent("""\
        type: parallel
        input_data: ${{inputs.x}}
        inputs: {x: {type: mltable}}
        task: {type: run_function, entry_script: s.py}
        """))).model, ParallelComponent)
    [error] = load_component(write(tmp_path, "type: pipeline\njobs: {}\n")).errors
    assert (error.key_path, error.message) == ("jobs", "a pipeline must declare at least one step")
    [error] = load_component(write(tmp_path, "type: paralell\n")).errors
    assert error.message == ("must be one of parallel, command, pipeline, spark, data_transfer, "
                             "import, got string 'paralell'")
    assert error.hint == "did you mean 'parallel'?"
    [error] = load_component(write(tmp_path, "name: x\n")).errors
    assert (error.key_path, error.code) == ("command", "missing")  # no type: a command component
    loaded = load_component(write(tmp_path, "name: x\ncommand: echo hi\n"))
    assert loaded.errors == [] and isinstance(loaded.model, CommandComponent)
    assert loaded.model.type == "command"  # azure-ai-ml's load_component reads it so


def test_load_data_api_for_the_sdk_and_overrides() -> None:
    data = {"type": "command", "command": "echo", "environment_variables": {"A": 1}}
    loaded = load_component_data(data, "<sdk>")
    [error] = loaded.errors
    assert (error.key_path, error.location.file) == ("environment_variables.A", "<sdk>")
    with pytest.raises(ValidationError, match="environment_variables.A: must be a string"):
        loaded.raise_if_errors()
    job = load_pipeline_data({"type": "pipeline", "jobs": {"c": {"type": "command", "command": "x"}}},
                             "/abs/p.yml").raise_if_errors()
    assert job.jobs["c"].command == "x"


def test_pipeline_literal_inputs_must_fit_their_type(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        type: pipeline
        inputs:
          ok: {type: number, default: 3}
          flag: {type: boolean, default: "yes"}
          n: {type: integer, default: 2.5}
        jobs: {c: {type: command, command: x}}
        """)
    errors = load_pipeline(path).errors
    assert [(e.key_path, e.message, e.location.line) for e in errors] == [
        ("inputs.flag", "default must be true or false, got string 'yes'", 4),
        ("inputs.n", "default must be an integer, got number 2.5", 5)]


def test_data_that_is_not_a_mapping() -> None:
    [error] = load_pipeline_data(["type", "pipeline"], "<sdk>").errors  # type: ignore[arg-type]
    assert error.code == "not-a-mapping" and error.location.file == "<sdk>"
    assert error.location.line is None


def test_binding_and_reference_helpers() -> None:
    assert is_binding("${{parent.inputs.x}}") and is_binding(" $<<inputs.x>> ")
    assert not is_binding("--a ${{inputs.x}}") and not is_binding(5) and not is_binding("${data.text}")
    assert classify_reference("file:./c.yml").path == "./c.yml"
    assert classify_reference("./c.yml").kind == "file"
    assert classify_reference("azureml://registries/azureml/components/c/labels/latest").kind == "registry"
    assert classify_reference("azureml:c:1").is_remote


def test_a_key_written_one_level_too_high_says_where_it_belongs(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        type: pipeline
        jobs:
          s:
            type: parallel
            input_data: ${{inputs.d}}
            timeout: 60
            instance_count: 2
            entry_script: x.py
            task: {entry_script: s.py, image: python}
        """)
    errors = load_pipeline(path).errors
    assert [(e.key_path, e.hint, e.location.line) for e in errors] == [
        ("jobs.s.timeout", "'timeout' belongs under 'retry_settings'", 6),
        ("jobs.s.instance_count", "'instance_count' belongs under 'resources'", 7),
        ("jobs.s.entry_script", "'entry_script' belongs under 'task'", 8),
        ("jobs.s.task.image", "'image' belongs under 'environment'", 9),
    ]


def test_a_settings_key_azure_does_not_know_is_dropped_with_a_warning(tmp_path: Path) -> None:
    """azure-ai-ml keeps unknown ``settings`` keys aside and submits the job without them
    (a published pipeline misspells ``default_datastore``): a warning, the job still loads."""
    path = write(tmp_path, pipeline("s:\n" + PARALLEL_STEP,
                                    top="settings:\n  default_datestore: azureml:blob\n"
                                        "  default_compute: azureml:cpu\n"))
    loaded = load_pipeline(path)
    assert loaded.errors == [] and loaded.model is not None
    (warning,) = loaded.warnings
    assert warning.key_path == "settings.default_datestore" and warning.location.line == 3
    assert warning.message.startswith("unknown key 'default_datestore': azure-ai-ml keeps it out")
    assert warning.hint == "did you mean 'default_datastore'?"
    assert loaded.model.settings.default_compute == "azureml:cpu"
