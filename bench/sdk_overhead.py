"""What the SDK front costs over compiling the same YAML: ``python bench/sdk_overhead.py``.

For each sample: build its SDK twin and compile it, against compiling its
pipeline.yml; then a 60-step pipeline built in code against its dumped YAML.
Prints milliseconds per compile and the ratio SDK / YAML (noisy on a shared machine).
"""

from __future__ import annotations

import runpy
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mlpipe import Input, Output, pipeline  # noqa: E402
from mlpipe.compiler import compile_pipeline  # noqa: E402
from mlpipe.parallel import RunFunction, parallel_run_function  # noqa: E402
from mlpipe.sdk import compile_job  # noqa: E402

REPEAT = 20


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


def main() -> None:
    runs = Path(tempfile.mkdtemp())
    print(f"{'case':34} {'sdk ms':>8} {'yaml ms':>8} {'ratio':>6}")
    for name in ("file-batch", "tabular-scoring", "many-models", "command-parallel-command"):
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
