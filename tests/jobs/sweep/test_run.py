"""A sweep step runs here: its trials over the search space (random and grid), one stopped
early by a bandit policy, the best trial's outputs as the step's outputs, a downstream step
reading them, and the trials' metrics table in the step's logs."""

from __future__ import annotations

import csv
import textwrap
from pathlib import Path

import pytest

from mlpipe.jobs.sweep.sampling import suggest
from mlpipe.plan import SearchParam
from tests.jobs.support import create

TRAIN = """\
import argparse, os, time
import mlflow

parser = argparse.ArgumentParser()
parser.add_argument("--quality", type=float)
parser.add_argument("--out")
args = parser.parse_args()
for step in range(3):
    mlflow.log_metric("accuracy", args.quality, step=step)
    # a poor trial waits after its first report: the bandit policy stops it long before
    time.sleep(0.1 if args.quality > 0.5 else 60)
os.makedirs(args.out, exist_ok=True)
with open(os.path.join(args.out, "model.txt"), "w") as out:
    out.write(f"quality={args.quality}\\n")
"""

TRIAL = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: train
inputs:
  quality: {type: number, default: 0.5}
outputs:
  model: {type: uri_folder}
code: ./src
environment: azureml:env:1
command: python train.py --quality ${{inputs.quality}} --out ${{outputs.model}}
"""

PIPELINE = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings: {default_compute: azureml:cpu-cluster}
jobs:
  tune:
    type: sweep
    trial: ./trial.yml
    sampling_algorithm: SAMPLING
    search_space:
      quality: {type: choice, values: VALUES}
    objective: {goal: maximize, primary_metric: accuracy}
    limits: {max_total_trials: 6, max_concurrent_trials: 1}
    early_termination: {type: bandit, slack_factor: 0.1, evaluation_interval: 1}
    outputs:
      model:
  use:
    type: command
    code: ./src
    environment: azureml:env:1
    inputs:
      model: ${{parent.jobs.tune.outputs.model}}
    outputs:
      copy: {type: uri_folder}
    command: cp ${{inputs.model}}/model.txt ${{outputs.copy}}/
"""

GRID = [0.8, 0.85, 0.9, 0.2, 0.88, 0.86]  # the fourth is not within 10% of 0.9: stopped
RANDOM = [0.2, 0.8, 0.85, 0.9]  # seed 0 draws 0.9, 0.9, 0.2, 0.85, 0.9, 0.9


def _project(tmp_path: Path, sampling: str, values: list[float]) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(TRAIN)
    (tmp_path / "trial.yml").write_text(TRIAL)
    text = PIPELINE.replace("SAMPLING", sampling).replace("VALUES", str(values))
    path = tmp_path / "pipeline.yml"
    path.write_text(text)
    return path


@pytest.mark.slow
@pytest.mark.parametrize(("sampling", "values", "expected"), [
    ("grid", GRID, GRID),
    ("{type: random, seed: 0}", RANDOM, [0.9, 0.9, 0.2, 0.85, 0.9, 0.9]),
])
def test_a_sweep_runs_its_trials_and_keeps_the_best(tmp_path: Path, sampling: str,
                                                     values: list[float],
                                                     expected: list[float]) -> None:
    if sampling.startswith("{"):  # the draws this test expects from seed 0
        space = (SearchParam("quality", "choice", values=tuple(values)),)
        assert [p["quality"] for p in suggest(space, "random", 0, 6)] == expected
    ran = create(_project(tmp_path, sampling, values), tmp_path / "runs", "sweep-job")
    assert ran.proc.returncode == 0, ran.proc.stdout + ran.proc.stderr
    tune = ran.step("tune")
    assert tune["kind"] == "sweep" and tune["status"] == "completed"
    rows = list(csv.DictReader(Path(tune["trials_table"]).read_text().splitlines()))
    assert [float(r["quality"]) for r in rows] == expected
    statuses = [r["status"] for r in rows]
    assert statuses.count("early_terminated") == 1
    assert statuses[expected.index(0.2)] == "early_terminated"
    assert all(s == "completed" for i, s in enumerate(statuses) if expected[i] != 0.2)
    assert [r["accuracy"] for r in rows if r["status"] == "completed"] == \
        [str(v) for v in expected if v != 0.2]
    assert [r["accuracy_reports"] for r in rows if r["status"] == "completed"] == ["3"] * 5
    best = [r for r in rows if r["best"] == "yes"]
    assert len(best) == 1 and float(best[0]["accuracy"]) == max(expected)
    # the best trial's outputs are the step's, and the next step read them
    assert (ran.output("tune", "model") / "model.txt").read_text() == f"quality={max(expected)}\n"
    assert (ran.output("use", "copy") / "model.txt").read_text() == f"quality={max(expected)}\n"
    terminated = next(r["trial"] for r in rows if r["status"] == "early_terminated")
    assert not (tmp_path / "runs" / "sweep-job" / "tune" / "trials" / terminated / "outputs"
                / "model" / "model.txt").exists()


def test_a_sweep_whose_trials_log_no_metric_fails_saying_so(tmp_path: Path) -> None:
    path = _project(tmp_path, "grid", [0.8])
    (tmp_path / "src" / "train.py").write_text("import os, sys\nos.makedirs(sys.argv[-1], "
                                               "exist_ok=True)\n")
    path.write_text(path.read_text().replace("max_total_trials: 6", "max_total_trials: 1"))
    ran = create(path, tmp_path / "runs", "no-metric")
    assert ran.proc.returncode == 1
    tune = ran.step("tune")
    assert tune["status"] == "failed"
    assert tune["error"] == "no trial completed and logged accuracy (trials: trial_0 completed)"
    assert ran.step("use")["status"] == "skipped"
    assert textwrap.dedent(Path(tune["trials_table"]).read_text()).splitlines()[1] == \
        "trial_0,completed,0.8,,0,"
