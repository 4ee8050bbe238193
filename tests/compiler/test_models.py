"""The compiler reads the validated models (values as the models normalise them), and the
parts of a broken file that validated: one message per problem, from the layer that owns it."""

from __future__ import annotations

from pathlib import Path

from mlpipe.compiler import check_pipeline
from mlpipe.schema import load_pipeline
from mlpipe.schema.parts import INVALID, Partial, part, validate_parts
from mlpipe.schema.pipeline import PipelineJob
from tests.compiler.support import PARALLEL_STEP, make_project, pipeline


def test_values_arrive_as_the_models_normalise_them(tmp_path: Path) -> None:
    """``type``/``mode`` are case-insensitive in the models; the plan holds their canonical
    spelling, so reading the YAML data again would show up here."""
    jobs = (PARALLEL_STEP.replace("type: uri_folder", "type: URI_FOLDER\n        mode: RO_Mount")
            .replace("type: uri_file", "type: Uri_File"))
    head = "display_name: shown\nsettings:\n  default_compute: azureml:cpu\n  force_rerun: true\n"
    result = check_pipeline(pipeline(make_project(tmp_path), jobs, head=head))
    assert result.plan is not None, result.diagnostics
    step = result.plan.steps[0]
    assert step.inputs["data"].type == "uri_folder"
    assert step.inputs["data"].mode == "ro_mount"
    assert step.outputs["result"].type == "uri_file"
    assert result.plan.display_name == "shown"
    assert result.plan.settings.force_rerun is True
    assert result.plan.settings.default_compute == "azureml:cpu"


def test_a_value_the_schema_rejected_is_reported_once(tmp_path: Path) -> None:
    jobs = PARALLEL_STEP.replace("        type: uri_file\n", "").replace(
        "      result:\n", "      result: 5\n").replace("code: ./src", "code: ./nowhere")
    result = check_pipeline(pipeline(make_project(tmp_path), jobs))
    at_output = [d for d in result.diagnostics if d.key_path == "jobs.score.outputs.result"]
    assert len(at_output) == 1 and at_output[0].severity == "error"
    assert "got <invalid>" not in str(result.diagnostics)
    # the rest of the step is still compiled: its other problems are found in the same run
    assert any(d.key_path == "jobs.score.task.code" and "not found" in d.message
               for d in result.diagnostics)


def test_a_step_of_no_known_type_is_skipped_not_rechecked(tmp_path: Path) -> None:
    jobs = PARALLEL_STEP.replace("    type: parallel\n", "    type: paralel\n", 1) + """\
  after:
    type: command
    command: cat ${{inputs.x}}
    inputs:
      x: ${{parent.jobs.score.outputs.result}}
    environment: azureml:mlpipe-env:1
"""
    result = check_pipeline(pipeline(make_project(tmp_path), jobs))
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert [d.key_path for d in errors] == ["jobs.score.type"], errors


def test_the_parts_of_a_document_that_validate(tmp_path: Path) -> None:
    path = pipeline(make_project(tmp_path), PARALLEL_STEP.replace('"2"', "[2]"),
                    head="display_name: [not, text]\nexperiment_name: exp\n")
    loaded = load_pipeline(path)
    assert loaded.model is None
    assert isinstance(loaded.parts, Partial)
    assert part(loaded.parts, "display_name") is INVALID
    assert part(loaded.parts, "experiment_name") == "exp"
    assert part(loaded.parts, "jobs", "score", "mini_batch_size") is INVALID
    assert part(loaded.parts, "jobs", "score", "task", "entry_script") == "score.py"
    assert validate_parts(PipelineJob, loaded.data) == loaded.parts
