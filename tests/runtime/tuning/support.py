"""Builders for the tuning tests: a step profile made of chosen attempts, and a tabular step
whose run() costs a fixed time per call plus a time per row."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import numpy as np

from mlpipe.runtime.step_logs import AttemptTable, StepLogs
from mlpipe.runtime.tuning.profile import ProfileTally, StepProfile, WorkerUsage


def table(rows: list[tuple[str, str, float, float, int, float, str]]) -> AttemptTable:
    """Attempts as ``(mini-batch id, process, start, elapsed, items, run seconds, status)``."""
    import pyarrow as pa

    processes = tuple(sorted({row[1] for row in rows}))
    status = np.array([row[6] for row in rows], dtype=object)
    blank = pa.chunked_array([pa.array(["" for _ in rows], type=pa.string())])
    return AttemptTable(
        np.array([row[0] for row in rows], dtype=object), np.ones(len(rows), dtype=np.int64),
        np.array([processes.index(row[1]) for row in rows], dtype=np.int64),
        np.array([row[2] for row in rows]), np.array([row[4] for row in rows], dtype=np.int64),
        np.array([row[4] if row[6] == "Succeeded" else 0 for row in rows], dtype=np.int64),
        np.array([0 if row[6] == "Succeeded" else row[4] for row in rows], dtype=np.int64),
        np.array([row[3] for row in rows]), np.zeros(len(rows)),
        np.array([row[5] for row in rows]), status, np.array(["" for _ in rows], dtype=object),
        blank, blank, status == "Succeeded", processes)


def profile(rows: list[tuple[str, str, float, float, int, float, str]], *, workers: int = 2,
            cores: int = 2, wall: float | None = None, cpu: list[float] | None = None,
            delays: dict[str, float] | None = None,
            startups: dict[str, tuple[float, float, float, float]] | None = None,
            worker_memory_mb: float = 0.0, **settings: object) -> StepProfile:
    """A profile of ``rows`` started at time 0 (attempt ids repeat for retries): ``cpu``
    each attempt's CPU seconds (none by default), ``delays`` each worker's run-delay
    (spread over its attempts by their elapsed), ``startups`` each worker's (process start,
    ready, CPU, run-delay), ``worker_memory_mb`` each worker's peak."""
    attempts = table(rows)
    if cpu is not None:
        attempts = replace(attempts, process_seconds=np.array(cpu, dtype=float))
    tally = ProfileTally.of(attempts)
    for index, name in enumerate(attempts.processes):
        mine = attempts.process == index
        elapsed, used = attempts.elapsed[mine].sum(), attempts.process_seconds[mine].sum()
        delay = (delays or {}).get(name, 0.0)
        tally.per_worker[name] = [int(mine.sum()), float(elapsed), float(used), delay]
        tally.delay += delay
        tally.delay_elapsed += float(elapsed)
    tally.startup = {key: list(values) for key, values in (startups or {}).items()}
    end = wall if wall is not None else float(attempts.end.max())
    base = {"workers": workers, "cores": cores, "max_concurrency_per_instance": workers,
            "instance_count": 1, "max_retries": 2, "timeout": 60, "mini_batch_size": "1",
            "items_per_mini_batch": 1, "partition_keys": [], "memory_mb": 8192}
    ready = {key: values[1] for key, values in (startups or {}).items()}
    usage = {f"0/process{n:03d}": WorkerUsage(memory_peak_mb=worker_memory_mb, samples=1)
             for n in range(workers)} if worker_memory_mb else {}
    return StepProfile(StepLogs(Path("/nonexistent")), 0, 1, 0.0, end, "Completed",
                       {**base, **settings}, tally, attempts,
                       ready or {f"0/process{n:03d}": 0.0 for n in range(workers)}, usage,
                       [], {})


def tabular_pipeline(folder: Path, *, rows: int, per_call: float, per_row: float,
                     size: str, concurrency: int) -> Path:
    """A CSV of ``rows`` rows of random length (so mini-batches of a size in bytes hold
    different numbers of rows) and a run() sleeping ``per_call`` + ``per_row`` x rows."""
    data = folder / "table"
    if not data.is_dir():
        data.mkdir(parents=True)
        chance = random.Random(7)
        lines = ["id,text"] + [f"{n},{'x' * chance.randint(5, 120)}" for n in range(rows)]
        (data / "t.csv").write_text("\n".join(lines) + "\n")
        (data / "MLTable").write_text("paths:\n  - file: ./t.csv\ntransformations:\n"
                                      "  - read_delimited:\n      delimiter: ','\n")
        (folder / "src").mkdir()
        (folder / "src" / "score.py").write_text(
            "import time\ndef run(mini_batch):\n"
            f"    time.sleep({per_call} + {per_row} * len(mini_batch))\n"
            "    return mini_batch\n")
    yaml = folder / f"pipeline_{size}_{concurrency}.yml"
    yaml.write_text(
        "type: pipeline\njobs:\n  score:\n    type: parallel\n    inputs:\n      table:\n"
        "        type: mltable\n        path: ./table\n    input_data: ${{inputs.table}}\n"
        f"    mini_batch_size: \"{size}\"\n    max_concurrency_per_instance: {concurrency}\n"
        "    task:\n      type: run_function\n      code: ./src\n      entry_script: score.py\n")
    return yaml
