"""``mlpipe job debug``: one mini-batch of a job's parallel step, in this process.

The step's entry script runs as a worker runs it (:class:`~mlpipe.runtime.worker.WorkerRuntime`:
the job's code snapshot, ``sys.argv``, environment variables, working directory,
``init()``, then ``run()``, then ``shutdown()``), in the foreground, so ``breakpoint()``
works and ``pdb`` can open on the user's exception. Nothing of the job changes: the
worker's logs, output folder (``AZUREML_BI_OUTPUT_PATH``) and working folder are in a
scratch folder named on the console and removed at the end. The step may be left out when
the job has one parallel step, and the mini-batch named by an unambiguous prefix of its id.
"""

from __future__ import annotations

import os
import pdb
import pprint
import shutil
import sys
import tempfile
from pathlib import Path

from mlpipe.compiler import compile_pipeline
from mlpipe.data.minibatch import MiniBatch
from mlpipe.diagnostics import ValidationError
from mlpipe.errors import MlpipeError, UsageError
from mlpipe.import_mirrors import mode as import_mirrors_mode
from mlpipe.jobs.console import Echo
from mlpipe.jobs.record import JobRecord
from mlpipe.plan import ParallelStep
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.worker import InitError, WorkerConfig, WorkerRuntime
from mlpipe.wording import plural


class DebugError(MlpipeError, ValueError):
    """The job, step or mini-batch to debug cannot be found or prepared."""


class DebugUsageError(UsageError, DebugError):
    """``--step`` is needed: the job has several parallel steps (or none); exit 2."""


def debug_mini_batch(record: JobRecord, step_name: str | None, mini_batch_id: str, *,
                     post_mortem: bool = False, echo: Echo = print) -> int:
    """Run ``mini_batch_id`` (or the one mini-batch whose id starts with it) of
    ``step_name`` (``None``: the job's one parallel step) of the job ``record`` (its
    ``job.json``); 0 when run() returned (its value is printed), 1 when init() or run()
    raised."""
    step = _step(record, step_name)
    mini_batch = _mini_batch(record, step, mini_batch_id)
    scratch = Path(tempfile.mkdtemp(prefix=f"mlpipe-debug-{record.name}-{step.name}-"))
    try:
        return _debug(step, mini_batch, scratch, post_mortem, echo)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _debug(step: ParallelStep, mini_batch: MiniBatch, scratch: Path, post_mortem: bool,
           echo: Echo) -> int:
    echo(f"debug: mini-batch {mini_batch.id} of step {step.name} "
         f"({plural(mini_batch.items, 'item') if mini_batch.items is not None else '? items'}); "
         f"scratch folder (removed at the end): {scratch}")
    config = WorkerConfig(
        code_dir=step.snapshot_dir, entry_script=step.entry_script,
        logs_dir=str(scratch / "logs"), output_dir=str(scratch / "outputs"),
        working_root=str(scratch / "working"), program_arguments=tuple(step.program_arguments),
        environment_variables=step.environment_variables, logging_level=step.logging_level,
        capture_output=False, source_dir=step.code_dir, import_mirrors=import_mirrors_mode())
    (scratch / "outputs").mkdir(parents=True)
    runtime = WorkerRuntime(config, WorkerInfo(0, "debug"))
    cwd = os.getcwd()
    try:
        try:
            runtime.start()
        except InitError as error:
            echo((error.traceback or str(error)).rstrip())
            return 1
        try:
            value = runtime.call(mini_batch)
        except BaseException as error:  # noqa: BLE001 - shown as the user's code raised it
            echo(runtime.user_traceback(error).rstrip())
            if post_mortem:
                pdb.post_mortem(error.__traceback__)
            return 1
        echo("run() returned:")
        echo(pprint.pformat(value))
        return 0
    finally:
        problem = runtime.stop()
        if problem:
            echo(f"shutdown() raised:\n{problem.rstrip()}")
        os.chdir(cwd)
        sys.stdout.flush()


def _mini_batch(record: JobRecord, step: ParallelStep, wanted: str) -> MiniBatch:
    """The mini-batch whose id is ``wanted``, else the one whose id starts with it."""
    from mlpipe.data import iter_mini_batches  # noqa: PLC0415 - pandas/pyarrow on demand

    found: list[MiniBatch] = []
    for mini_batch in iter_mini_batches(step):
        if mini_batch.id == wanted:
            return mini_batch
        if wanted and mini_batch.id.startswith(wanted):
            found.append(mini_batch)
    if len(found) == 1:
        return found[0]
    listing = (f"mlpipe job show {record.name} --mini-batches"
               + (f" --step {step.name}" if len(record.parallel_steps()) > 1 else ""))
    if found:
        shown = ", ".join(mb.id for mb in found[:5]) + (", ..." if len(found) > 5 else "")
        raise DebugError(f"{plural(len(found), 'mini-batch')} of step {step.name!r} start with "
                         f"{wanted!r} ({shown}): give more of the id (list them: {listing})")
    raise DebugError(f"step {step.name!r} has no mini-batch {wanted!r} (list them: {listing})")


def _step(record: JobRecord, step_name: str | None) -> ParallelStep:
    if step_name is None:
        parallel = record.parallel_steps()
        if len(parallel) != 1:
            raise DebugUsageError(
                f"job {record.name!r} has {plural(len(parallel), 'parallel step')}"
                f"{': ' + ', '.join(parallel) if parallel else ''}; name one with --step")
        step_name = parallel[0]
    source = record.source
    if not source or not Path(source).is_file():
        raise DebugError(f"job {record.name!r}: its pipeline file {source!r} is gone")
    if record.run_dir is None:
        raise DebugError(f"job {record.name!r}: its record names no run folder")
    try:
        plan = compile_pipeline(source, runs_dir=str(Path(record.run_dir).parent),
                                job_name=str(record.name),
                                allow_external_outputs=record.allow_external_outputs)
    except ValidationError as error:  # its diagnostics, then this line
        raise error.about(f"job {record.name!r}: its pipeline {source}",
                          "it no longer compiles") from None
    steps = {step.name: step for step in plan.steps}
    step = steps.get(step_name)
    if not isinstance(step, ParallelStep):
        parallel = [name for name, s in steps.items() if isinstance(s, ParallelStep)]
        raise DebugError(f"job {record.name!r} has no parallel step {step_name!r} "
                         f"(parallel steps: {', '.join(parallel) or 'none'})")
    if not Path(step.snapshot_dir).is_dir():
        raise DebugError(f"step {step_name!r} has no code snapshot at {step.snapshot_dir} "
                         "(it never started): run the job first")
    return step


__all__ = ["DebugError", "DebugUsageError", "debug_mini_batch"]
