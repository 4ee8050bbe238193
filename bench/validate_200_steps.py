"""Validate a generated 200-step pipeline and compare with plain YAML loading.

Run: ``python bench/validate_200_steps.py [--steps N] [--repeat R]``. Prints the user's
command, ``mlpipe job validate --file`` as a child process measured from outside (wall, CPU,
peak RSS: ``through_command.py``), then, as inner figures, the median time of each stage in
this process next to a baseline (ruamel.yaml's round-trip load of the same file) and their
ratio. The target is a full validation (the compiler) under 1 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ruamel.yaml import YAML  # noqa: E402
from through_command import MLPIPE, check, load, measure  # noqa: E402

from mlpipe.compiler import check_pipeline  # noqa: E402
from mlpipe.schema import load_pipeline  # noqa: E402


def generate(root: Path, steps: int) -> Path:
    """A pipeline of ``steps`` steps: parallel and command steps alternating, each reading
    the one before."""
    (root / "src").mkdir()
    (root / "src" / "score.py").write_text(
        "def init():\n    pass\n\ndef run(batch):\n    return batch\n")
    (root / "src" / "prep.py").write_text("print('prep')\n")
    (root / "data").mkdir()
    (root / "data" / "a.txt").write_text("a\n")
    lines = ["$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json",
             "type: pipeline", "name: bench", "settings:",
             "  default_compute: azureml:cpu-cluster", "inputs:",
             "  data:", "    type: uri_folder", "    path: ./data", "  threshold: 5", "jobs:"]
    for i in range(steps):
        source = ("${{parent.inputs.data}}" if i == 0
                  else f"${{{{parent.jobs.step{i - 1}.outputs.out}}}}")
        if i % 2 == 0:
            lines += [f"  step{i}:", "    type: parallel", "    inputs:", "      data:",
                      "        type: uri_folder", f"        path: {source}", "      label: x",
                      "    outputs:", "      out:",
                      "        type: uri_folder", "      rows:", "        type: uri_file",
                      "    input_data: ${{inputs.data}}", '    mini_batch_size: "10"',
                      "    mini_batch_error_threshold: ${{parent.inputs.threshold}}",
                      "    resources:", "      instance_count: 2",
                      "    max_concurrency_per_instance: 2",
                      "    retry_settings:", "      max_retries: 2", "      timeout: 60",
                      "    logging_level: INFO", "    environment_variables:", "      FOO: bar",
                      "    task:", "      type: run_function", "      code: ./src",
                      "      entry_script: score.py", "      program_arguments: >-",
                      "        --label ${{inputs.label}} --out ${{outputs.out}}",
                      "        --error_threshold 10 --allowed_failed_percent 20",
                      "      append_row_to: ${{outputs.rows}}",
                      "      environment: azureml:parallel-env:1"]
        else:
            lines += [f"  step{i}:", "    type: command", "    code: ./src",
                      "    environment: azureml:command-env:1",
                      "    command: python prep.py --in ${{inputs.data}} --out ${{outputs.out}}",
                      "    inputs:", f"      data: {source}", "    outputs:", "      out:",
                      "        type: uri_folder"]
    path = root / "pipeline.yml"
    path.write_text("\n".join(lines) + "\n")
    return path


def median_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = generate(Path(tmp), args.steps)
        runs = Path(tmp) / "runs"
        result = check_pipeline(path, runs_dir=runs)
        assert result.plan is not None and len(result.plan.steps) == args.steps, result.errors[:3]
        baseline = median_time(lambda: YAML().load(path.read_text()), args.repeat)
        stages = {
            "ruamel round-trip load (baseline)": baseline,
            "schema layer (load_pipeline)": median_time(lambda: load_pipeline(path), args.repeat),
            "full validation (compile_pipeline)": median_time(
                lambda: check_pipeline(path, runs_dir=runs), args.repeat),
        }
        size = path.stat().st_size
        cli = [check(measure([*MLPIPE, "job", "validate", "--file", str(path)], cwd=REPO),
                     "mlpipe job validate") for _ in range(args.repeat)]
    walls = [run.wall for run in cli]
    middle = cli[walls.index(statistics.median_low(walls))]
    print(f"{args.steps}-step pipeline, {size} bytes; load {load()}")
    print(f"the user's command, `mlpipe job validate --file` (a child process, median of "
          f"{args.repeat}): {middle.wall:.3f} s, CPU {middle.cpu:.2f} s, peak RSS "
          f"{middle.peak_rss_mb:.0f} MB ({middle.wall / baseline:.1f} x the baseline)")
    print(f"inner figures, in this process (median of {args.repeat} runs):")
    print(f"{'stage':52} {'seconds':>9} {'x baseline':>11}")
    for name, seconds in stages.items():
        print(f"{name:52} {seconds:9.3f} {seconds / baseline:11.1f}")
    full = stages["full validation (compile_pipeline)"]
    print(f"target: full validation < 1 s -> {'met' if full < 1 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
