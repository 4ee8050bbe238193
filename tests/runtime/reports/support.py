"""Builders for the report tests: a ParallelStep in a tmp folder and AttemptRecord sequences."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from mlpipe.plan import ParallelStep, PrsOptions, RetrySettings
from mlpipe.runtime.records import AttemptRecord, StepSummary, WorkerInfo
from mlpipe.runtime.reports.observer import StepReports
from mlpipe.runtime.step_logs import StepLogs, attempt_header
from mlpipe.sizes import parse_mini_batch_size

T0 = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=timezone.utc)
W0 = WorkerInfo(0, "process000", os.getpid())
W1 = WorkerInfo(0, "process001", os.getpid())


def make_step(tmp_path: Path, *, interval: int = 0, logging_level: str = "INFO",
              instance_count: int = 1, **kwargs: Any) -> ParallelStep:
    prs = kwargs.pop("prs", PrsOptions(resource_monitor_interval=interval))
    return ParallelStep(name="score", step_dir=str(tmp_path / "score"),
                        mini_batch_size=parse_mini_batch_size("2"), instance_count=instance_count, max_concurrency_per_instance=2,
                        logging_level=logging_level, retry=RetrySettings(max_retries=2, timeout=5),
                        prs=prs, **kwargs)


def attempt(mb: int, *, picked: int = 1, worker: WorkerInfo = W0, total: int = 2,
            succeeded: int | None = None, status: str = "Succeeded", final: bool = True,
            category: str | None = None, message: str | None = None,
            traceback: str | None = None, elapsed: float = 0.5) -> AttemptRecord:
    succeeded = total if succeeded is None else succeeded
    if status != "Succeeded" and succeeded == total:
        succeeded = 0
    return AttemptRecord(
        mini_batch_id=f"mb-{mb}", mini_batch_index=mb, picked_count=picked, worker=worker,
        start_time=T0 + timedelta(seconds=mb), total=total, succeeded=succeeded,
        failed=total - succeeded, elapsed_seconds=elapsed, process_seconds=0.25,
        run_method_seconds=elapsed - 0.1, status=status,  # type: ignore[arg-type]
        error_category=category, error_message=message, traceback=traceback,
        detail={"index": mb, "files": [f"/data/{mb}.png"]}, final=final)


def summary(status: str = "Completed", *, failed: Sequence[AttemptRecord] = (),
            **kwargs: Any) -> StepSummary:
    """A step's summary; ``failed``: its failed attempts, grouped as the driver groups them
    (each the first failure of its mini-batch)."""
    base = StepSummary(status=status, started_at=T0, ended_at=T0 + timedelta(seconds=10))  # type: ignore[arg-type]
    made = replace(base, **kwargs)
    for record in failed:
        made.errors.add_attempt(record, where=StepLogs.error_file(record.worker),
                                first=attempt_header(record))
    return made


TRACEBACK = """Traceback (most recent call last):
  File "/code/score.py", line 12, in run
    raise ValueError("bad image 7")
ValueError: bad image 7"""


def run_retry_and_timeout(tmp_path: Path, **step_kwargs) -> Path:
    """3 mini-batches: one clean, one failing then succeeding on retry, one timing out for good."""
    step = make_step(tmp_path, **step_kwargs)
    reports = StepReports(step)
    reports.step_started(step, [W0, W1], T0)
    reports.mini_batches_scheduled(3, True)
    failed = [attempt(1, worker=W1, status="Failed", final=False, category="UserError",
                      message="ValueError: bad image 7", traceback=TRACEBACK),
              attempt(2, worker=W1, status="Timeout", category="Timeout",
                      message="run() did not finish within 5 s")]
    reports.attempt_finished(attempt(0))
    reports.attempt_finished(failed[0])
    reports.attempt_finished(attempt(1, picked=2))
    reports.attempt_finished(failed[1])
    reports.step_finished(summary(mini_batches_total=3, mini_batches_succeeded=2,
                                  mini_batches_failed=1, items_total=6, items_succeeded=4,
                                  items_failed=2, failed=failed))
    return Path(step.logs_dir)


ERROR_KINDS = {"bad": ("ValueError", 20), "key": ("KeyError", 5), "div": ("ZeroDivisionError", 3),
               "run": ("RuntimeError", 2), "typ": ("TypeError", 1)}


def mixed_failures_pipeline(folder: Path, ok_files: int = 29) -> Path:
    """A job of 60 one-file mini-batches (no retries, no threshold): 31 fail, with five kinds
    of error whose messages name their file (so only a signature groups them)."""
    data = folder / "data"
    data.mkdir(parents=True)
    for prefix, (_kind, count) in ERROR_KINDS.items():
        for n in range(count):
            (data / f"{prefix}_{n:03d}.txt").write_text("x\n")
    for n in range(ok_files):
        (data / f"ok_{n:03d}.txt").write_text("x\n")
    (folder / "src").mkdir()
    (folder / "src" / "score.py").write_text(
        "import os\n"
        "def init():\n    pass\n"
        "def run(mini_batch):\n"
        "    name = os.path.basename(mini_batch[0])\n"
        "    if name.startswith('bad'):\n        raise ValueError(f'cannot score {name}')\n"
        "    if name.startswith('key'):\n        raise KeyError(name)\n"
        "    if name.startswith('div'):\n        return [1 / 0]\n"
        "    if name.startswith('run'):\n        raise RuntimeError(f'broken at /data/{name}')\n"
        "    if name.startswith('typ'):\n        raise TypeError('not a number: 7')\n"
        "    return [name]\n")
    yaml = folder / "pipeline.yml"
    yaml.write_text(
        "type: pipeline\njobs:\n  score:\n    type: parallel\n    inputs:\n"
        "      files:\n        type: uri_folder\n        path: ./data\n"
        "    outputs:\n      rows:\n        type: uri_file\n"
        "    input_data: ${{inputs.files}}\n    mini_batch_size: \"1\"\n"
        "    max_concurrency_per_instance: 2\n    mini_batch_error_threshold: -1\n"
        "    retry_settings:\n      max_retries: 0\n      timeout: 30\n"
        "    task:\n      type: run_function\n      code: ./src\n      entry_script: score.py\n"
        "      append_row_to: ${{outputs.rows}}\n")
    return yaml
