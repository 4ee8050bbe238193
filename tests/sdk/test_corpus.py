"""Every corpus pipeline goes through the SDK unchanged: load_job keeps each key, dump round
trips, and compiling the loaded job gives the file's plan (or the file's diagnostics)."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import pytest

from mlpipe import ValidationError, load_job
from mlpipe.compiler import compile_pipeline
from mlpipe.schema import load_yaml_file

pytestmark = pytest.mark.corpus


def pipeline_paths(corpus: Path) -> list[str]:
    return re.findall(r"^\| P\d+ \| `([^`]+)`", (corpus / "MANIFEST.md").read_text(), re.M)


def outcome(action) -> object:
    try:
        return action().to_dict()
    except ValidationError as err:
        return sorted(d.format() for d in err.diagnostics)


def test_corpus_pipelines_through_the_sdk(corpus: Path, tmp_path: Path) -> None:
    paths = pipeline_paths(corpus)
    assert len(paths) == 24
    for relative in paths:
        path = corpus / relative
        job = load_job(path)
        document = job.to_dict()
        raw = load_yaml_file(path).data
        if "$schema" not in raw:
            document.pop("$schema")
        assert document == raw, relative
        dumped = tmp_path / relative.replace("/", "_")
        job.dump(dumped)
        assert load_job(dumped) == job, relative
        from_file = outcome(partial(compile_pipeline, path, runs_dir=tmp_path, job_name="c"))
        from_sdk = outcome(partial(job.compile, runs_dir=tmp_path, job_name="c"))
        assert from_sdk == from_file, relative
