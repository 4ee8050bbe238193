"""The JSON Schemas as editors use them: on real files that keep Azure's ``$schema:`` line
(reached through the ``# yaml-language-server: $schema=`` modeline documented in
docs/schema.md), and with a wrong value reported at its own key."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from jsonschema.exceptions import best_match

from mlpipe.schema.yamlio import load_yaml_file
from tests.conftest import REPO

SCHEMA_OF_TYPE = {"pipeline": "pipeline_job", "parallel": "parallel_component",
                  "command": "command_component"}
MODELINE = re.compile(r"^# yaml-language-server: \$schema=(?P<path>\S+)$", re.M)
SAMPLES = sorted(REPO.glob("samples/*/pipeline.yml"))


def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((REPO / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def documented_modeline() -> str:
    """The modeline docs/schema.md tells users to put above Azure's ``$schema:`` line."""
    match = MODELINE.search((REPO / "docs" / "schema.md").read_text(encoding="utf-8"))
    assert match, "docs/schema.md documents no '# yaml-language-server: $schema=' line"
    return match.group(0)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.parent.name)
def test_sample_with_azures_schema_line_and_the_modeline_is_valid(sample: Path,
                                                                  tmp_path: Path) -> None:
    text = sample.read_text(encoding="utf-8")
    assert text.startswith("$schema: https://azuremlschemas")  # as Azure's files keep it
    # the file where the docs' example puts it: <repo>/pipelines/<name>.yml
    copy = tmp_path / "repo" / "pipelines" / "pipeline.yml"
    copy.parent.mkdir(parents=True)
    (tmp_path / "repo" / "schemas").symlink_to(REPO / "schemas")
    copy.write_text(documented_modeline() + "\n" + text, encoding="utf-8")
    # resolved as yaml-language-server does: relative to the YAML file's folder
    schema_path = (copy.parent / MODELINE.search(copy.read_text()).group("path")).resolve()
    assert schema_path == (REPO / "schemas" / "pipeline_job.schema.json").resolve()
    data = load_yaml_file(copy).data
    errors = [f"{list(e.absolute_path)}: {e.message}"
              for e in validator("pipeline_job").iter_errors(data)]
    assert errors == []


def _step(sample: Path) -> tuple[dict, str]:
    data = load_yaml_file(sample).data
    name = next(n for n, step in data["jobs"].items() if step["type"] == "parallel")
    return data, name


WRONG_VALUES = [
    ("mini_batch_size", 5),
    ("mini_batch_size", "5 files"),
    ("max_concurrency_per_instance", "two"),
    ("mini_batch_error_threshold", -7),
    ("logging_level", "LOUD"),
    ("retry_settings", {"max_retries": "x"}),
    ("resources", {"instance_count": 0}),
    ("input_data", 3),
]


@pytest.mark.parametrize("key,value", WRONG_VALUES, ids=[f"{k}={v!r}" for k, v in WRONG_VALUES])
def test_a_wrong_value_is_reported_at_its_key(key: str, value: object) -> None:
    data, name = _step(REPO / "samples" / "file-batch" / "pipeline.yml")
    data["jobs"][name][key] = value
    errors = list(validator("pipeline_job").iter_errors(data))
    assert errors, f"{key}: {value!r} passed the schema"
    best = best_match(errors)
    assert list(best.absolute_path)[:3] == ["jobs", name, key], (best.absolute_path, best.message)
    assert not any("Additional properties" in e.message for e in errors)


def test_a_wrong_step_type_is_reported_at_type() -> None:
    data, name = _step(REPO / "samples" / "file-batch" / "pipeline.yml")
    data["jobs"][name]["type"] = "paralel"
    (error,) = validator("pipeline_job").iter_errors(data)
    assert list(error.absolute_path) == ["jobs", name, "type"] and "'paralel'" in error.message


def test_steps_are_chosen_by_type_in_the_schema() -> None:
    schema = json.loads((REPO / "schemas" / "pipeline_job.schema.json").read_text())
    (step,) = schema["properties"]["jobs"]["patternProperties"].values()
    chosen = {tuple(choice["if"]["properties"]["type"]["enum"]): choice["then"].get("$ref")
              for choice in step["allOf"] if "properties" in choice["if"]}
    assert chosen[("parallel",)] == "#/$defs/ParallelNode"
    assert chosen[("command",)] == "#/$defs/CommandNode"
    typeless = [c["then"].get("$ref") for c in step["allOf"] if "not" in c["if"]]
    assert typeless == ["#/$defs/CommandNode"]  # a step without type is a command step
    assert "anyOf" not in step and "oneOf" not in step
