"""The base of every error mlpipe raises on purpose, and where each one lives.

Catch :class:`MlpipeError` to handle any of them. Each error carries what the command
line says about it and the exit code it ends with (:attr:`MlpipeError.exit_code`,
:meth:`MlpipeError.details`, :meth:`MlpipeError.summary`): the one error handler around
every command (``mlpipe/cli/error_handler.py``) prints them, so no command picks a code or
a wording of its own. Each class also keeps the built-in base it always had, so code
catching ``ValueError``, ``LookupError`` or ``RuntimeError`` keeps working::

    MlpipeError                                        exit 1
    ├── UsageError (ValueError)    mlpipe.errors        asked what cannot be done: exit 2
    │   ├── SubmitUsageError       mlpipe.jobs.front_door  runs folder or job name unusable
    │   ├── OverrideSyntaxError    mlpipe.compiler.overrides  a --set that is not KEY=VALUE
    │   ├── JobNameError           mlpipe.jobs.store    a name that is no job name
    │   ├── RerunUsageError        mlpipe.jobs.rerun    a --step the job does not have
    │   ├── DebugUsageError        mlpipe.jobs.debug    several parallel steps and no --step
    │   ├── AdviceUsageError       mlpipe.runtime.tuning.advice  a --set advise cannot use
    │   ├── AssumptionError        mlpipe.runtime.tuning.cloud  a wrong --assume KEY=VALUE
    │   └── UnknownVmSize          mlpipe.runtime.tuning.cloud  no such --instance-type
    ├── ValidationError            mlpipe.diagnostics   invalid YAML / SDK job, with diagnostics
    │   ├── RemoteAssetsError      mlpipe.jobs.preflight  cloud-only references, nothing started
    │   ├── CloudDataError         mlpipe.jobs.cloud_data  cloud data unusable, nothing started
    │   └── NotAPipelineError      mlpipe.jobs.front_door   a component or another job type
    ├── InputLimitError (ValueError)  mlpipe.limits  a YAML/filter input over a hard limit
    ├── SettingError (ValueError)  mlpipe.schema.ranges  a PRS setting out of its range
    ├── DataError                  mlpipe.data.errors   an input that cannot become mini-batches
    ├── DatastoreRefused           mlpipe.cli.datastore_cmd  not a usable datastore, or none
    ├── FilterSyntaxError (ValueError)  mlpipe.data.filter_expr  a bad MLTable filter
    ├── InitError                  mlpipe.runtime.worker  the entry script's init() failed
    ├── ReturnValueError (ValueError)  mlpipe.runtime.results  run() returned the wrong shape
    ├── BackendError (RuntimeError)  mlpipe.runtime.backends.base  a backend cannot run workers
    ├── BackendUnavailableError (ValueError)  mlpipe.jobs.preflight  unknown / not installed
    ├── JobNotFound (LookupError)  mlpipe.jobs.store    no job of that name ("did you mean")
    ├── RecordError (ValueError)   mlpipe.jobs.store    a job.json that cannot be read
    ├── JobConflictError (RuntimeError)  mlpipe.jobs.store  the name completed or still runs
    │   └── OutputBusyError        mlpipe.jobs.ownership  another job writes that output place
    ├── CancelIncompleteError (ValueError)  mlpipe.jobs.ownership  a dead runner's processes run
    ├── OutputsInTheWayError       mlpipe.jobs.preflight  a user's file or link in the way
    ├── OutputClashError (FileExistsError)  mlpipe.jobs.output_files  a copy over another's file
    ├── JobStopped                 mlpipe.jobs.front_door  the runner could not write on
    ├── DownloadError (LookupError)  mlpipe.jobs.download  the job runs, no such output, a clash
    ├── DebugError (ValueError)    mlpipe.jobs.debug    no such step or mini-batch to debug
    ├── NotebookError (ValueError)  mlpipe.scripts    a script or notebook run-script cannot read
    └── NotAvailableLocally (RuntimeError)  mlpipe.unavailable  a workspace-only call

The azure-core mirrors (mlpipe.sdk.exceptions: AzureError, ResourceNotFoundError, ...) keep
azure-core's own hierarchy instead, so scripts' ``except`` clauses match as in the cloud.

Those lower in the layers (docs/architecture.md) import this module; it imports nothing.
"""

from __future__ import annotations

from typing import ClassVar


class MlpipeError(Exception):
    """Something mlpipe refused or could not do; the message says what and why.

    The command line says :meth:`details` (as they are), then ``mlpipe: `` and
    :meth:`summary`, and exits with :attr:`exit_code`."""

    exit_code: ClassVar[int] = 1

    def details(self) -> tuple[str, ...]:
        """Lines said before the summary, as they are (diagnostics with file:line:col)."""
        return ()

    def summary(self) -> str:
        """What went wrong, said after ``mlpipe: `` (the message, by default)."""
        return str(self)


class UsageError(MlpipeError, ValueError):
    """The command line (or the call) asks for something that cannot be done as asked:
    exit 2, said as ``mlpipe: error: ...`` (argparse's own usage errors exit 2 too)."""

    exit_code: ClassVar[int] = 2


__all__ = ["MlpipeError", "UsageError"]
