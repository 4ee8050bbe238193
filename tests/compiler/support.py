"""Small pipeline projects written to a temporary folder for the compiler tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

from mlpipe.compiler import check_pipeline
from mlpipe.compiler.pipeline import CompileResult
from mlpipe.diagnostics import Diagnostic

PARALLEL_STEP = """\
  score:
    type: parallel
    inputs:
      data:
        type: uri_folder
        path: ./data
      label: hello
    outputs:
      result:
        type: uri_file
    input_data: ${{inputs.data}}
    mini_batch_size: "2"
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      program_arguments: --label ${{inputs.label}} --out ${{outputs.result}}
      append_row_to: ${{outputs.result}}
      environment: azureml:mlpipe-env:1
"""


def make_project(root: Path) -> Path:
    """``src/score.py``, ``src/prep.py`` and ``data/a.txt`` under ``root``."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "score.py").write_text("def init():\n    pass\n\ndef run(batch):\n    return batch\n")
    (root / "src" / "prep.py").write_text("print('prep')\n")
    (root / "data").mkdir(exist_ok=True)
    (root / "data" / "a.txt").write_text("a\n")
    return root


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.write_text(textwrap.dedent(text))
    return path


def pipeline(root: Path, jobs: str, head: str = "", name: str = "pipeline.yml") -> Path:
    """A pipeline file with ``head`` (top-level keys) and ``jobs`` (already indented by 2).

    Like a file Azure ML accepts, it names a compute: ``settings.default_compute`` is added
    at the end unless ``head`` has ``settings`` or a compute.
    """
    body = "$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json\ntype: pipeline\n"
    body += textwrap.dedent(head) + "jobs:\n" + jobs
    if "settings:" not in head and "compute" not in head:
        body += "settings:\n  default_compute: azureml:cpu-cluster\n"
    path = root / name
    path.write_text(body)
    return path


def line_of(path: Path, needle: str, occurrence: int = 1) -> int:
    """The 1-based line of the ``occurrence``-th line containing ``needle``."""
    seen = 0
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if needle in line:
            seen += 1
            if seen == occurrence:
                return number
    raise AssertionError(f"{needle!r} not in {path}")


def compile_result(path: Path, tmp: Path, **kwargs: object) -> CompileResult:
    return check_pipeline(path, runs_dir=tmp / "runs", **kwargs)  # type: ignore[arg-type]


def errors(result: CompileResult) -> list[Diagnostic]:
    return result.errors


def only_error(result: CompileResult, contains: str) -> Diagnostic:
    """The one error whose message contains ``contains``."""
    found = [d for d in result.errors if contains in d.message]
    assert len(found) == 1, [d.format() for d in result.diagnostics]
    return found[0]
