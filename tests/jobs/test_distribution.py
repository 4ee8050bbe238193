"""A distributed command step (``distribution:``) runs here as rank 0 of a world of one,
with the variables Azure's launcher sets, so a published training script that reads
``os.environ["WORLD_SIZE"]`` or ``os.environ["TF_CONFIG"]`` runs as written (it used to
stop with ``KeyError: 'TF_CONFIG'``)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from mlpipe.compiler import check_pipeline
from tests.jobs.support import run_here, write

SHOW = """\
import json, os, sys
names = ["MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "NODE_RANK", "RANK", "LOCAL_RANK",
         "TF_CONFIG", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"]
with open(os.path.join(sys.argv[1], "env.json"), "w") as out:
    json.dump({n: os.environ[n] for n in names if n in os.environ}, out)
"""

STEP = """\
  {name}:
    type: command
    code: ./src
    command: python show.py ${{{{outputs.env}}}}
    environment: azureml:e:1
    outputs:
      env: {{type: uri_folder}}
{extra}"""

COMPONENT = """\
type: command
code: ./src
command: python show.py ${{outputs.env}}
environment: azureml:e:1
distribution: {type: tensorflow, worker_count: 2}
outputs:
  env: {type: uri_folder}
"""


def pipeline(tmp_path: Path) -> Path:
    write(tmp_path / "src" / "show.py", SHOW)
    write(tmp_path / "tf.yml", COMPONENT)
    steps = [
        STEP.format(name="torch", extra="    distribution: {type: pytorch, "
                                        "process_count_per_instance: 4}\n"
                                        "    resources: {instance_count: 2}\n"),
        STEP.format(name="mpi", extra="    distribution: {type: mpi}\n"),
        STEP.format(name="own", extra="    distribution: {type: pytorch}\n"
                                      "    environment_variables: {WORLD_SIZE: '8'}\n"),
        STEP.format(name="plain", extra=""),
        "  tf:\n    type: command\n    component: ./tf.yml\n",
    ]
    return write(tmp_path / "pipeline.yml", "type: pipeline\njobs:\n" + "".join(steps))


def env_of(runs: Path, step: str) -> dict[str, str]:
    found: dict[str, str] = json.loads(
        (runs / "dist" / step / "outputs" / "env" / "env.json").read_text())
    return found


def test_each_launcher_describes_a_world_of_one(tmp_path: Path) -> None:
    ran = run_here(pipeline(tmp_path), tmp_path / "runs", "dist")
    assert ran.proc.returncode == 0, ran.record
    runs = tmp_path / "runs"
    torch = env_of(runs, "torch")
    assert {k: v for k, v in torch.items() if k != "MASTER_PORT"} == {
        "MASTER_ADDR": "127.0.0.1", "WORLD_SIZE": "1", "NODE_RANK": "0", "RANK": "0",
        "LOCAL_RANK": "0"}
    port = int(torch["MASTER_PORT"])
    with socket.socket() as probe:  # a port a script's init_process_group can listen on
        probe.bind(("127.0.0.1", port))
    tf_config = json.loads(env_of(runs, "tf")["TF_CONFIG"])
    assert tf_config["task"] == {"type": "worker", "index": 0}
    [worker] = tf_config["cluster"]["worker"]
    assert worker.startswith("127.0.0.1:") and list(tf_config["cluster"]) == ["worker"]
    assert env_of(runs, "mpi") == {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1"}
    assert env_of(runs, "plain") == {}
    assert env_of(runs, "own")["WORLD_SIZE"] == "8"  # the step's own variables win


def test_the_warning_says_a_command_runs_as_one_process(tmp_path: Path) -> None:
    result = check_pipeline(pipeline(tmp_path), runs_dir=tmp_path / "runs")
    [warning] = [d for d in result.diagnostics if d.key_path == "jobs.torch.distribution"]
    assert warning.severity == "warning"
    assert warning.message == (
        "'distribution' runs here as one process (and 2 more places): rank 0 of a world "
        "of one, with the launcher's variables (WORLD_SIZE=1, RANK=0, a TF_CONFIG of one "
        "worker)")


SWEEP_JOB = """\
type: sweep
trial:
  code: ./src
  command: python show.py ${{outputs.env}} ${{search_space.lr}}
  environment: azureml:e:1
  distribution: {type: pytorch}
outputs:
  env: {type: uri_folder}
search_space:
  lr: {type: choice, values: [1]}
objective: {goal: maximize, primary_metric: acc}
limits: {max_total_trials: 1}
"""


def test_a_sweep_jobs_distributed_trial_runs_as_a_world_of_one(tmp_path: Path) -> None:
    write(tmp_path / "src" / "show.py", SHOW)
    ran = run_here(write(tmp_path / "sweep.yml", SWEEP_JOB), tmp_path / "runs", "dist")
    [env_json] = (tmp_path / "runs" / "dist").rglob("trial_*/outputs/env/env.json")
    found = json.loads(env_json.read_text())
    assert (found.get("WORLD_SIZE"), found.get("RANK")) == ("1", "0"), ran.record
