"""The base of every error mlpipe raises on purpose, and where each one lives.

Catch :class:`MlpipeError` to handle any of them (the CLI does: each becomes a message
and an exit code, never a traceback). Each class also keeps the built-in base it always
had, so code catching ``ValueError``, ``LookupError`` or ``RuntimeError`` keeps working::

    MlpipeError
    ├── ValidationError            mlpipe.diagnostics   invalid YAML / SDK job, with diagnostics
    │   ├── RemoteAssetsError      mlpipe.jobs.preflight  cloud-only references, nothing started
    │   └── NotAPipelineError      mlpipe.jobs.front_door   a component or another job type
    ├── InputLimitError (ValueError)  mlpipe.limits  a YAML/filter input over a hard limit
    ├── SettingError (ValueError)  mlpipe.schema.ranges  a PRS setting out of its range
    ├── DataError                  mlpipe.data.errors   an input that cannot become mini-batches
    ├── FilterSyntaxError (ValueError)  mlpipe.data.filter_expr  a bad MLTable filter
    ├── OverrideSyntaxError (ValueError)  mlpipe.compiler.overrides  a --set that is not KEY=VALUE
    ├── InitError                  mlpipe.runtime.worker  the entry script's init() failed
    ├── ReturnValueError (ValueError)  mlpipe.runtime.results  run() returned the wrong shape
    ├── BackendError (RuntimeError)  mlpipe.runtime.backends.base  a backend cannot run workers
    ├── BackendUnavailableError (ValueError)  mlpipe.jobs.preflight  unknown / not installed
    ├── JobNotFound (LookupError)  mlpipe.jobs.store    no job of that name
    ├── JobConflictError (RuntimeError)  mlpipe.jobs.store  the name completed or still runs
    │   └── OutputBusyError        mlpipe.jobs.ownership  another job writes that output place
    ├── CancelIncompleteError (ValueError)  mlpipe.jobs.ownership  a dead runner's processes run
    ├── OutputsInTheWayError       mlpipe.jobs.preflight  a user's file or link in the way
    ├── OutputClashError (FileExistsError)  mlpipe.jobs.output_files  a copy over another's file
    ├── DownloadError (LookupError)  mlpipe.jobs.download  a download that cannot be made
    ├── SubmitUsageError (ValueError)  mlpipe.jobs.front_door  runs folder or job name unusable
    ├── NotebookError (ValueError)  mlpipe.scripts    a script or notebook run-script cannot read
    └── NotAvailableLocally (RuntimeError)  mlpipe.sdk.unavailable  a workspace-only call

The azure-core mirrors (mlpipe.sdk.exceptions: AzureError, ResourceNotFoundError, ...) keep
azure-core's own hierarchy instead, so scripts' ``except`` clauses match as in the cloud.

Those lower in the layers (docs/architecture.md) import this module; it imports nothing.
"""

from __future__ import annotations


class MlpipeError(Exception):
    """Something mlpipe refused or could not do; the message says what and why."""


__all__ = ["MlpipeError"]
