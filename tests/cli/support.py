"""Helpers of the CLI tests: small projects with a broken entry script."""

from __future__ import annotations

from pathlib import Path

PARALLEL = """\
type: pipeline
display_name: {display_name}
inputs:
  d: {{type: uri_folder, path: ./{data}}}
jobs:
  p:
    type: parallel
    inputs:
      d: ${{{{parent.inputs.d}}}}
    outputs:
      o: {{type: uri_file}}
    input_data: ${{{{inputs.d}}}}
    mini_batch_size: "2"
    max_concurrency_per_instance: 1
    retry_settings: {{max_retries: 0, timeout: 30}}
    task:
      type: run_function
      code: ./src
      entry_script: {entry}
      append_row_to: ${{{{outputs.o}}}}
      environment: azureml:env:1
settings:
  default_compute: azureml:cpu
"""


def project(tmp_path: Path, entry: str, script: str, *, files: int = 2) -> Path:
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / entry).write_text(script, encoding="utf-8")
    data = tmp_path / ("data" if files else "empty")
    data.mkdir(exist_ok=True)
    for index in range(files):
        (data / f"f{index}.txt").write_text(f"line {index}\n", encoding="utf-8")
    source = tmp_path / f"{Path(entry).stem}.yml"
    source.write_text(PARALLEL.format(display_name=f"user {Path(entry).stem}", data=data.name,
                                      entry=entry), encoding="utf-8")
    return source
