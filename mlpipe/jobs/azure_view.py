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

AZURE_STATUS = {"queued": "NotStarted", "running": "Running", "completed": "Completed",
                "failed": "Failed", "canceled": "Canceled", "skipped": "NotStarted"}


def azure_status(status: str | None) -> str:
    """Azure's word for a local status (``completed`` -> ``Completed``)."""
    text = str(status or "unknown")
    return AZURE_STATUS.get(text, text[:1].upper() + text[1:])


def azure_record(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` (``job.json``) for machine output: its fields, with Azure's status words
    (the job's and every step's), ``type``, ``display_name``, and ``services.Studio.endpoint``
    (the job's ``report.html``, else its folder, as a ``file://`` URL)."""
    view = dict(record)
    view["status"] = azure_status(record.get("status"))
    view["steps"] = {name: {**step, "status": azure_status(step.get("status"))}
                     for name, step in (record.get("steps") or {}).items()}
    view.setdefault("type", "pipeline")
    view.setdefault("display_name", record.get("name"))
    run_dir = record.get("run_dir")
    if run_dir:
        from mlpipe.runtime.reports.html import REPORT_NAME  # noqa: PLC0415 - the page's code

        report = Path(run_dir) / REPORT_NAME
        view["services"] = {"Studio": {"endpoint": (report if report.is_file()
                                                    else Path(run_dir)).as_uri()}}
    return view


def azure_children(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps of a job as az lists child jobs (``job list --parent-job-name``): ``name``
    (the child job's, ``<job>_<step>``: what ``${{name}}`` is in a step's output path and
    what ``job download -n`` takes), ``display_name`` (the step's), ``status`` in Azure's
    words, ``type``, and the step's recorded fields."""
    from mlpipe.compiler.outputs import child_job_name  # noqa: PLC0415 - the rule's owner

    return [{**step, "name": child_job_name(str(record.get("name")), name),
             "display_name": step.get("display_name") or name,
             "status": azure_status(step.get("status")), "type": step.get("kind") or "command",
             "parent_job_name": record.get("name")}
            for name, step in (record.get("steps") or {}).items()]


__all__ = ["AZURE_STATUS", "azure_children", "azure_record", "azure_status"]
