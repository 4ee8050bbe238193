"""The job record, ``<runs-dir>/<name>/job.json``: one typed model that the job store
returns, the runner writes and every reader uses (the CLI's views, ``ml_client.jobs``,
report.html, rerun, debug, download, advise).

A record is written by mlpipe, but it lives on disk where anything can damage it (an
editor, a full disk, another tool): reading validates it (:meth:`JobRecord.parse`), and
:func:`check_record` names the first damaged key, so a damaged record gives one clear
error instead of a traceback deep in a reader. Unknown keys are kept (newer mlpipe
versions may add some) and so is the order of the keys read: a record written by an
earlier version is written back byte for byte but for what changed
(:meth:`JobRecord.to_json`; ``tests/jobs/test_record_shapes.py`` reads one record of each
earlier shape). Fields a record does not have take their defaults and are not written.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import PurePath
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_serializer,
    model_validator,
)

JobStatus = Literal["queued", "running", "completed", "failed", "canceled"]
StepStatus = Literal["queued", "running", "completed", "failed", "canceled", "skipped"]
StepKind = Literal["command", "parallel", "sweep", "spark", "automl", "data_transfer", "import"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "canceled"})  # a job that ended
UNFINISHED: frozenset[str] = frozenset({"queued", "running"})
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
    """A mapping of job.json: strict types, unknown keys kept, the order of its keys kept
    when it is written back, assignments validated."""

    model_config = ConfigDict(extra="allow", strict=True, validate_assignment=True)
    _order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _keep_order(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        part = handler(data)
        if isinstance(data, dict) and isinstance(part, _Part):
            part._order = tuple(data)
        return part

    @model_serializer(mode="wrap")
    def _in_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        head = {key: data[key] for key in self._order if key in data}
        return {**head, **{key: value for key, value in data.items() if key not in head}}

    def to_json(self) -> dict[str, Any]:
        """This part as job.json holds it: the keys it was read with, in their order, then
        those set since (never a default nobody set, never ``stale``)."""
        return self.model_dump(mode="json", exclude_unset=True)


class OutputRecord(_Part):
    """An output of a step: its type and local path."""

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


class JobOutputRecord(OutputRecord):
    """A pipeline output: its type and path, and the step output it is bound to."""

    step: str | None = None
    output: str | None = None


class BreachRecord(_Part):
    """The threshold that stopped a parallel step (``mlpipe.runtime.records.ThresholdBreach``)."""

    name: str
    limit: int
    actual: float


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
    started_at: Timestamp | None = None
    ended_at: Timestamp | None = None
    breach: BreachRecord | None = None
    mini_batches_not_processed: Count = 0
    items_not_processed: Count | None = None  # None: the input's items are not known
    total_known: bool = True
    items_known: bool = True
    duration_seconds: float | None = None
    error_groups: list[ErrorGroupRecord] = []
    failed_example: str | None = None  # a failed mini-batch's id (job debug NAME --mini-batch)
    append_row_file: str | None = None
    # records written before error_groups: (message, failed attempts, error file) of the
    # most frequent errors (JSON arrays)
    top_errors: list[Annotated[tuple[str, int, str], Field(strict=False)]] = []
    error_kinds: Count = 0  # distinct errors among the failed attempts (error_groups keeps 10)


class ProgressRecord(_Part):
    """A running parallel step's counts (``mlpipe.jobs.recorder.RecordObserver``)."""

    mini_batches_known: Count = 0
    listing_done: bool = False
    mini_batches_done: Count = 0
    mini_batches_failed: Count = 0
    items_succeeded: Count = 0
    items_failed: Count = 0
    mini_batches_total: Count | None = None  # once the input is counted
    mini_batches_reused: Count = 0  # a resumed step's mini-batches kept from before
    ended_at: Timestamp | None = None

    @property
    def finished(self) -> int:
        """Mini-batches over: done in this run plus reused from an earlier one."""
        return self.mini_batches_done + self.mini_batches_reused


class WorkerRecord(_Part):
    """A worker process a parallel step started (a replaced worker adds its new pid)."""

    node: int
    process: str
    pid: int | None = None


class TrialRecord(_Part):
    """One trial of a sweep step (its primary metric's value under the metric's name)."""

    status: str | None = None
    parameters: dict[str, Any] = {}


class StepRecord(_Part):
    """One step of a job."""

    kind: StepKind | None = None
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
    reused: bool = False  # completed in an earlier run of the job, kept
    progress: ProgressRecord | None = None  # parallel steps, while they run
    workers: list[WorkerRecord] = []
    summary: SummaryRecord | None = None  # parallel steps, once they ended
    append_row_file: str | None = None
    stdout: str | None = None  # command and Spark steps: their output files
    stderr: str | None = None
    std_log: str | None = None
    trials_table: str | None = None  # sweep steps
    best_trial: str | None = None
    trials: dict[str, TrialRecord] = {}
    skipped_by_user: bool = False  # --skip-step: its outputs were given
    note: str | None = None


class JobSettingsRecord(_Part):
    """The job's ``settings`` that the runner applied."""

    continue_on_step_failure: bool = False


class JobRecord(_Part):
    """``<runs-dir>/<name>/job.json``."""

    name: str | None = None
    kind: str | None = None  # pipeline, or a standalone job's type (command, sweep)
    display_name: str | None = None
    description: str | None = None
    experiment_name: str | None = None
    tags: dict[str, Any] = {}
    status: JobStatus
    created_at: Timestamp | None = None
    started_at: Timestamp | None = None
    ended_at: Timestamp | None = None
    duration_seconds: float | None = None
    source: str | None = None
    source_yaml: str | None = None
    run_dir: AbsolutePath | None = None
    backend: str | None = None
    mlpipe_version: str | None = None
    attempt: Count = 0
    settings: JobSettingsRecord | None = None
    allow_external_outputs: bool = False
    outputs: dict[str, JobOutputRecord] = {}
    steps: dict[str, StepRecord] = {}
    error: str | None = None
    pid: int | None = None
    pid_create_time: float | None = None
    host: str | None = None
    outputs_found: list[str] = []  # files outputs would overwrite, named before the run
    processes_ended: list[str] = []  # what job cancel ended of a dead runner's steps
    stale: bool = Field(default=False, exclude=True)  # its runner is gone (not written)

    @classmethod
    def parse(cls, data: Any) -> JobRecord:
        """The record of parsed JSON ``data``; :class:`ValueError` naming what is wrong."""
        problem = check_record(data)
        if problem:
            raise ValueError(f"not a job record: {problem}")
        return cls.model_validate(data)

    def clone(self) -> JobRecord:
        """An independent copy (steps and all)."""
        return self.model_copy(deep=True)

    @property
    def ended(self) -> bool:
        return self.status in TERMINAL

    @property
    def running(self) -> bool:
        """Recorded as queued or running, and its runner is alive."""
        return self.status in UNFINISHED and not self.stale

    def parallel_steps(self) -> list[str]:
        return [name for name, step in self.steps.items() if step.kind == "parallel"]


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


__all__ = ["TERMINAL", "UNFINISHED", "BreachRecord", "ErrorGroupRecord", "JobOutputRecord",
           "JobRecord", "JobSettingsRecord", "JobStatus", "OutputRecord", "ProgressRecord",
           "StepKind", "StepRecord", "StepStatus", "SummaryRecord", "TrialRecord",
           "WorkerRecord", "check_record"]
