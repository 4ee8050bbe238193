"""A small v1 project as published v1 code is written: a PythonScriptStep that prepares
files, a ParallelRunStep that scores them, a PythonScriptStep that reports, with
PipelineData between them; entry scripts import ``azureml.core``."""

from __future__ import annotations

import re
from pathlib import Path

RAW_FILES = 5


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


PREP = '''\
import argparse
import os

from azureml.core import Run

run = Run.get_context()
parser = argparse.ArgumentParser()
parser.add_argument("--input")
parser.add_argument("--output")
args = parser.parse_args()
raw = run.input_datasets["raw"]  # as_mount(): the folder's path, as the argument gives it
assert raw == args.input, (raw, args.input)
os.makedirs(args.output, exist_ok=True)
for name in sorted(os.listdir(raw)):
    with open(os.path.join(raw, name)) as source, open(os.path.join(args.output, name), "w") as out:
        out.write(source.read().upper())
run.log("files", len(os.listdir(raw)))
print("prep run", run.id, "of", run.parent.id)
'''

SCORE = '''\
import os

from azureml.core import Model, Run


def init():
    global JOB
    JOB = Run.get_context().parent.id


def run(mini_batch):
    return [f"{os.path.basename(p)}:{open(p).read().strip()}:{JOB}" for p in mini_batch]
'''

REPORT = '''\
import argparse
import os

from azureml.core import Run

parser = argparse.ArgumentParser()
parser.add_argument("--scores")
parser.add_argument("--out")
args = parser.parse_args()
lines = open(os.path.join(args.scores, "scores.txt")).read().splitlines()
os.makedirs(args.out, exist_ok=True)
with open(os.path.join(args.out, "summary.txt"), "w") as out:
    out.write(f"{len(lines)} scored\\n")
Run.get_context().parent.tag("scored", str(len(lines)))
'''

PIPELINE = '''\
from azureml.core import Dataset, Environment, Experiment, Workspace
from azureml.core.compute import AmlCompute, ComputeTarget
from azureml.core.compute_target import ComputeTargetException
from azureml.core.runconfig import RunConfiguration
from azureml.pipeline.core import Pipeline, PipelineData
from azureml.pipeline.steps import ParallelRunConfig, ParallelRunStep, PythonScriptStep

ws = Workspace.from_config()
try:
    compute = ComputeTarget(workspace=ws, name="cpu-cluster")
except ComputeTargetException:
    config = AmlCompute.provisioning_configuration(vm_size="STANDARD_D2_V2", max_nodes=2)
    compute = ComputeTarget.create(ws, "cpu-cluster", config)
datastore = ws.get_default_datastore()
raw = Dataset.File.from_files("raw")
prepped = PipelineData("prepped", datastore=datastore)
scores = PipelineData("scores", datastore=datastore)
report = PipelineData("report", datastore=datastore)
env = Environment("scoring-env")
run_config = RunConfiguration()
run_config.environment = env

prep = PythonScriptStep(name="prep", script_name="prep.py",
                        arguments=["--input", raw.as_named_input("raw").as_mount(),
                                   "--output", prepped],
                        outputs=[prepped], compute_target=compute, source_directory="steps",
                        runconfig=run_config)
config = ParallelRunConfig(source_directory="steps", entry_script="score.py",
                           mini_batch_size="2", error_threshold=-1, output_action="append_row",
                           append_row_file_name="scores.txt", environment=env,
                           compute_target=compute, node_count=1, process_count_per_node=2)
score = ParallelRunStep(name="score", parallel_run_config=config,
                        inputs=[prepped.as_dataset()], output=scores)
summarize = PythonScriptStep(script_name="report.py",
                             arguments=["--scores", scores, "--out", report],
                             inputs=[scores], outputs=[report], compute_target=compute,
                             source_directory="steps")
pipeline = Pipeline(workspace=ws, steps=[summarize])  # prep and score are found through the data
pipeline_run = Experiment(ws, "v1-chain").submit(pipeline)
pipeline_run.wait_for_completion(show_output=True)
step_run = pipeline_run.find_step_run("report.py")[0]
print("downloaded:", step_run.get_output_data("report").download("./out"))
for step in pipeline_run.get_steps():
    print("step", step.name, step.get_status())
'''


def make_chain(root: Path) -> Path:
    """The project (data in ``raw/``, scripts in ``steps/``); returns ``pipeline.py``."""
    for index in range(RAW_FILES):
        write(root / "raw" / f"f{index}.txt", f"line {index}\n")
    write(root / "steps" / "prep.py", PREP)
    write(root / "steps" / "score.py", SCORE)
    write(root / "steps" / "report.py", REPORT)
    return write(root / "pipeline.py", PIPELINE)


def switch_v1_imports(code: str) -> str:
    """The notebook's own ``from azureml.* import`` lines, switched to ``mlpipe.v1``."""
    return re.sub(r"^from azureml\.[\w.]+ import", "from mlpipe.v1 import", code, flags=re.M)
