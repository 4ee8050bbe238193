"""What the SDK front costs over the same YAML: ``python bench/sdk_overhead.py``.

First, through the users' own commands, each a child process measured from outside (wall,
its CPU, peak RSS: ``through_command.py``): for each sample, a Python script running its SDK
twin with ``mlpipe.run()`` against ``mlpipe job create --file pipeline.yml``, and the ratio.
Then inner figures (the compiler alone, in this process): each sample's SDK twin built and
compiled against compiling its pipeline.yml, and a 60-step pipeline built in code against
its dumped YAML, in milliseconds per compile. Noisy on a shared machine: the load is printed.

    python bench/sdk_overhead.py [--samples file-batch,...]
"""

from __future__ import annotations

import argparse
import runpy
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from through_command import MLPIPE, check, load, measure  # noqa: E402

from mlpipe import Input, Output, pipeline  # noqa: E402
from mlpipe.compiler import compile_pipeline  # noqa: E402
from mlpipe.parallel import RunFunction, parallel_run_function  # noqa: E402
from mlpipe.sdk import compile_job  # noqa: E402

REPEAT = 20
SAMPLES = ("file-batch", "tabular-scoring", "many-models", "command-parallel-command")
SDK_RUN = """import runpy, sys
import mlpipe
job = runpy.run_path(sys.argv[1])["pipeline_job"]
result = mlpipe.run(job, runs_dir=sys.argv[2], job_name="bench")
sys.exit(0 if result.ok else 1)
"""


def best_ms(action, repeat: int = REPEAT) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def wide_job(steps: int):
    sample = REPO / "samples" / "file-batch"
    step_fn = parallel_run_function(
        inputs=dict(documents=Input(type="uri_folder")),
        outputs=dict(counts=Output(type="uri_file")),
        input_data="${{inputs.documents}}", mini_batch_size="5",
        task=RunFunction(code=str(sample / "src"), entry_script="count_words.py",
                         append_row_to="${{outputs.counts}}"))

    @pipeline()
    def wide(documents):
        for _ in range(steps):
            step_fn(documents=documents)

    return wide(documents=Input(path=str(sample / "data")))


def through_commands(samples: list[str]) -> None:
    """Each sample run whole by ``mlpipe.run()`` in a script and by ``mlpipe job create``."""
    print(f"load {load()}")
    print(f"{'sample (child processes)':28}{'mlpipe.run() s':>15}{'job create s':>14}"
          f"{'ratio':>7}{'CPU s':>13}{'peak RSS MB':>14}")
    for name in samples:
        folder = REPO / "samples" / name
        runs = Path(tempfile.mkdtemp(prefix="mlpipe-bench-sdk-"))
        try:
            sdk = check(measure([sys.executable, "-c", SDK_RUN, str(folder / "pipeline.py"),
                                 str(runs / "sdk")], cwd=folder), f"mlpipe.run() of {name}")
            yaml = check(measure([*MLPIPE, "job", "create", "--file", "pipeline.yml",
                                  "--runs-dir", str(runs / "yaml"), "--name", "bench",
                                  "--no-progress"], cwd=folder), f"job create of {name}")
        finally:
            shutil.rmtree(runs, ignore_errors=True)
        print(f"{name:28}{sdk.wall:>15.2f}{yaml.wall:>14.2f}{sdk.wall / yaml.wall:>7.2f}"
              f"{sdk.cpu:>6.2f}/{yaml.cpu:<6.2f}{sdk.peak_rss_mb:>7.0f}/{yaml.peak_rss_mb:<6.0f}")
    print(f"load {load()}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", default=",".join(SAMPLES),
                        help=f"comma-separated, of {', '.join(SAMPLES)}")
    samples = [name for name in parser.parse_args().samples.split(",") if name]
    through_commands(samples)
    runs = Path(tempfile.mkdtemp())
    print("inner figures: the compiler alone, in this process")
    print(f"{'case':34} {'sdk ms':>8} {'yaml ms':>8} {'ratio':>6}")
    for name in samples:
        folder = REPO / "samples" / name
        script = str(folder / "pipeline.py")
        sdk = best_ms(lambda script=script: compile_job(runpy.run_path(script)["pipeline_job"],
                                                        runs_dir=runs, job_name="b"))
        yaml = best_ms(lambda folder=folder: compile_pipeline(folder / "pipeline.yml",
                                                              runs_dir=runs, job_name="b"))
        print(f"{name + ' (build + compile)':34} {sdk:8.1f} {yaml:8.1f} {sdk / yaml:6.2f}")
    job = wide_job(60)
    dumped = runs / "wide.yml"
    job.dump(dumped)
    sdk = best_ms(lambda: compile_job(job, runs_dir=runs, job_name="b"), 5)
    yaml = best_ms(lambda: compile_pipeline(dumped, runs_dir=runs, job_name="b"), 5)
    print(f"{'60 steps (compile only)':34} {sdk:8.1f} {yaml:8.1f} {sdk / yaml:6.2f}")
    build = best_ms(lambda: wide_job(60), 5)
    print(f"{'60 steps: @pipeline build alone':34} {build:8.1f}")


if __name__ == "__main__":
    main()
