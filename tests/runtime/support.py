"""Helpers for the runtime tests: steps over tmp folders, file mini-batches, a recording observer.

The listing here is deliberately tiny (a sorted list of files, N per mini-batch):
the real one is the data layer's; these tests exercise the runtime only.
"""

from __future__ import annotations

import textwrap
from datetime import datetime
from pathlib import Path
from typing import Any

from mlpipe.data.minibatch import MiniBatch
from mlpipe.frozen import freeze
from mlpipe.plan import ParallelStep, PlanOutput, PrsOptions, RetrySettings
from mlpipe.runtime.records import AttemptRecord, StepObserver, StepSummary, WorkerInfo

LOADER = "tests.runtime.support:load_payload"


def load_payload(mini_batch: MiniBatch) -> Any:
    """Worker-side loader of the test mini-batches: the payload is the run() argument."""
    return list(mini_batch.payload) if isinstance(mini_batch.payload, (list, tuple)) \
        else mini_batch.payload


SLOW_LOADER = "tests.runtime.support:load_slowly"


def load_slowly(mini_batch: MiniBatch) -> Any:
    """Like :func:`load_payload`, but sleeps ``LOAD_SECONDS`` (environment) for the files named
    in ``SLOW_LOAD``, only on the first attempt when ``MARKS`` names a marker folder."""
    import os  # noqa: PLC0415
    import time  # noqa: PLC0415

    slow = set(os.environ.get("SLOW_LOAD", "").split(","))
    for path in mini_batch.payload:
        name = os.path.basename(path)
        if name not in slow:
            continue
        marks = os.environ.get("MARKS")
        mark = os.path.join(marks, name + ".load") if marks else None
        if mark is None or not os.path.exists(mark):
            if mark is not None:
                open(mark, "w").close()
            time.sleep(float(os.environ["LOAD_SECONDS"]))
    return load_payload(mini_batch)


def file_mini_batches(folder: Path, count: int, per_batch: int = 1) -> list[MiniBatch]:
    """``count`` files in ``folder`` (created), ``per_batch`` absolute paths per mini-batch."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = folder / f"f{i:04d}.txt"
        path.write_text(f"{i}\n")
        paths.append(str(path))
    return [MiniBatch(id=f"mb-{n:04d}", index=n, kind="files",
                      payload=tuple(paths[start:start + per_batch]),
                      items=len(paths[start:start + per_batch]))
            for n, start in enumerate(range(0, count, per_batch))]


def make_step(tmp_path: Path, script: str, *, name: str = "step", append_row: bool = True,
              uri_file: bool = False, workers: int | None = 2, instance_count: int = 1,
              max_retries: int = 2, timeout: int = 60, prs: PrsOptions | None = None,
              extra_files: dict[str, str] | None = None, **fields: Any) -> ParallelStep:
    """A ParallelStep over ``tmp_path`` with ``script`` as its entry script ``score.py``."""
    code = tmp_path / "code"
    code.mkdir(parents=True, exist_ok=True)
    (code / "score.py").write_text(textwrap.dedent(script))
    for rel, text in (extra_files or {}).items():
        (code / rel).write_text(textwrap.dedent(text))
    step_dir = tmp_path / "run" / name
    out_path = step_dir / "outputs" / "out"
    output = PlanOutput("out", "uri_file" if uri_file else "uri_folder",
                        path=str(out_path / "result.txt") if uri_file else str(out_path))
    return ParallelStep(
        name=name, step_dir=str(step_dir), code_dir=str(code), entry_script="score.py",
        outputs=freeze({"out": output}), append_row_to="out" if append_row else None,
        instance_count=instance_count, max_concurrency_per_instance=workers,
        retry=RetrySettings(max_retries=max_retries, timeout=timeout),
        prs=prs or PrsOptions(), **fields,
    )


class Recorder(StepObserver):
    """A StepObserver keeping everything it is told."""

    def __init__(self) -> None:
        self.attempts: list[AttemptRecord] = []
        self.worker_events: list[tuple[WorkerInfo, str, str]] = []
        self.scheduled: list[tuple[int, bool]] = []
        self.started: list[WorkerInfo] = []
        self.summary: StepSummary | None = None

    def step_started(self, step: ParallelStep, workers: list[WorkerInfo], at: datetime) -> None:
        self.started = list(workers)

    def mini_batches_scheduled(self, count: int, done: bool) -> None:
        self.scheduled.append((count, done))

    def attempt_finished(self, record: AttemptRecord) -> None:
        self.attempts.append(record)

    def worker_event(self, worker: WorkerInfo, event: str, message: str) -> None:
        self.worker_events.append((worker, event, message))

    def step_finished(self, summary: StepSummary) -> None:
        self.summary = summary

    def picked(self, mini_batch_id: str) -> list[int]:
        return [a.picked_count for a in self.attempts if a.mini_batch_id == mini_batch_id]

    def events(self, kind: str) -> list[tuple[WorkerInfo, str, str]]:
        return [e for e in self.worker_events if e[1] == kind]
