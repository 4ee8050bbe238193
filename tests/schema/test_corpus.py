"""Every pipeline and component of the acceptance corpus through the schema layer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema

from mlpipe.schema import load_component, load_pipeline
from mlpipe.schema.yamlio import load_yaml_file
from tests.conftest import REPO

ROW = re.compile(r"^\| (P\d+|PC\d+|CC\d+) \| `([^`]+)` \|[^|]*\| ([^|]*)\|", re.M)
# Rejected by the schema layer itself; the other rejections need the compiler
# (bindings, missing files), so at this layer those files must load cleanly.
SCHEMA_REJECTS = {"PC13", "P22"}
SCHEMA_FILES = {"pipeline": "pipeline_job", "parallel": "parallel_component",
                "command": "command_component"}


def manifest_rows(corpus: Path) -> list[tuple[str, Path, str]]:
    text = (corpus / "MANIFEST.md").read_text(encoding="utf-8")
    return [(ident, corpus / path, verdict.strip()) for ident, path, verdict in ROW.findall(text)]


def _load(ident: str, path: Path):
    return load_component(path) if ident.startswith(("PC", "CC")) else load_pipeline(path)


def test_manifest_lists_42_documents(corpus: Path) -> None:
    rows = manifest_rows(corpus)
    assert len(rows) == 42
    assert all(path.is_file() for _, path, _ in rows)


def test_every_document_but_the_schema_rejects_loads_without_errors(corpus: Path) -> None:
    failures = {}
    for ident, path, _ in manifest_rows(corpus):
        if ident in SCHEMA_REJECTS:
            continue
        loaded = _load(ident, path)
        if loaded.errors or loaded.model is None:
            failures[ident] = [d.format() for d in loaded.errors]
    assert failures == {}


def test_accept_documents_give_at_most_a_few_warnings(corpus: Path) -> None:
    for ident, path, verdict in manifest_rows(corpus):
        if verdict.startswith("accept"):
            loaded = _load(ident, path)
            assert len(loaded.warnings) <= 3, (ident, [d.format() for d in loaded.warnings])


def test_pc13_legacy_internal_component_is_rejected(corpus: Path) -> None:
    path = dict((i, p) for i, p, _ in manifest_rows(corpus))["PC13"]
    loaded = load_component(path)
    assert loaded.model is None
    [error] = loaded.errors
    assert error.code == "unsupported-schema"
    assert "ParallelComponent" in error.message and "legacy" in error.message
    assert error.location.line == 5 and error.key_path == "type"


def test_p22_job_name_with_a_space_is_rejected(corpus: Path) -> None:
    path = dict((i, p) for i, p, _ in manifest_rows(corpus))["P22"]
    loaded = load_pipeline(path)
    [error] = loaded.errors
    assert error.key_path == "name" and error.location.line == 3
    assert "^[a-zA-Z0-9][a-zA-Z0-9_-]{0,254}$" in error.message
    assert "'simplePipelineJobWithInlineCommandJobgit a'" in error.message


def test_accept_documents_validate_against_the_json_schemas(corpus: Path) -> None:
    validators = {
        kind: jsonschema.Draft202012Validator(
            json.loads((REPO / "schemas" / f"{name}.schema.json").read_text()))
        for kind, name in SCHEMA_FILES.items()}
    checked = 0
    for ident, path, _ in manifest_rows(corpus):
        if ident in SCHEMA_REJECTS:
            continue
        data = load_yaml_file(path).data
        errors = [e.message for e in validators[data["type"]].iter_errors(data)]
        assert errors == [], (ident, errors)
        checked += 1
    assert checked == 40


def test_p22_fails_the_json_schema_too(corpus: Path) -> None:
    path = dict((i, p) for i, p, _ in manifest_rows(corpus))["P22"]
    schema = json.loads((REPO / "schemas" / "pipeline_job.schema.json").read_text())
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(load_yaml_file(path).data))
    assert [list(e.absolute_path) for e in errors] == [["name"]]
