"""Reading YAML: plain data, positions of keys and values, and problems as diagnostics."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlpipe.diagnostics import Location
from mlpipe.schema import load_component, load_pipeline
from mlpipe.schema.yamlio import PositionMap, format_key_path, load_yaml_file

DOC = """\
type: pipeline
jobs:
  score:
    inputs:
      flag: False
      other: yes
      count: 010
      ratio: 0.5
      n: y
    partition_keys:
      - Store
      - Brand
    program_arguments: >-
      --a 1
      --b 2
"""


def write(tmp_path: Path, text: str, name: str = "doc.yml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_plain_data_with_yaml_1_1_scalars_like_azure_ai_ml(tmp_path: Path) -> None:
    doc = load_yaml_file(write(tmp_path, DOC))
    assert doc.diagnostics == []
    inputs = doc.data["jobs"]["score"]["inputs"]
    assert inputs == {"flag": False, "other": True, "count": 8, "ratio": 0.5, "n": "y"}
    assert [type(v) for v in inputs.values()] == [bool, bool, int, float, str]
    assert doc.data["jobs"]["score"]["program_arguments"] == "--a 1 --b 2"
    assert type(doc.data["jobs"]["score"]["program_arguments"]) is str


def test_positions_of_keys_values_and_list_items(tmp_path: Path) -> None:
    path = write(tmp_path, DOC)
    pos = load_yaml_file(path).positions
    src = str(path.resolve())
    assert pos.locate(("jobs", "score", "inputs", "ratio")) == Location(src, 8, 7)
    assert pos.locate_value(("jobs", "score", "inputs", "ratio")) == Location(src, 8, 14)
    assert pos.locate(("jobs", "score", "partition_keys", 1)) == Location(src, 12, 9)
    # unknown paths fall back to the nearest known ancestor
    assert pos.locate(("jobs", "score", "inputs", "nope", "deeper")) == Location(src, 4, 5)
    assert pos.locate(("nothing",)) == Location(src, 1, 1)
    assert format_key_path(("jobs", "score", "partition_keys", 1)) == "jobs.score.partition_keys[1]"


def test_positions_can_be_rebased_under_a_prefix() -> None:
    pos = PositionMap("f.yml", keys={("a",): Location("f.yml", 2, 1)})
    assert pos.rebased(("jobs", "x")).locate(("jobs", "x", "a")) == Location("f.yml", 2, 1)


@pytest.mark.parametrize("text,code,line,fragment", [
    ("type: pipeline\njobs: [a\n", "yaml-syntax", 3, "invalid YAML"),
    ("type: pipeline\nname: a\nname: b\n", "duplicate-key", 3,
     "duplicate key 'name' (first written on line 2)"),
    ("", "empty-file", 1, "the file is empty"),
    ("# only a comment\n", "empty-file", 1, "the file is empty"),
    ("- a\n- b\n", "not-a-mapping", 1, "must be a mapping of keys to values, got a list"),
    ("just text\n", "not-a-mapping", 1, "got string 'just text'"),
    ("a: 1\n---\nb: 2\n", "yaml-syntax", 2, "expected a single YAML document"),
    ("type: pipeline\n1: x\n", None, None, None),
    ("type: pipeline\nx: !Ref y\n", "yaml-tag", 2, "unsupported YAML tag '!Ref'"),
    ("type: pipeline\non: x\n", "type", 2, "the key 'on' is read as boolean true"),
    ("a: &x [1, *x]\n", "yaml-syntax", 1, "an alias refers to the mapping or list that contains it"),
    ("a: {[1]: 2}\n", "type", 1, "mapping keys must be plain scalars"),
    ("type: pipeline\n\tname: x\n", "yaml-syntax", 2, "invalid YAML"),
])
def test_bad_yaml_is_a_diagnostic_with_a_line(tmp_path: Path, text: str, code: str | None,
                                              line: int | None, fragment: str | None) -> None:
    doc = load_yaml_file(write(tmp_path, text))
    if code is None:  # a non-string key is read as its text
        assert doc.diagnostics == [] and doc.data == {"type": "pipeline", "1": "x"}
        return
    [diag] = doc.diagnostics
    assert diag.code == code and fragment in diag.message
    assert diag.location.line == line


def test_merge_keys_and_anchors(tmp_path: Path) -> None:
    doc = load_yaml_file(write(tmp_path, """\
defaults: &retry {max_retries: 2, timeout: 60}
jobs:
  a:
    retry_settings:
      <<: *retry
      timeout: 30
"""))
    assert doc.diagnostics == []
    assert doc.data["jobs"]["a"]["retry_settings"] == {"timeout": 30, "max_retries": 2}
    assert doc.positions.locate(("jobs", "a", "retry_settings", "timeout")).line == 6
    assert doc.positions.locate(("jobs", "a", "retry_settings", "max_retries")).line == 1


def test_unreadable_files(tmp_path: Path) -> None:
    missing = load_pipeline(tmp_path / "nope.yml")
    assert missing.model is None and missing.errors[0].code == "unreadable"
    assert missing.errors[0].message == "file not found"
    folder = load_component(tmp_path)
    assert folder.errors[0].message == "is a folder, not a YAML file"
    binary = write(tmp_path, "", "bin.yml")
    binary.write_bytes(b"\xff\xfe\x00bad")
    assert load_pipeline(binary).errors[0].code == "unreadable"


def test_source_is_the_absolute_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "type: command\ncommand: echo\n", "c.yml")
    monkeypatch.chdir(tmp_path)
    loaded = load_component("c.yml")
    assert loaded.source == str((tmp_path / "c.yml").resolve())
    assert loaded.errors == [] and loaded.data == {"type": "command", "command": "echo"}
