"""Benchmark: read a 1 GB CSV through mlpipe's tabular path vs ``pandas.read_csv``.

    python bench/tabular_csv_1gb.py [--size-mb 1024] [--mini-batch-size 32mb] [--workers 2]

Generates the CSV once under /tmp (reused when present) with an MLTable next to
it, then in the same run:

* baseline: ``pandas.read_csv`` of the whole file, in a child process;
* mlpipe: the user's command, ``mlpipe job create`` of a one-step pipeline over
  the MLTable (``direct`` tabular input) in a child process, 2 worker processes,
  an entry script whose ``run()`` returns its DataFrame unchanged (nothing
  written). The driver cuts the file into byte ranges; each worker parses its
  ranges with pyarrow.

Both are measured from outside (``through_command.measure``: wall, the process's
own CPU, its workers' CPU, its peak RSS). Prints wall times, throughputs in MB/s
and rows/s, and the ratio mlpipe / pandas (target >= 0.7). mlpipe's figure
includes everything the command does: compiling the pipeline, the workers'
start-up, the job's logs, reports and record.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from through_command import Measured, check, job_create, load, measure, step_logs  # noqa: E402

ENTRY = '''
def init():
    pass


def run(mini_batch):
    return mini_batch
'''
MLTABLE = """paths:
  - file: ./data.csv
transformations:
  - read_delimited:
      delimiter: ','
      encoding: utf8
      header: all_files_same_headers
"""


def generate(folder: Path, size_mb: int) -> Path:
    target = size_mb * 1024 * 1024
    path = folder / "data.csv"
    if path.is_file() and (folder / ".complete").is_file() and \
            (folder / ".complete").read_text() == str(target):
        print(f"reusing {path} ({path.stat().st_size / 1e6:,.0f} MB)")
        return path
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    rng = np.random.default_rng(0)
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"])
    written, row = 0, 0
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("id,a,b,c,d,label,count\n")
        while written < target:
            n = 200_000
            ids = np.arange(row, row + n)
            cols = rng.normal(size=(4, n)).round(6)
            labels = words[rng.integers(0, len(words), n)]
            counts = rng.integers(0, 10_000, n)
            lines = "\n".join(
                f"{i},{a},{b},{c},{d},{w},{k}"
                for i, a, b, c, d, w, k in zip(ids.tolist(), *cols.tolist(), labels.tolist(),
                                                counts.tolist(), strict=True)) + "\n"
            handle.write(lines)
            written += len(lines)
            row += n
    (folder / "MLTable").write_text(MLTABLE)
    (folder / ".complete").write_text(str(target))
    print(f"generated {path} ({written / 1e6:,.0f} MB, {row:,} rows) in "
          f"{time.perf_counter() - start:.0f} s")
    return path


PIPELINE = """\
type: pipeline
display_name: bench
inputs:
  data:
    type: mltable
    path: {folder}
    mode: direct
jobs:
  bench:
    type: parallel
    inputs:
      data: ${{{{parent.inputs.data}}}}
    input_data: ${{{{inputs.data}}}}
    mini_batch_size: "{size}"
    max_concurrency_per_instance: {workers}
    retry_settings:
      max_retries: 0
      timeout: 600
    task:
      type: run_function
      code: ./src
      entry_script: noop.py
"""


def run_mlpipe(folder: Path, size: str, workers: int) -> tuple[Measured, int, int]:
    """``mlpipe job create`` of a one-step pipeline over the MLTable, measured as a child
    process; with the rows its attempts returned and its mini-batches (read afterwards)."""
    from mlpipe.runtime.step_logs import StepLogs, read_attempts  # noqa: PLC0415

    work = Path(tempfile.mkdtemp(prefix="mlpipe-bench-tabular-"))
    try:
        (work / "src").mkdir()
        (work / "src" / "noop.py").write_text(ENTRY)
        pipeline = work / "pipeline.yml"
        pipeline.write_text(PIPELINE.format(folder=folder, size=size, workers=workers))
        runs = work / "runs"
        measured = job_create(pipeline, runs, "--no-progress")
        attempts = read_attempts(StepLogs.of(str(step_logs(runs))))
        return measured, int(attempts.succeeded.sum()), len(attempts)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def child_pandas(path: str) -> None:
    """The baseline, in a child process of its own: ``pandas.read_csv`` of the whole file."""
    import pandas as pd  # noqa: PLC0415

    print(json.dumps({"rows": len(pd.read_csv(path))}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--mini-batch-size", default="32mb")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--folder", default=None)
    parser.add_argument("--child-pandas", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_pandas:
        child_pandas(args.child_pandas)
        return 0
    folder = Path(args.folder or f"/tmp/mlpipe-bench-csv-{args.size_mb}mb")
    path = generate(folder, args.size_mb)
    size_mb = path.stat().st_size / 1e6
    before = load()
    pandas = check(measure([sys.executable, __file__, "--child-pandas", str(path)]),
                   "pandas.read_csv")
    rows = int(json.loads(pandas.stdout)["rows"])
    mlpipe, items, mini_batches = run_mlpipe(folder, args.mini_batch_size, args.workers)
    print(f"\n{size_mb:,.0f} MB, {rows:,} rows; mlpipe job create: {args.workers} workers, "
          f"mini_batch_size {args.mini_batch_size}, {mini_batches} mini-batches, "
          f"{items:,} rows returned; load {before} before, {load()} after")
    print(f"{'child process':26}{'wall s':>9}{'MB/s':>9}{'rows/s':>13}{'CPU s':>8}"
          f"{'workers CPU s':>15}{'peak RSS MB':>13}")
    for label, run in (("python: pandas.read_csv", pandas), ("mlpipe job create", mlpipe)):
        print(f"{label:26}{run.wall:>9.2f}{size_mb / run.wall:>9.1f}{rows / run.wall:>13,.0f}"
              f"{run.cpu:>8.1f}{run.children_cpu:>15.1f}{run.peak_rss_mb:>13.0f}")
    ratio = pandas.wall / mlpipe.wall
    print(f"\nthroughput ratio mlpipe / pandas = {ratio:.2f} (target >= 0.7): "
          f"{'PASS' if ratio >= 0.7 else 'FAIL'}")
    if items != rows:
        print(f"row count mismatch: mlpipe returned {items}, pandas read {rows}")
        return 1
    return 0 if ratio >= 0.7 else 1


if __name__ == "__main__":
    sys.exit(main())
