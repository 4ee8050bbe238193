"""Helpers for the tests that nothing of the user's is destroyed: small projects with a
parallel, a command or a sweep step, and a hash of every file in a tree."""

from __future__ import annotations

import hashlib
import os
import textwrap
from pathlib import Path

HEADER = ("$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json\n"
          "type: pipeline\nsettings: {default_compute: azureml:cpu-cluster}\n")

# run() returns one row per file it was given; with a file 'fail' beside the data, it fails
ENTRY = """\
import os

def init():
    pass

def run(mini_batch):
    rows = []
    for path in mini_batch:
        if os.path.exists(os.path.join(os.environ["FAIL_FLAG_DIR"], "fail")):
            raise RuntimeError("asked to fail")
        rows.append(os.path.basename(path))
    return rows
"""


def parallel_project(root: Path, *, data_path: str = "./data", files: int = 4,
                     output: str = "", external: bool = False) -> Path:
    """A pipeline of one parallel step over ``files`` text files; its append_row output
    ``rows`` (a uri_folder) at ``output`` when given. Fails while ``<root>/fail`` exists."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "score.py").write_text(ENTRY)
    (root / "data").mkdir(exist_ok=True)
    for index in range(files):
        (root / "data" / f"item_{index:02d}.txt").write_text(f"item {index}\n")
    out = f"\n        path: {output}" if output else ""
    text = HEADER + textwrap.dedent(f"""\
        jobs:
          score:
            type: parallel
            inputs:
              data: {{type: uri_folder, path: {data_path}}}
            outputs:
              rows:
                type: uri_folder{out}
            input_data: ${{{{inputs.data}}}}
            mini_batch_size: "1"
            max_concurrency_per_instance: 1
            mini_batch_error_threshold: 0
            retry_settings: {{max_retries: 0, timeout: 30}}
            environment_variables: {{FAIL_FLAG_DIR: "{root}"}}
            task:
              type: run_function
              code: ./src
              entry_script: score.py
              environment: azureml:env:1
              append_row_to: ${{{{outputs.rows}}}}
        """)
    yaml = root / "pipeline.yml"
    yaml.write_text(text)
    if external:
        (root / "mlpipe.toml").write_text("[outputs]\nallow_external = true\n")
    return yaml


TRAIN = """\
import os, sys
import mlflow

mlflow.log_metric("accuracy", 0.9)
os.makedirs(sys.argv[1], exist_ok=True)
with open(os.path.join(sys.argv[1], "model.txt"), "w") as out:
    out.write("trained\\n")
"""


def sweep_project(root: Path, output: str) -> Path:
    """A pipeline of one sweep step (one trial writing ``model.txt``), its output ``model``
    declared at ``output``."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "train.py").write_text(TRAIN)
    (root / "trial.yml").write_text(textwrap.dedent("""\
        type: command
        name: train
        inputs:
          lr: {type: number, default: 0.1}
        outputs:
          model: {type: uri_folder}
        code: ./src
        environment: azureml:env:1
        command: python train.py ${{outputs.model}} ${{inputs.lr}}
        """))
    yaml = root / "pipeline.yml"
    yaml.write_text(HEADER + textwrap.dedent(f"""\
        jobs:
          tune:
            type: sweep
            trial: ./trial.yml
            sampling_algorithm: grid
            search_space:
              lr: {{type: choice, values: [0.1]}}
            objective: {{goal: maximize, primary_metric: accuracy}}
            limits: {{max_total_trials: 1}}
            outputs:
              model:
                type: uri_folder
                path: {output}
        """))
    return yaml


def tree_hashes(root: Path, *, skip: Path | None = None) -> dict[str, str]:
    """``relative path -> sha256`` of every file below ``root`` (links: ``link:<target>``),
    leaving out the folder ``skip``."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        if skip is not None:
            dirs[:] = [d for d in dirs if Path(folder, d) != skip]
        for name in files + [d for d in dirs if Path(folder, d).is_symlink()]:
            path = Path(folder, name)
            key = str(path.relative_to(root))
            if path.is_symlink():
                found[key] = "link:" + os.readlink(path)
            else:
                found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found
