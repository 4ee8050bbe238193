"""JSON Schemas: generated from the models, checked in, and usable by a JSON validator."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from mlpipe.schema.export import SCHEMAS, build_schema, render_schema
from tests.conftest import REPO, run_cli


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_checked_in_schema_is_up_to_date(name: str) -> None:
    checked_in = (REPO / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8")
    assert checked_in == render_schema(name), (
        f"schemas/{name}.schema.json is stale: run 'python -m mlpipe schema export'")


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_is_a_valid_draft_2020_12_schema_with_help(name: str) -> None:
    schema = build_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"] == f"urn:mlpipe:schema:{name}" and schema["title"]
    text = json.dumps(schema)
    assert '"description"' in text and '"oneOf"' not in text


def test_cli_export_writes_a_file_per_document_kind(tmp_path: Path) -> None:
    result = run_cli("schema", "export", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["command_component.schema.json", "data_transfer_component.schema.json",
                       "import_component.schema.json", "parallel_component.schema.json",
                       "pipeline_component.schema.json", "pipeline_job.schema.json",
                       "spark_component.schema.json"]
    for name in written:
        assert (tmp_path / "out" / name).read_text() == (REPO / "schemas" / name).read_text()
    assert result.stdout.count("wrote ") == 7


def test_cli_check_reports_stale_files(tmp_path: Path) -> None:
    assert run_cli("schema", "export", "--check", "--out", str(REPO / "schemas")).returncode == 0
    result = run_cli("schema", "export", "--check", "--out", str(tmp_path))
    assert result.returncode == 1 and result.stderr.count("missing or stale") == 7
    assert list(tmp_path.iterdir()) == []


def test_cli_export_to_an_unwritable_place_fails_cleanly(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = run_cli("schema", "export", "--out", str(blocker / "sub"))
    assert result.returncode == 1
    assert "cannot write schemas" in result.stderr and "Traceback" not in result.stderr


GOOD_STEP = {"type": "parallel", "input_data": "${{inputs.d}}",
             "inputs": {"d": {"type": "uri_folder", "path": "./d"}},
             "mini_batch_size": "10kb", "retry_settings": {"timeout": 60},
             "task": {"type": "run_function", "entry_script": "s.py"}}


def _pipeline(**step_changes: object) -> dict:
    return {"type": "pipeline", "jobs": {"score": {**GOOD_STEP, **step_changes}}}


@pytest.mark.parametrize("document,valid", [
    (_pipeline(), True),
    (_pipeline(max_concurrency_per_instance="${{parent.inputs.n}}"), True),
    (_pipeline(retry_settings={"timeout": -5}), False),
    (_pipeline(retry_settings={"timeout": 259201}), False),
    (_pipeline(mini_batch_size="10 kb"), False),
    (_pipeline(mini_batch_size=10), False),
    (_pipeline(logging_level="debug"), False),
    (_pipeline(max_concurrency_per_instance=0), False),
    (_pipeline(error_threshold=-2), False),
    (_pipeline(input_dta="x"), False),
    (_pipeline(type="paralel"), False),
    ({"type": "pipeline", "jobs": {"bad-name": GOOD_STEP}}, False),
    ({"type": "pipeline", "jobs": {}}, False),
    ({"type": "pipeline", "name": "has space", "jobs": {"s": GOOD_STEP}}, False),
])
def test_json_schema_agrees_with_the_models(document: dict, valid: bool) -> None:
    from mlpipe.schema import load_pipeline_data

    validator = jsonschema.Draft202012Validator(
        json.loads((REPO / "schemas" / "pipeline_job.schema.json").read_text()))
    assert validator.is_valid(document) is valid
    assert load_pipeline_data(document, "<test>").ok is valid
