"""A job record as Azure shows a job (``az ml job show``, azure-ai-ml's ``Job``): the one
owner of Azure's status words for local statuses.

=============  ==================================================================
local status   Azure's word
=============  ==================================================================
queued         NotStarted (created, not started yet)
running        Running
completed      Completed
failed         Failed
canceled       Canceled
skipped        NotStarted (a step that never started: its upstream step failed)
=============  ==================================================================
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mlpipe.jobs.record import JobRecord
from mlpipe.runs import JOB_REPORT_FILE

AZURE_STATUS = {"queued": "NotStarted", "running": "Running", "completed": "Completed",
                "failed": "Failed", "canceled": "Canceled", "skipped": "NotStarted"}


def azure_status(status: str | None) -> str:
    """Azure's word for a local status (``completed`` -> ``Completed``)."""
    text = str(status or "unknown")
    return AZURE_STATUS.get(text, text[:1].upper() + text[1:])


def azure_record(record: JobRecord) -> dict[str, Any]:
    """``record`` for machine output: the fields of its ``job.json`` (and ``stale`` when its
    runner is gone), with Azure's status words (the job's and every step's), ``type``,
    ``display_name``, and ``services.Studio.endpoint`` (the job's ``report.html``, else its
    folder, as a ``file://`` URL)."""
    view = record.to_json()
    if record.stale:
        view["stale"] = True
    view["status"] = azure_status(record.status)
    view["steps"] = {name: {**step.to_json(), "status": azure_status(step.status)}
                     for name, step in record.steps.items()}
    view.setdefault("type", "pipeline")
    view.setdefault("display_name", record.name)
    if record.run_dir:
        report = Path(record.run_dir) / JOB_REPORT_FILE
        view["services"] = {"Studio": {"endpoint": (report if report.is_file()
                                                    else Path(record.run_dir)).as_uri()}}
    return view


def azure_children(record: JobRecord) -> list[dict[str, Any]]:
    """The steps of a job as az lists child jobs (``job list --parent-job-name``): ``name``
    (the child job's, ``<job>_<step>``: what ``${{name}}`` is in a step's output path and
    what ``job download -n`` takes), ``display_name`` (the step's), ``status`` in Azure's
    words, ``type``, and the step's recorded fields."""
    from mlpipe.compiler.outputs import child_job_name  # noqa: PLC0415 - the rule's owner

    return [{**step.to_json(), "name": child_job_name(str(record.name), name),
             "display_name": step.display_name or name,
             "status": azure_status(step.status), "type": step.kind or "command",
             "parent_job_name": record.name}
            for name, step in record.steps.items()]


__all__ = ["AZURE_STATUS", "azure_children", "azure_record", "azure_status"]
