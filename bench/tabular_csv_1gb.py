"""Benchmark: read a 1 GB CSV through mlpipe's tabular path vs ``pandas.read_csv``.

    python bench/tabular_csv_1gb.py [--size-mb 1024] [--mini-batch-size 32mb] [--workers 2]

Generates the CSV once under /tmp (reused when present) with an MLTable next to
it, then in the same run:

* baseline: ``pandas.read_csv`` of the whole file in this process;
* mlpipe: ``mlpipe.runtime.run_parallel_step`` over the MLTable (``direct``
  tabular input), 2 worker processes, an entry script whose ``run()`` returns
  its DataFrame unchanged (summary-only, nothing written). The driver cuts the
  file into byte ranges; each worker parses its ranges with pyarrow.

Prints both wall times, throughputs in MB/s and rows/s, and the ratio
mlpipe / pandas (target >= 0.7). The figures include the runtime's start-up
(worker processes, init) and its report writing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

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


def run_mlpipe(folder: Path, size: str, workers: int) -> tuple[float, object]:
    from mlpipe.frozen import freeze  # noqa: PLC0415
    from mlpipe.plan import ParallelStep, PlanInput, RetrySettings  # noqa: PLC0415
    from mlpipe.runtime import run_parallel_step  # noqa: PLC0415
    from mlpipe.sizes import parse_mini_batch_size  # noqa: PLC0415

    work = Path(tempfile.mkdtemp(prefix="mlpipe-bench-tabular-"))
    code = work / "src"
    code.mkdir()
    (code / "noop.py").write_text(ENTRY)
    step = ParallelStep(
        name="bench", step_dir=str(work / "step"), input_data="data",
        inputs=freeze({"data": PlanInput("data", "mltable", mode="direct", path=str(folder))}),
        code_dir=str(code), entry_script="noop.py", mini_batch_size=parse_mini_batch_size(size),
        instance_count=1, max_concurrency_per_instance=workers,
        retry=RetrySettings(max_retries=0, timeout=600),
    )
    start = time.perf_counter()
    summary = run_parallel_step(step, backend="local")
    return time.perf_counter() - start, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--mini-batch-size", default="32mb")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--folder", default=None)
    args = parser.parse_args()
    folder = Path(args.folder or f"/tmp/mlpipe-bench-csv-{args.size_mb}mb")
    path = generate(folder, args.size_mb)
    size_mb = path.stat().st_size / 1e6

    import pandas as pd  # noqa: PLC0415

    start = time.perf_counter()
    frame = pd.read_csv(path)
    pandas_time = time.perf_counter() - start
    rows = len(frame)
    del frame

    mlpipe_time, summary = run_mlpipe(folder, args.mini_batch_size, args.workers)
    ok = summary.status == "Completed"
    items = getattr(summary, "items_succeeded", None)
    print(f"\n{size_mb:,.0f} MB, {rows:,} rows; mlpipe: {args.workers} workers, "
          f"mini_batch_size {args.mini_batch_size}, "
          f"{getattr(summary, 'mini_batches_total', '?')} mini-batches, status {summary.status}, "
          f"{items:,} rows returned")
    print(f"{'':22}{'time s':>10}{'MB/s':>10}{'rows/s':>14}")
    for label, seconds in (("pandas.read_csv", pandas_time), ("mlpipe tabular", mlpipe_time)):
        print(f"{label:22}{seconds:>10.2f}{size_mb / seconds:>10.1f}{rows / seconds:>14,.0f}")
    ratio = pandas_time / mlpipe_time
    print(f"\nthroughput ratio mlpipe / pandas = {ratio:.2f} (target >= 0.7): "
          f"{'PASS' if ratio >= 0.7 else 'FAIL'}")
    if items != rows:
        print(f"row count mismatch: mlpipe returned {items}, pandas read {rows}")
        return 1
    return 0 if ratio >= 0.7 and ok else 1


if __name__ == "__main__":
    sys.exit(main())
