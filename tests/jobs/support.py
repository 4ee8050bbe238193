"""Helpers for the job tests: run ``mlpipe job create`` once, read the record back."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import REPO, run_cli


@dataclass
class Ran:
    """One ``mlpipe job create`` and the job's record (``job.json``, local status words)."""

    proc: subprocess.CompletedProcess[str]
    record: dict[str, Any] | None

    def step(self, name: str) -> dict[str, Any]:
        assert self.record is not None, self.proc.stderr
        return self.record["steps"][name]

    def output(self, step: str, output: str) -> Path:
        return Path(self.step(step)["outputs"][output]["path"])

    def pipeline_output(self, name: str) -> Path:
        assert self.record is not None
        return Path(self.record["outputs"][name]["path"])

    def summary(self, step: str) -> dict[str, Any]:
        return self.step(step)["summary"]

    def append_lines(self, step: str) -> list[str]:
        """The lines of a parallel step's append_row file."""
        path = self.step(step).get("append_row_file")
        assert path, f"step {step} has no append_row file"
        return Path(path).read_text(encoding="utf-8").splitlines()


def create(yaml: Path, runs_dir: Path, name: str, *extra: str, cwd: Path | None = None,
           timeout: float = 600) -> Ran:
    proc = run_cli("job", "create", "--file", str(yaml), "--runs-dir", str(runs_dir),
                   "--name", name, "--no-progress", *extra, cwd=cwd, timeout=timeout)
    from mlpipe.jobs import JobNotFound, JobStore

    try:
        record: dict[str, Any] | None = JobStore(runs_dir).load(name).to_json()
    except JobNotFound:
        record = None
    return Ran(proc, record)


def run_here(yaml: Path, runs_dir: Path, name: str) -> Ran:
    """Compile and run in this process (no CLI start-up); the record as ``job show`` gives it."""
    from mlpipe.compiler import compile_pipeline
    from mlpipe.jobs import JobStore, run_plan

    plan = compile_pipeline(str(yaml), runs_dir=runs_dir, job_name=name)
    result = run_plan(plan)
    proc = subprocess.CompletedProcess(["run_plan", str(yaml)], 0 if result.ok else 1, "", "")
    return Ran(proc, JobStore(runs_dir).load(name).to_json())


def files_under(folder: Path, pattern: str = "*") -> list[Path]:
    return sorted(p for p in folder.rglob(pattern) if p.is_file())


def label_counts(lines: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in lines:
        label = line.split()[-1]
        counts[label] = counts.get(label, 0) + 1
    return counts


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def flaky_pipeline(folder: Path) -> Path:
    """Six files, one per mini-batch; the entry script fails on bad.txt until a gate file
    exists, and while ``<folder>/hold`` does not exist (once it did), run() waits for it."""
    for name in ("a", "b", "bad", "c", "d", "e"):
        write(folder / "data" / f"{name}.txt", f"{name}\n")
    write(folder / "src" / "score.py", """\
        import os, time
        LOG = os.environ["SEEN_LOG"]

        def init():
            pass

        def run(mini_batch):
            while os.path.exists(os.environ["HOLD"] + ".on") and \\
                    not os.path.exists(os.environ["HOLD"]):
                time.sleep(0.01)
            out = []
            for path in mini_batch:
                name = os.path.basename(path)
                if name == "bad.txt" and not os.path.exists(os.environ["GATE"]):
                    raise RuntimeError("bad.txt is not ready")
                with open(LOG, "a") as fh:
                    fh.write(name + "\\n")
                out.append(name)
            return out
        """)
    return write(folder / "pipeline.yml", f"""\
        type: pipeline
        settings:
          continue_on_step_failure: false
        jobs:
          score:
            type: parallel
            inputs:
              files:
                type: uri_folder
                path: ./data
            outputs:
              rows:
                type: uri_file
            input_data: ${{{{inputs.files}}}}
            mini_batch_size: "1"
            max_concurrency_per_instance: 1
            mini_batch_error_threshold: 0
            retry_settings:
              max_retries: 0
              timeout: 30
            environment_variables:
              SEEN_LOG: {folder / "seen.log"}
              GATE: {folder / "gate"}
              HOLD: {folder / "hold"}
            task:
              type: run_function
              code: ./src
              entry_script: score.py
              environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest
              append_row_to: ${{{{outputs.rows}}}}
          report:
            type: command
            command: cat ${{{{inputs.rows}}}}
            environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest
            inputs:
              rows: ${{{{parent.jobs.score.outputs.rows}}}}
        """)


JOB_SCRIPT = """
import sys
from pathlib import Path
from mlpipe.frozen import freeze
from mlpipe.jobs import run_plan
from mlpipe.plan import CommandStep, ExecutionPlan

runs, name = Path(sys.argv[1]), sys.argv[2]
commands = {commands!r}
steps, previous = [], ()
for step_name, cmd in commands:
    steps.append(CommandStep(name=step_name, step_dir=str(runs / name / step_name), command=cmd,
                             depends_on=previous))
    previous = (step_name,)
source = runs.parent / "pipeline.yml"
source.write_text("type: pipeline\\n")
plan = ExecutionPlan(source=str(source), run_dir=str(runs / name), name=name,
                     steps=tuple(steps))
result = run_plan(plan, echo=print)
raise SystemExit(0 if result.ok else 1)
"""


def spawn_job(tmp_path: Path, runs: Path, name: str, commands: list[tuple[str, str]]) -> subprocess.Popen:
    script = tmp_path / f"run_{name}.py"
    script.write_text(textwrap.dedent(JOB_SCRIPT.format(commands=commands)))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, str(script), str(runs), name], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


TOGETHER = """
import os, sys, time
sys.path[:0] = {paths!r}
import mlpipe.cli, mlpipe.cli.jobs, mlpipe.compiler, mlpipe.jobs.front_door, mlpipe.jobs.rerun
import mlpipe.runtime, mlpipe.data  # the slow imports happen before the start line
open({ready!r}, "w").close()
while not os.path.exists({go!r}):
    time.sleep(0.001)
raise SystemExit(mlpipe.cli.main({argv!r}))
"""


def start_together(folder: Path, *argvs: list[str]) -> list[subprocess.Popen[str]]:
    """``mlpipe ARGV`` for each of ``argvs`` in its own process, released at the same instant
    once every one of them has imported mlpipe (so their first steps overlap)."""
    folder.mkdir(parents=True, exist_ok=True)
    go = folder / "go"
    go.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started, ready = [], []
    for number, argv in enumerate(argvs):
        ready.append(folder / f"ready-{number}")
        ready[-1].unlink(missing_ok=True)
        code = TOGETHER.format(paths=[str(REPO)], ready=str(ready[-1]), go=str(go), argv=argv)
        started.append(subprocess.Popen([sys.executable, "-c", code], env=env, cwd=folder,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True))
    wait_for(lambda: all(path.exists() for path in ready), timeout=120)
    go.touch()
    return started
