"""An existing ``az ml`` script runs unchanged through the ``az`` that docs/running.md
makes: azureml-examples' ``cli/run-job.sh`` (create ``--query name -o tsv --set
settings.force_rerun=True``, ``show --query status -o tsv`` until a final status)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

# Azure/azureml-examples cli/run-job.sh (MIT), as published.
RUN_JOB_SH = r'''job=$1
if [[ -z "$2" ]]
  then
    if [[ "$job" =~ pipeline.yml ]]
    then
      run_id=$(az ml job create -f $job --query name -o tsv --set settings.force_rerun=True)
    else
      run_id=$(az ml job create -f $job --query name -o tsv)
    fi
  else
    experiment_name=$2
    run_id=$(az ml job create -f $job --query name -o tsv --set experiment_name=$experiment_name --set settings.force_rerun=True)
fi

if [[ -z "$3" ]]
  then
    option=$(wait)
  else
    option=$3
fi

if [[ "$option" == "nowait" ]]
then
  if [[ -z "$run_id" ]]
  then
    echo "Job creation failed"
    exit 3
  else
    az ml job show -n $run_id --query services.Studio.endpoint
    exit 0
  fi
fi

az ml job show -n $run_id

if [[ -z "$run_id" ]]
then
  echo "Job creation failed"
  exit 3
fi

status=$(az ml job show -n $run_id --query status -o tsv)

if [[ -z "$status" ]]
then
  echo "Status query failed"
  exit 4
fi

job_uri=$(az ml job show -n $run_id --query services.Studio.endpoint)

echo $job_uri

running=("Queued" "NotStarted" "Starting" "Preparing" "Running" "Finalizing")
while [[ ${running[*]} =~ $status ]]
do
  echo $job_uri
  sleep 8 
  status=$(az ml job show -n $run_id --query status -o tsv)
  echo $status
done

if [[ $status == "Completed" ]]
then
  echo "Job completed"
  exit 0
elif [[ $status == "Failed" ]]
then
  echo "Job failed"
  exit 1
else
  echo "Job not completed or failed. Status is $status"
  exit 2
fi

echo $job_uri
'''

PIPELINE = """\
type: pipeline
display_name: {name}
jobs:
  hello:
    type: command
    compute: azureml:cpu-cluster
    command: {command}
    environment: azureml:env:1
"""


def documented_az() -> str:
    """The one line of docs/running.md that makes the ``az`` wrapper."""
    text = (REPO / "docs" / "running.md").read_text(encoding="utf-8")
    (line,) = [line for line in text.splitlines() if line.startswith("mkdir -p .mlpipe-az")]
    return line


def _bash(folder: Path, script: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MLPIPE_RUNS_DIR": str(folder / "runs"), "PYTHONPATH": str(REPO),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["bash", "-c", script], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow
def test_run_job_sh_runs_unchanged_through_the_documented_az(tmp_path: Path) -> None:
    (tmp_path / "run-job.sh").write_text(RUN_JOB_SH, encoding="utf-8")
    good = tmp_path / "good"
    good.mkdir()
    (good / "pipeline.yml").write_text(PIPELINE.format(name="good", command="echo hello"))
    (tmp_path / "bad").mkdir()  # a job whose step fails
    (tmp_path / "bad" / "pipeline.yml").write_text(PIPELINE.format(name="bad", command="exit 3"))
    script = (f"{documented_az()}\nbash run-job.sh good/pipeline.yml\necho good=$?\n"
              "bash run-job.sh bad/pipeline.yml\necho bad=$?\naz group list\necho other=$?\n")
    proc = _bash(tmp_path, script)
    lines = proc.stdout.splitlines()
    assert "Job completed" in lines and "good=0" in lines, proc.stdout + proc.stderr
    assert "Job failed" in lines and "bad=1" in lines
    assert "other=2" in lines and "az group: only az ml is forwarded to mlpipe" in proc.stderr
    runs = sorted(p.name for p in (tmp_path / "runs").iterdir() if (p / "job.json").is_file())
    assert [name.split("_")[0] for name in runs] == ["bad", "good"]
    report = (tmp_path / "runs" / next(n for n in runs if n.startswith("good")) / "report.html")
    assert f'"{report.as_uri()}"' in lines  # services.Studio.endpoint, as az prints JSON
    assert "Traceback" not in proc.stderr
