"""What kind of Azure ML document a YAML is: pipeline job, component, other job, unknown.

``mlpipe job validate`` uses :func:`file_kind` to pick the validator (or skip a file);
the front door (:func:`mlpipe.jobs.submit`) uses :func:`not_runnable` to refuse anything
but a pipeline job or a standalone command or sweep job (:data:`RUNNABLE_TYPES`, run as
their one step) before it compiles.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from mlpipe.diagnostics import Diagnostic, Location
from mlpipe.schema.yamlio import PositionMap

OTHER_JOB_TYPES = frozenset({"sweep", "spark", "automl", "import", "data_transfer",
                             "finetuning"})
_JOB_SCHEMA = re.compile(r"/(\w+)job\.schema\.json", re.I)
# Standalone job types ``mlpipe job validate`` validates (schema/standalone.py); the job's
# ``$schema`` names the type when ``type`` is absent (``commandJob.schema.json``: command).
STANDALONE_TYPES = ("command", "sweep", "spark", "automl")
# Standalone job types ``mlpipe job create`` runs, as a job of one step.
RUNNABLE_TYPES = ("command", "sweep")


class _Document(Protocol):
    @property
    def data(self) -> Any: ...
    @property
    def positions(self) -> PositionMap: ...
    @property
    def source(self) -> str: ...


def file_kind(data: Any) -> str:
    """``pipeline``, ``component``, ``job`` (a standalone non-pipeline job) or ``unknown``."""
    if not isinstance(data, dict):
        return "unknown"
    kind = data.get("type")
    if not isinstance(kind, str):  # a list, mapping or number is reported by the schema
        kind = None
    schema_value = data.get("$schema")
    schema = schema_value.lower() if isinstance(schema_value, str) else ""
    job_schema = _JOB_SCHEMA.search(schema)
    if "promptflow" in schema:
        return "unknown"
    if job_schema:
        return "pipeline" if job_schema.group(1) == "pipeline" else "job"
    if "component" in schema:
        return "component"
    if (kind or "").endswith("Component"):
        return "component"
    kind = kind.lower() if kind else None
    if kind == "pipeline":
        return "pipeline"
    if kind in ("parallel", "command"):
        return "job" if looks_like_job(data) else "component"
    if kind in OTHER_JOB_TYPES:
        return "job"
    if "azureml" in schema:
        return "pipeline"
    if kind is None and not schema and isinstance(data.get("command"), str):
        # no type: azure-ai-ml's load_job and load_component both read a command
        return "job" if looks_like_job(data) else "component"
    return "unknown"


# Keys a job has and a component never has, and the other way round.
_JOB_ONLY_KEYS = ("compute", "experiment_name", "limits", "services", "identity")
_COMPONENT_ONLY_KEYS = ("version", "is_deterministic", "additional_includes")


def looks_like_job(data: dict[str, Any]) -> bool:
    """A ``type: command`` / ``parallel`` file without ``$schema`` is a job, not a component,
    when it has a job's keys (``compute``, ``experiment_name``, ...) or gives its inputs
    values (``n: 3``, ``{type: uri_folder, path: ./data}``) instead of declaring them; a
    file with a component's own keys (``version``, ``is_deterministic``) is a component,
    whatever else it has."""
    if any(key in data for key in _COMPONENT_ONLY_KEYS):
        return False
    if any(key in data for key in _JOB_ONLY_KEYS):
        return True
    inputs = data.get("inputs")
    return isinstance(inputs, dict) and any(
        not isinstance(value, dict) or "path" in value or "value" in value
        for value in inputs.values() if value is not None)


def job_type(data: Any) -> str | None:
    """The type of a standalone job file (lower-cased ``type``, else the kind its
    ``$schema`` names: ``commandJob.schema.json`` is ``command``), or ``None``."""
    if not isinstance(data, dict):
        return None
    kind = data.get("type")
    if isinstance(kind, str):
        return kind.lower()
    schema = data.get("$schema")
    named = _JOB_SCHEMA.search(schema) if isinstance(schema, str) else None
    if named is None:  # no type: azure-ai-ml's load_job reads a command job
        return "command" if not schema and isinstance(data.get("command"), str) else None
    return {"automl": "automl", "datatransfer": "data_transfer"}.get(
        named.group(1).lower(), named.group(1).lower())


def not_runnable(doc: _Document) -> Diagnostic | None:
    """Why a readable YAML is not a job mlpipe runs (a pipeline job, or a standalone job of
    :data:`RUNNABLE_TYPES`), or ``None``."""
    if not isinstance(doc.data, dict):
        return None  # unreadable or not a mapping: the compiler reports it
    kind = file_kind(doc.data)
    where = (doc.positions.locate_value(("type",)) if "type" in doc.data
             else Location(doc.source, 1, 1))
    if kind == "component":
        what = doc.data.get("type")
        return Diagnostic(
            f"this is a {what} component, not a pipeline job", location=where,
            code="not-a-pipeline",
            hint="to run it, name it in a pipeline step as 'component: ./file.yml'; "
                 "to check it: mlpipe component validate FILE")
    if kind == "job":
        kind_name = job_type(doc.data)
        if kind_name in RUNNABLE_TYPES:
            return None
        return Diagnostic(
            f"this is a standalone {kind_name or 'Azure ML'} job: mlpipe runs pipeline jobs "
            f"(type: pipeline) and standalone {' and '.join(RUNNABLE_TYPES)} jobs",
            location=where, code="not-a-pipeline",
            hint="to check it: mlpipe job validate FILE" if kind_name in STANDALONE_TYPES
            else None)
    if kind == "unknown" and "jobs" not in doc.data:
        return Diagnostic(
            "not an Azure ML pipeline job: expected 'type: pipeline' and a 'jobs' mapping",
            location=where, code="not-a-pipeline")
    return None
