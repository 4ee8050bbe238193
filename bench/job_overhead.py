"""What the job runner adds around command steps, through the user's command.

Runs ``mlpipe job create`` (a child process, measured from outside: wall, its CPU and peak
RSS; ``through_command.py``) of a pipeline of 30 trivial command steps (``true``) chained
by their outputs, and of one of 30 independent ones, against the baseline: a child Python
running the same 30 shell commands one after another with ``subprocess.run``. Prints wall
times, the command's CPU and peak RSS, and its cost per step (compiling the pipeline, code
snapshot, output folders, shell, log capture, job.json writes). Timings are noisy on a
shared machine: the load is printed with them.

    python bench/job_overhead.py [--steps 30]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from through_command import Measured, check, job_create, load, measure  # noqa: E402

IMAGE = "mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04"


def pipeline(folder: Path, steps: int, chained: bool) -> Path:
    """``steps`` command steps running ``true``; each takes the one before's output when
    ``chained``."""
    lines = ["type: pipeline", "jobs:"]
    for index in range(steps):
        name = f"s{index:02d}"
        command = "true ${{outputs.out}}"
        lines += [f"  {name}:", "    type: command", f"    environment:\n      image: {IMAGE}",
                  "    outputs:\n      out:\n        type: uri_folder"]
        if chained and index:
            command = "true ${{inputs.before}} ${{outputs.out}}"
            lines.append(f"    inputs:\n      before: ${{{{parent.jobs.s{index - 1:02d}"
                         ".outputs.out}}")
        lines.append(f"    command: {command}")
    path = folder / ("chain.yml" if chained else "fan.yml")
    path.write_text("\n".join(lines) + "\n")
    return path


def baseline(steps: int) -> Measured:
    """A child Python running ``steps`` shell commands one after another."""
    bash = shutil.which("bash") or "/bin/sh"
    code = (f"import subprocess\nfor _ in range({steps}):\n"
            f"    subprocess.run([{bash!r}, '-c', 'true'], check=True)\n")
    return check(measure([sys.executable, "-c", code]), "the baseline")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="mlpipe-bench-jobs-"))
    before = load()
    try:
        base = baseline(args.steps)
        chain = job_create(pipeline(root, args.steps, chained=True), root / "runs-chain",
                           "--no-progress")
        fan = job_create(pipeline(root, args.steps, chained=False), root / "runs-fan",
                         "--no-progress")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    n = args.steps
    print(f"{n} steps; load {before} before, {load()} after")
    print(f"{'child process':44}{'wall s':>8}{'x base':>8}{'ms/step added':>15}{'CPU s':>8}"
          f"{'peak RSS MB':>13}")
    for label, run in ((f"python: {n} x subprocess.run(bash -c true)", base),
                       ("mlpipe job create, chained command steps", chain),
                       ("mlpipe job create, independent steps", fan)):
        print(f"{label:44}{run.wall:>8.2f}{run.wall / base.wall:>8.1f}"
              f"{(run.wall - base.wall) / n * 1000:>15.1f}{run.cpu:>8.2f}"
              f"{run.peak_rss_mb:>13.0f}")


if __name__ == "__main__":
    main()
