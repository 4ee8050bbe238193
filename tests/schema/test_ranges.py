"""Documented ranges of parallel settings: one accepted and one rejected value per rule,
the rejection checked for its message and its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlpipe.schema import load_pipeline
from mlpipe.schema.ranges import INT_SETTINGS, SettingError, check_setting

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
name: good_job
settings:
  default_compute: azureml:cpu
inputs:
  n: 2
jobs:
  score:
    type: parallel
    inputs:
      data: {type: uri_folder, path: ./data}
    outputs:
      out: {type: uri_file}
    input_data: ${{inputs.data}}
    mini_batch_size: "5"
    max_concurrency_per_instance: 2
    error_threshold: -1
    mini_batch_error_threshold: 5
    logging_level: INFO
    resources:
      instance_count: 2
    retry_settings:
      max_retries: 2
      timeout: 60
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      program_arguments: --out ${{outputs.out}}
      append_row_to: ${{outputs.out}}
"""


def write_variant(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    """The pipeline with line ``old`` replaced by ``new``; returns (file, line number)."""
    lines = PIPELINE.splitlines()
    index = lines.index(old)
    lines[index] = new
    path = tmp_path / "pipeline.yml"
    path.write_text("\n".join(lines) + "\n")
    return path, index + 1


def test_the_base_pipeline_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "pipeline.yml"
    path.write_text(PIPELINE)
    loaded = load_pipeline(path)
    assert loaded.diagnostics == [] and loaded.model is not None
    node = loaded.model.jobs["score"]
    assert (node.retry_settings.timeout, node.mini_batch_size, node.logging_level) == (60, "5", "INFO")


RULES = [
    # (line in PIPELINE, accepted replacement, rejected replacement, expected message)
    ('    mini_batch_size: "5"', '    mini_batch_size: "10kb"', "    mini_batch_size: 10",
     'jobs.score.mini_batch_size: must be a string such as "10", "10kb" or "1MB", got integer 10'),
    ('    mini_batch_size: "5"', '    mini_batch_size: "1MB"', '    mini_batch_size: "10 kb"',
     "jobs.score.mini_batch_size: must match ^\\d+([kKmMgG][bB])?$ (a count, or a size with kb, "
     "mb or gb), got '10 kb'"),
    ('    mini_batch_size: "5"', '    mini_batch_size: "100kB"', '    mini_batch_size: "10kbkb"',
     "jobs.score.mini_batch_size: must match"),
    ('    mini_batch_size: "5"', '    mini_batch_size: "1gb"', '    mini_batch_size: "0kb"',
     "jobs.score.mini_batch_size: must be greater than 0, got '0kb'"),
    ('    mini_batch_size: "5"', '    mini_batch_size: "0"', '    mini_batch_size: "00kb"',
     "jobs.score.mini_batch_size: must be greater than 0, got '00kb'"),
    ("      timeout: 60", "      timeout: 259200", "      timeout: -5",
     "jobs.score.retry_settings.timeout: must be in (0, 259200], got -5"),
    ("      timeout: 60", "      timeout: 1", "      timeout: 259201",
     "jobs.score.retry_settings.timeout: must be in (0, 259200], got 259201"),
    ("      max_retries: 2", "      max_retries: 0", "      max_retries: -1",
     "jobs.score.retry_settings.max_retries: must be in [0, int.max], got -1"),
    ("    error_threshold: -1", "    error_threshold: 2147483647", "    error_threshold: -2",
     "jobs.score.error_threshold: must be in [-1, int.max], got -2"),
    ("    mini_batch_error_threshold: 5", "    mini_batch_error_threshold: 0",
     "    mini_batch_error_threshold: 2147483648",
     "jobs.score.mini_batch_error_threshold: must be in [-1, int.max], got 2147483648"),
    ("      instance_count: 2", "      instance_count: 1", "      instance_count: 0",
     "jobs.score.resources.instance_count: must be in [1, int.max], got 0"),
    ("    max_concurrency_per_instance: 2", "    max_concurrency_per_instance: 1",
     "    max_concurrency_per_instance: 0",
     "jobs.score.max_concurrency_per_instance: must be in [1, int.max], got 0"),
    ("    max_concurrency_per_instance: 2", "    max_concurrency_per_instance: 2.0",
     "    max_concurrency_per_instance: 2.5",
     "jobs.score.max_concurrency_per_instance: must be a whole number, got 2.5"),
    ("    max_concurrency_per_instance: 2", '    max_concurrency_per_instance: "3"',
     "    max_concurrency_per_instance: true",
     "jobs.score.max_concurrency_per_instance: must be an integer, got boolean true"),
    ("    logging_level: INFO", "    logging_level: WARNING", "    logging_level: debug",
     "jobs.score.logging_level: must be one of DEBUG, INFO, WARNING, got string 'debug'"),
    ("  score:", "  score_2:", "  score-2:",
     "jobs.score-2: step name 'score-2' is not an identifier"),
    ("name: good_job", "name: Good-job_1", "name: my job",
     "name: must match ^[a-zA-Z0-9][a-zA-Z0-9_-]{0,254}$"),
    ('    mini_batch_size: "5"', "    partition_keys: [Store, Brand]", "    partition_keys: []",
     "jobs.score.partition_keys: must name at least one column"),
    ('    mini_batch_size: "5"', "    partition_keys: [Store]", "    partition_keys: [1]",
     "jobs.score.partition_keys: must hold column names (strings), got integer 1"),
]


@pytest.mark.parametrize("old,good,bad,message", RULES, ids=[r[2].strip() for r in RULES])
def test_rule_accepts_and_rejects(tmp_path: Path, old: str, good: str, bad: str,
                                  message: str) -> None:
    path, _ = write_variant(tmp_path, old, good)
    accepted = load_pipeline(path)
    assert accepted.errors == [], [d.format() for d in accepted.errors]

    path, line = write_variant(tmp_path, old, bad)
    rejected = load_pipeline(path)
    assert rejected.model is None
    [error] = rejected.errors
    assert f"{error.key_path}: {error.message}".startswith(message)
    assert error.location.file == str(path.resolve())
    assert error.location.line == line


@pytest.mark.parametrize("binding", ["${{parent.inputs.n}}", "'${{ parent.inputs.n }}'",
                                     "$<<inputs.n>>"])
@pytest.mark.parametrize("old", ["      timeout: 60", "    max_concurrency_per_instance: 2",
                                 "      instance_count: 2", "    mini_batch_error_threshold: 5",
                                 '    mini_batch_size: "5"', "    logging_level: INFO"])
def test_any_scalar_setting_may_be_a_binding(tmp_path: Path, old: str, binding: str) -> None:
    key = old.split(":")[0]
    path, _ = write_variant(tmp_path, old, f"{key}: {binding}")
    assert load_pipeline(path).errors == []


def test_not_a_binding_is_checked_as_a_value(tmp_path: Path) -> None:
    path, line = write_variant(tmp_path, "      timeout: 60", "      timeout: ${parent.inputs.n}")
    [error] = load_pipeline(path).errors
    assert error.message == "must be an integer, got string '${parent.inputs.n}'"
    assert error.location.line == line


def test_every_problem_is_reported_in_line_order(tmp_path: Path) -> None:
    text = PIPELINE.replace("timeout: 60", "timeout: 0").replace("max_retries: 2", "max_retries: -3")
    text = text.replace("logging_level: INFO", "logging_level: TRACE")
    path = tmp_path / "p.yml"
    path.write_text(text)
    errors = load_pipeline(path).errors
    assert [e.key_path for e in errors] == [
        "jobs.score.logging_level", "jobs.score.retry_settings.max_retries",
        "jobs.score.retry_settings.timeout"]
    assert [e.location.line for e in errors] == [20, 24, 25]


def test_range_checks_are_reusable_for_resolved_values() -> None:
    assert check_setting("retry_settings.timeout", "60") == 60
    assert check_setting("max_concurrency_per_instance", 4.0) == 4
    assert check_setting("mini_batch_size", "10KB") == "10KB"
    with pytest.raises(SettingError, match=r"must be in \(0, 259200\], got -5"):
        check_setting("retry_settings.timeout", -5)
    with pytest.raises(SettingError, match="must be a whole number, got 1.5"):
        check_setting("error_threshold", 1.5)
    with pytest.raises(SettingError, match="must be one of DEBUG, INFO, WARNING"):
        check_setting("logging_level", "INFO ")
    assert str(INT_SETTINGS["retry_settings.timeout"]) == "(0, 259200]"
