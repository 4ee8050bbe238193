"""Running one parallel step: snapshot, folders, reports, the driver and the append_row file.

:func:`run_parallel_step` is the runtime's public entry (re-exported by
:mod:`mlpipe.runtime`); see docs/runtime.md.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Iterable, Sequence, Sized
from datetime import datetime, timezone
from pathlib import Path

from mlpipe.data.minibatch import MiniBatch
from mlpipe.import_mirrors import mode as import_mirrors_mode
from mlpipe.plan import ParallelStep, streams
from mlpipe.runtime.appendrow import append_row_target
from mlpipe.runtime.backends import Backend, get_backend
from mlpipe.runtime.concurrency import worker_names
from mlpipe.runtime.faults import describe_fault
from mlpipe.runtime.heap import keep_heap_small
from mlpipe.runtime.input_count import InputCounter
from mlpipe.runtime.journal import Journal
from mlpipe.runtime.read_only import make_copies, step_view
from mlpipe.runtime.records import StepObserver, StepSummary
from mlpipe.runtime.results import RowFormat
from mlpipe.runtime.snapshot import snapshot_code
from mlpipe.runtime.step_logs import StepLogs
from mlpipe.runtime.worker import DEFAULT_LOADER, WorkerConfig
from mlpipe.wording import plural


def run_parallel_step(step: ParallelStep, *, backend: str | Backend = "local",
                      observers: Sequence[StepObserver] = (), cancel: threading.Event | None = None,
                      progress: bool = False, resume: bool = False,
                      mini_batches: Iterable[MiniBatch] | None = None,
                      loader: str = DEFAULT_LOADER) -> StepSummary:
    """Run one parallel step and return its summary.

    Snapshots ``step.code_dir`` into ``step.snapshot_dir``, creates the output
    folders, runs every mini-batch on ``backend``'s workers, writes the
    append_row file and the reports under ``step.logs_dir``. User-code failures,
    thresholds, bad input data and ``cancel`` give a ``Failed``/``Canceled``
    summary; nothing is raised for them. ``resume=True`` skips the mini-batches
    recorded as succeeded in ``step.state_dir`` by an earlier run.

    ``mini_batches`` replaces the data layer's listing (benchmarks, other fronts)
    and ``loader`` (``"module:function"``) the function workers load them with.
    """
    keep_heap_small()  # a driver frees as much as it allocates: give large blocks back
    began = datetime.now(timezone.utc)  # the step's duration counts its set-up and its rows
    snapshot_code(step.code_dir, step.snapshot_dir, step.additional_includes)
    for output in step.outputs.values():
        Path(output.folder).mkdir(parents=True, exist_ok=True)
    Path(step.logs_dir).mkdir(parents=True, exist_ok=True)
    Path(step.state_dir).mkdir(parents=True, exist_ok=True)
    if not resume:  # a replacement worker adds to its predecessor's profile, a new run does not
        shutil.rmtree(StepLogs.of(step.logs_dir).profile, ignore_errors=True)

    all_observers = [*_report_observers(step, progress, resume), *observers]
    logger = _driver_logger(all_observers)
    data_errors = _data_errors()
    setup_errors: tuple[type[BaseException], ...] = (ValueError, *data_errors)
    try:
        row_format = _row_format(step)
        listing = mini_batches if mini_batches is not None else _iter_mini_batches(step)
    except setup_errors as error:
        return _failed_before_start(str(error), all_observers, logger, began)

    from mlpipe.runtime.driver import Driver  # noqa: PLC0415 - keeps `import mlpipe.runtime` light

    view = step_view(step)  # what its workers see: ro_mount inputs read-only, download copies
    try:
        make_copies(view)
    except OSError as error:
        return _failed_before_start(f"a download input cannot be copied: "
                                    f"{describe_fault(error)}", all_observers, logger, began)
    config = WorkerConfig(
        code_dir=step.snapshot_dir, entry_script=step.entry_script, logs_dir=step.logs_dir,
        output_dir=output_dir(step), working_root=str(Path(step.state_dir) / "working"),
        program_arguments=tuple(step.program_arguments),
        environment_variables=step.environment_variables, logging_level=step.logging_level,
        row_format=row_format, loader=loader, profiling_module=step.prs.profiling_module,
        source_dir=step.code_dir, import_mirrors=import_mirrors_mode(),
        stand_ins=step.stand_ins, read_only=view or None,
        output_folders=tuple(dict.fromkeys(output.folder for output in step.outputs.values())),
        # the local inputs a worker must see: a streamed datastore input's path is the local
        # folder its blobs are read into (a worker reads the account, not that folder); a
        # downloaded one's is the copy the driver made in the run folder, which a worker on
        # another machine does not see (its preflight leaves it out, naming the input)
        inputs=tuple((name, value.path) for name, value in step.inputs.items()
                     if value.is_data and value.path is not None
                     and not streams(value, major=name == step.input_data)),
    )
    target = None
    if step.append_row_to:
        output = step.outputs[step.append_row_to]
        target = append_row_target(output.path, output.is_file, step.prs.append_row_file_name)
    try:
        store = Journal(step.state_dir, resume=resume, rows_file=target, logger=logger)
    except OSError as error:  # nothing is removed: what the journal holds stays for later
        return _failed_before_start(f"the step's journal cannot be used: "
                                    f"{describe_fault(error)}", all_observers, logger, began)
    driver = Driver(step, get_backend(backend), worker_names(step), config, listing, store,
                    observers=all_observers, cancel=cancel, logger=logger, data_errors=data_errors,
                    counter=_counter(step, mini_batches))
    try:
        summary = driver.run(started_at=began)
        if target is not None:
            _write_rows(store, summary, logger)
            summary.ended_at = datetime.now(timezone.utc)
    finally:
        store.close()
    _finish(all_observers, summary, logger)
    return summary


def _counter(step: ParallelStep, mini_batches: Iterable[MiniBatch] | None) -> InputCounter | None:
    """The counting pass over the step's input; for mini-batches given as a sized collection
    (a list), its length; else none."""
    if mini_batches is None:
        return InputCounter(step)
    if not isinstance(mini_batches, Sized):
        return None
    from mlpipe.data.batches import InputCount  # noqa: PLC0415

    return InputCounter.given(InputCount(len(mini_batches), None))


def _failed_before_start(reason: str, observers: Sequence[StepObserver],
                         logger: logging.Logger, began: datetime) -> StepSummary:
    """The summary of a step that failed before its first mini-batch, said and reported."""
    summary = StepSummary(status="Failed", reason=reason, started_at=began,
                          ended_at=datetime.now(timezone.utc))
    logger.error("%s", reason)
    _finish(observers, summary, logger)
    return summary


def _write_rows(store: Journal, summary: StepSummary, logger: logging.Logger) -> None:
    """Write the append_row file from the journal; the step fails when it cannot, or when
    rows failed their checksum (they were left out and run again on resume)."""
    try:
        store.write()  # this run's mini-batches, in input (mini-batch index) order
    except OSError as error:  # the journal stays in the state folder for a resume
        _failed(summary, f"cannot write the append_row file: {describe_fault(error)}")
        logger.error("%s", summary.reason)
        return
    summary.append_row_file = str(store.rows_file)
    logger.info("append_row: wrote %s", store.rows_file)
    if store.damaged:
        shown = ", ".join(store.damaged[:5]) + (", ..." if len(store.damaged) > 5 else "")
        _failed(summary, f"the journal's rows of {plural(len(store.damaged), 'mini-batch')} "
                         f"({shown}) failed their checksum: they are left out of the append_row "
                         "file; resume the job to run them again")
        logger.error("%s", summary.reason)


def output_dir(step: ParallelStep) -> str:
    """``AZUREML_BI_OUTPUT_PATH``: the append_row output's folder, else the first output's."""
    if step.append_row_to and step.append_row_to in step.outputs:
        return step.outputs[step.append_row_to].folder
    for output in step.outputs.values():
        return output.folder
    path = Path(step.step_dir) / "outputs"
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def _row_format(step: ParallelStep) -> RowFormat | None:
    """How append_row writes rows (``None``: summary-only); the ``to_csv`` options of
    parallel_run_step.settings.json come in the plan (the compiler read the file)."""
    if not step.append_row_to:
        return None
    return RowFormat(header=step.prs.append_row_dataframe_header, to_csv=step.append_row_csv)


def _driver_logger(observers: Iterable[StepObserver]) -> logging.Logger:
    """The first observer's ``logger`` (the reports' master_role log), else ``mlpipe.runtime``."""
    for observer in observers:
        logger = getattr(observer, "logger", None)
        if isinstance(logger, logging.Logger):
            return logger
    return logging.getLogger("mlpipe.runtime")


def _iter_mini_batches(step: ParallelStep) -> Iterable[MiniBatch]:
    from mlpipe.data import iter_mini_batches  # noqa: PLC0415

    return iter_mini_batches(step, file_sizes=False)  # sizes count for tables alone (tuning)


def _data_errors() -> tuple[type[BaseException], ...]:
    from mlpipe.data import DataError  # noqa: PLC0415

    return (DataError,)


def _report_observers(step: ParallelStep, progress: bool, resume: bool) -> list[StepObserver]:
    """The report writers of mlpipe.runtime.reports and, when asked, the progress display."""
    from mlpipe.runtime.reports.observer import StepReports  # noqa: PLC0415
    from mlpipe.runtime.reports.resource_samples import ResourceSampler  # noqa: PLC0415

    observers: list[StepObserver] = [StepReports(step, resume=resume)]
    if step.prs.resource_monitor_interval > 0:  # 0 turns resource monitoring off
        observers.append(ResourceSampler(step))
    if progress:
        from mlpipe.runtime.reports.progress_bar import ProgressDisplay  # noqa: PLC0415

        observers.append(ProgressDisplay(step))
    return observers


def _finish(observers: Sequence[StepObserver], summary: StepSummary,
            logger: logging.Logger) -> None:
    """Tell every observer the step ended; one that fails makes the step ``Failed``."""
    for observer in observers:
        try:
            observer.step_finished(summary)
        except Exception as error:  # noqa: BLE001 - reported as the step's failure
            where = f"{type(observer).__name__}.step_finished"
            logger.exception("Observer %s failed", where)
            _failed(summary, f"{where} failed: {describe_fault(error)}")


def _failed(summary: StepSummary, reason: str) -> None:
    """Mark ``summary`` failed for ``reason`` (an earlier reason is kept first)."""
    if summary.status == "Completed" or not summary.reason:
        summary.reason = reason
    summary.status = "Failed"


__all__ = ["output_dir", "run_parallel_step"]
