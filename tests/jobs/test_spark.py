"""A Spark step runs where pyspark is installed: ``spark-submit --master local[*]`` with the
step's files, conf, entry and substituted args, in a snapshot of its code folder. Here a
stand-in pyspark (its ``bin/spark-submit`` records its arguments, then runs the entry file
with Python) takes the place of the real one."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from tests.conftest import REPO, run_cli

SPARK_SUBMIT = """\
#!/bin/sh
python - "$@" <<'PY'
import json, os, runpy, sys
args = sys.argv[1:]
with open(os.environ["SPARK_ARGS_FILE"], "w") as out:
    json.dump(args, out)
entry = next(a for a in args if a.endswith(".py"))
sys.argv = [entry] + args[args.index(entry) + 1:]
runpy.run_path(entry, run_name="__main__")
PY
"""

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
inputs:
  iris_data: {type: uri_file, path: ./data/iris.csv, mode: direct}
outputs:
  output: {type: uri_folder, mode: direct}
jobs:
  count_by_rows:
    type: spark
    inputs:
      file_input: ${{parent.inputs.iris_data}}
    outputs:
      output: ${{parent.outputs.output}}
    code: ./src
    entry: {file: count_by_row.py}
    py_files: [utils.zip]
    args: >-
      --file_input ${{inputs.file_input}}
      --output ${{outputs.output}}
    resources: {instance_type: Standard_E8S_V3, runtime_version: 3.4.0}
    conf:
      spark.driver.cores: 2
      spark.driver.memory: "1g"
      spark.executor.cores: 1
      spark.executor.memory: "1g"
      spark.executor.instances: 1
"""

COUNT = """\
import argparse, os
parser = argparse.ArgumentParser()
parser.add_argument("--file_input")
parser.add_argument("--output")
args = parser.parse_args()
rows = open(args.file_input).read().splitlines()
os.makedirs(args.output, exist_ok=True)
open(os.path.join(args.output, "count.txt"), "w").write(f"{len(rows)}\\n")
"""


def test_a_spark_step_runs_with_local_spark(tmp_path: Path) -> None:
    fake = tmp_path / "site" / "pyspark"
    (fake / "bin").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    submit = fake / "bin" / "spark-submit"
    submit.write_text(SPARK_SUBMIT)
    submit.chmod(submit.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "count_by_row.py").write_text(COUNT)
    (tmp_path / "src" / "utils.zip").write_bytes(b"")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "iris.csv").write_text("1,2\n3,4\n5,6\n")
    (tmp_path / "pipeline.yml").write_text(PIPELINE)
    record = tmp_path / "args.json"
    env = {"PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path / "site")]),
           "SPARK_ARGS_FILE": str(record)}
    proc = run_cli("job", "create", "--file", str(tmp_path / "pipeline.yml"), "--runs-dir",
                   str(tmp_path / "runs"), "--name", "spark-job", "--no-progress", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    args = json.loads(record.read_text())
    step_dir = tmp_path / "runs" / "spark-job" / "count_by_rows"
    assert args[:6] == ["--master", "local[*]", "--py-files", "utils.zip", "--conf",
                        "spark.driver.cores=2"]
    assert args[args.index("count_by_row.py"):] == [
        "count_by_row.py", "--file_input", str(tmp_path / "data" / "iris.csv"),
        "--output", str(step_dir / "outputs" / "output")]
    assert (step_dir / "outputs" / "output" / "count.txt").read_text() == "3\n"
    assert (step_dir / "logs" / "user" / "std_log.txt").is_file()
