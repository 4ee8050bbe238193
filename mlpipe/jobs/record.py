"""The shape of ``job.json``, checked whenever a record is read.

A record is written by mlpipe, but it lives on disk where anything can damage it
(an editor, a full disk, another tool). :func:`check_record` validates what the
readers rely on (``job show``, ``job list``, ``job stream``, ``job cancel`` and the
resume decision of ``job create --name``) and names the first damaged key, so a
damaged record gives one clear error instead of a traceback deep in a reader.
Unknown keys are allowed: newer mlpipe versions may add some.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import PurePath
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

JobStatus = Literal["queued", "running", "completed", "failed", "canceled"]
StepStatus = Literal["queued", "running", "completed", "failed", "canceled", "skipped"]
Count = Annotated[int, Field(ge=0)]


def _iso_time(text: str) -> str:
    datetime.fromisoformat(text)  # ValueError names the problem
    return text


Timestamp = Annotated[str, AfterValidator(_iso_time)]


def _absolute(text: str) -> str:
    if not PurePath(text).is_absolute():
        raise ValueError("expected an absolute path (mlpipe writes the folder's full path)")
    return text


AbsolutePath = Annotated[str, AfterValidator(_absolute)]


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class OutputRecord(_Part):
    """An output of the job or of a step: its type and local path."""

    type: str | None = None
    path: str | None = None


class ErrorGroupRecord(_Part):
    """One kind of error of a parallel step (``mlpipe.runtime.error_groups.ErrorGroup``)."""

    category: str = ""
    label: str = ""  # the signature: exception, masked message
    message: str = ""  # an example: the first occurrence's message line
    attempts: Count = 0  # failed attempts
    mini_batches: Count = 0  # mini-batches it hit
    failed: Count = 0  # mini-batches whose last attempt failed with it


class SummaryRecord(_Part):
    """The counts of a parallel step's summary (``mlpipe.jobs.runner.summary_dict``)."""

    status: str | None = None
    reason: str | None = None
    mini_batches_total: Count = 0
    mini_batches_succeeded: Count = 0
    mini_batches_failed: Count = 0
    mini_batches_reused: Count = 0
    items_total: Count = 0
    items_succeeded: Count = 0
    items_failed: Count = 0
    mini_batches_not_processed: Count = 0
    items_not_processed: Count | None = None  # None: the input's items are not known
    total_known: bool = True
    items_known: bool = True
    duration_seconds: float | None = None
    error_kinds: Count = 0  # distinct errors among the failed attempts (error_groups keeps 10)
    error_groups: list[ErrorGroupRecord] = []
    failed_example: str | None = None  # a failed mini-batch's id (job debug NAME --mini-batch)
    # records written before error_groups: (message, failed attempts, error file)
    top_errors: list[Annotated[tuple[str, int, str], Field(strict=False)]] = []  # JSON arrays
    append_row_file: str | None = None


class ProgressRecord(_Part):
    """A running parallel step's counts (``mlpipe.jobs.recorder.RecordObserver``)."""

    mini_batches_known: Count = 0
    listing_done: bool = False
    mini_batches_done: Count = 0
    mini_batches_failed: Count = 0
    items_succeeded: Count = 0
    items_failed: Count = 0


class StepRecord(_Part):
    """One step of a job."""

    kind: Literal["command", "parallel", "sweep", "spark", "automl", "data_transfer",
                  "import"] | None = None
    display_name: str | None = None
    status: StepStatus
    depends_on: list[str] = []
    step_dir: AbsolutePath | None = None
    logs_dir: AbsolutePath | None = None
    outputs: dict[str, OutputRecord] = {}
    started_at: Timestamp | None = None
    ended_at: Timestamp | None = None
    duration_seconds: float | None = None
    exit_code: int | None = None
    error: str | None = None
    resumed: bool = False
    reused: bool = False
    summary: SummaryRecord | None = None
    progress: ProgressRecord | None = None
    append_row_file: str | None = None


class JobRecord(_Part):
    """``<runs-dir>/<name>/job.json``."""

    name: str | None = None
    kind: str | None = None  # pipeline, or a standalone job's type (command, sweep)
    display_name: str | None = None
    status: JobStatus
    created_at: Timestamp | None = None
    started_at: Timestamp | None = None
    ended_at: Timestamp | None = None
    duration_seconds: float | None = None
    source: str | None = None
    run_dir: AbsolutePath | None = None
    backend: str | None = None
    attempt: Count = 0
    tags: dict[str, Any] = {}
    outputs: dict[str, OutputRecord] = {}
    steps: dict[str, StepRecord] = {}
    error: str | None = None
    pid: int | None = None
    pid_create_time: float | None = None
    allow_external_outputs: bool = False
    outputs_found: list[str] = []


def check_record(record: Any) -> str | None:
    """``None`` when ``record`` (parsed JSON) is a usable job record, else what is wrong:
    the first damaged key, what it holds and what was expected."""
    try:
        JobRecord.model_validate(record)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        if not where:
            return f"expected a JSON object with a 'status', got {_short(record)}"
        message = first["msg"].removeprefix("Value error, ")
        message = message[0].lower() + message[1:]
        return f"key {where!r}: {message} (got {_short(first.get('input'))})"
    return None


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["JobRecord", "JobStatus", "StepRecord", "StepStatus", "check_record"]
