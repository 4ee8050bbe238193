"""An input bound to an upstream step's primitive output (an mldesigner function's return
value) gets that value when its step starts, in every kind of step and every text bindings
are read from: a parallel step's program_arguments and environment variables too, not only
a command (the parallel step used to get the text ``${{inputs.label}}`` itself)."""

from __future__ import annotations

from pathlib import Path

from tests.jobs.support import run_here, write

PIPELINE = """\
type: pipeline
jobs:
  first:
    type: command
    component:
      type: command
      command: printf hello > ${{outputs.value}}/output
      environment: azureml:e:1
      outputs:
        value: {type: string}
  score:
    type: parallel
    inputs:
      files: {type: uri_folder, path: ./data}
      label: ${{parent.jobs.first.outputs.value}}
    outputs:
      rows: {type: uri_file}
    input_data: ${{inputs.files}}
    mini_batch_size: "1"
    environment_variables:
      LABEL_ENV: ${{inputs.label}}
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      program_arguments: --label ${{inputs.label}}
      environment: azureml:e:1
      append_row_to: ${{outputs.rows}}
"""

SCORE = """\
import argparse, os

def init():
    global LABEL
    parser = argparse.ArgumentParser()
    parser.add_argument("--label")
    LABEL = parser.parse_known_args()[0].label

def run(mini_batch):
    return [f"{LABEL} {os.environ['LABEL_ENV']}" for _ in mini_batch]
"""


def test_a_parallel_step_reads_an_upstream_value_in_its_arguments_and_variables(
        tmp_path: Path) -> None:
    write(tmp_path / "data" / "a.txt", "a\n")
    write(tmp_path / "src" / "score.py", SCORE)
    ran = run_here(write(tmp_path / "pipeline.yml", PIPELINE), tmp_path / "runs", "values")
    assert ran.proc.returncode == 0, ran.record
    rows = tmp_path / "runs" / "values" / "score" / "outputs" / "rows" / "parallel_run_step.txt"
    assert rows.read_text().split("\n")[0] == "hello hello"
