"""What the job runner adds around command steps.

Runs a chain of 30 trivial command steps (`true`) and a fan of 30 independent ones
through ``run_plan`` and, side by side, the same 30 shell commands one after another
with ``subprocess.run`` (the baseline). Prints wall times and the runner's cost per
step (code snapshot, output folders, shell, log capture, atomic job.json writes).
Run: python bench/job_overhead.py   (timings are noisy on a shared machine)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mlpipe.jobs import run_plan  # noqa: E402
from mlpipe.plan import CommandStep, ExecutionPlan  # noqa: E402

STEPS = 30


def plan(root: Path, name: str, chained: bool) -> ExecutionPlan:
    run_dir = root / "runs" / name
    steps = tuple(
        CommandStep(name=f"s{i:02d}", step_dir=str(run_dir / f"s{i:02d}"), command="true",
                    depends_on=(f"s{i - 1:02d}",) if chained and i else ())
        for i in range(STEPS)
    )
    return ExecutionPlan(source=str(root / "pipeline.yml"), run_dir=str(run_dir), steps=steps)


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="mlpipe-bench-jobs-"))
    (root / "pipeline.yml").write_text("type: pipeline\n")
    try:
        bash = shutil.which("bash") or "/bin/sh"
        baseline = timed(lambda: [subprocess.run([bash, "-c", "true"], check=True)
                                  for _ in range(STEPS)])
        chain = timed(lambda: run_plan(plan(root, "chain", chained=True)))
        fan = timed(lambda: run_plan(plan(root, "fan", chained=False)))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{STEPS} shell commands, one after another (baseline): {baseline:6.2f} s")
    print(f"{STEPS} command steps chained through run_plan:       {chain:6.2f} s"
          f"  ({chain / baseline:4.1f}x, {(chain - baseline) / STEPS * 1000:5.1f} ms/step added)")
    print(f"{STEPS} independent command steps through run_plan:   {fan:6.2f} s"
          f"  ({fan / baseline:4.1f}x)")


if __name__ == "__main__":
    main()
