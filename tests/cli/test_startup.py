"""A command loads what it runs: reading the command line, or validating a pipeline of
parallel and command steps, does not import the runtime, the report code or the models of
step types the file does not have (each `mlpipe` call, a pre-commit hook's included, is a
new process that pays for every import)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PROBE = """
import json, sys
from mlpipe.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith("mlpipe"))), file=sys.stderr)
"""

HEAVY = ("mlpipe.runtime.driver", "mlpipe.runtime.parallel_step", "mlpipe.jobs.report",
         "mlpipe.jobs.runner")
LATER = ("mlpipe.schema.automl", "mlpipe.schema.automl_settings", "mlpipe.schema.sweep",
         "mlpipe.schema.spark", "mlpipe.schema.data_transfer", "mlpipe.schema.import_job")


def loaded_by(*argv: str, cwd: Path = REPO) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(REPO), "PATH": ""})
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_reading_the_command_line_loads_no_compiler_runtime_or_models() -> None:
    loaded = loaded_by("job", "list", "--runs-dir", "/nonexistent-runs-folder")
    assert not loaded & {*HEAVY, *LATER, "mlpipe.compiler.pipeline", "mlpipe.schema.loader"}


def test_validating_parallel_and_command_steps_builds_no_other_step_types() -> None:
    loaded = loaded_by("job", "validate", "--file", "samples/file-batch/pipeline.yml")
    assert "mlpipe.compiler.pipeline" in loaded  # it did validate
    assert not loaded & {*HEAVY, *LATER}


def test_a_step_of_a_type_only_azure_runs_loads_its_models_and_reports_at_its_key(
        tmp_path: Path) -> None:
    path = tmp_path / "pipeline.yml"
    path.write_text("type: pipeline\n"
                    "jobs:\n"
                    "  train:\n"
                    "    type: automl\n"
                    "    task: classification\n"
                    "    primary_metric: accuracy\n"
                    "    training_data: {type: mltable, path: azureml:data:1}\n")
    proc = subprocess.run([sys.executable, "-m", "mlpipe", "job", "validate", "--file",
                           str(path)], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(REPO), "PATH": ""})
    assert proc.returncode == 1
    assert f"{path}:3:3: jobs.train.target_column_name: required key 'target_column_name' " \
           "is missing" in proc.stdout + proc.stderr
