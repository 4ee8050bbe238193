"""``PipelineJob``: a pipeline built in Python or loaded from YAML.

Its YAML-equivalent dict (:meth:`PipelineJob.to_dict`) is the one document every
other layer reads: ``dump`` writes it, and validating or running a job hands it
to the schema layer and the compiler exactly as if it had been read from a file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import mlpipe.sdk.running as running
from mlpipe.diagnostics import Location
from mlpipe.sdk.bindings import no_such, value_to_yaml
from mlpipe.sdk.entities import azureml_reference
from mlpipe.sdk.io import Output
from mlpipe.sdk.nodes import Node, job_positions
from mlpipe.sdk.paths import absolute_paths, rebase_paths
from mlpipe.sdk.tracking import Emitter, Record, Tracked, drop_none
from mlpipe.sdk.yamlio import dump_text

PIPELINE_SCHEMA = "https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json"
_SECTIONS = {"inputs": "input", "outputs": "output", "jobs": "step"}


class PipelineJobSettings(Record):
    """``settings`` of a pipeline job (``default_compute``, ``continue_on_step_failure``, ...)."""

    _keys = ("default_compute", "default_datastore", "continue_on_step_failure", "force_rerun")

    def __init__(self, default_datastore: str | None = None,
                 default_compute: str | None = None,
                 continue_on_step_failure: bool | None = None,
                 force_rerun: bool | None = None, **kwargs: Any) -> None:
        self.default_compute = default_compute
        self.default_datastore = default_datastore
        self.continue_on_step_failure = continue_on_step_failure
        self.force_rerun = force_rerun
        self._finish(kwargs)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "default_compute":
            value = azureml_reference(value, "serverless")
        elif name == "default_datastore":
            value = azureml_reference(value)
        super().__setattr__(name, value)


class AttrDict(dict[str, Any]):
    """``pipeline_job.inputs`` / ``.outputs`` / ``.jobs``: a dict whose keys are also
    attributes, as in azure-ai-ml (``job.outputs.scored``, ``job.outputs["scored"]``)."""

    def __init__(self, kind: str, values: Mapping[str, Any] | None = None) -> None:
        super().__init__(values or {})
        object.__setattr__(self, "_kind", kind)

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        try:
            return self[key]
        except KeyError:
            raise no_such(self._kind, key, self, "the pipeline job has ") from None

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value

    def __delattr__(self, key: str) -> None:
        del self[key]


class PipelineJob(Tracked, running.Job):
    """A pipeline job: steps in ``jobs``, pipeline ``inputs``/``outputs`` and ``settings``.

    ``base_path`` is the folder relative paths are relative to (the script's
    folder for a ``@pipeline`` job, the YAML's folder for a loaded one); ``source``
    is the file diagnostics and the plan name as the job's source.
    """

    def __init__(self, *, jobs: Mapping[str, Node] | None = None,
                 inputs: Mapping[str, Any] | None = None,
                 outputs: Mapping[str, Output | None] | None = None,
                 settings: PipelineJobSettings | Mapping[str, Any] | None = None,
                 name: str | None = None, display_name: str | None = None,
                 description: str | None = None, experiment_name: str | None = None,
                 tags: dict[str, str] | None = None, properties: dict[str, Any] | None = None,
                 compute: str | None = None, identity: Any = None,
                 base_path: str | Path | None = None, source: str | Path | None = None,
                 extra: Mapping[str, Any] | None = None, origin: Location | None = None,
                 yaml_positions: Any = None) -> None:
        self.name = name
        self.display_name = display_name
        self.description = description
        self.experiment_name = experiment_name
        self.tags = dict(tags or {})  # azure-ai-ml's defaults: {} rather than None
        self.properties = dict(properties or {})
        self.settings = (settings if isinstance(settings, PipelineJobSettings)
                         else PipelineJobSettings(**dict(settings or {})))
        self.inputs: AttrDict = AttrDict("input", inputs)
        self.outputs: AttrDict = AttrDict("output", outputs)
        self.jobs: AttrDict = AttrDict("step", jobs)
        self._base_path = Path(base_path).resolve() if base_path else Path.cwd()
        self._source = Path(source).resolve() if source else None
        self._extra = dict(extra or {})
        # azure-ai-ml's PipelineJob(compute=, identity=): kept and written, not used locally
        self.compute = compute if compute is not None else self._extra.pop("compute", None)
        self.identity = identity if identity is not None else self._extra.pop("identity", None)
        self._yaml_positions = yaml_positions
        self._start_tracking(origin)
        if self.settings._origin is None or origin is not None:
            object.__setattr__(self.settings, "_origin", origin)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SECTIONS and not isinstance(value, AttrDict):
            value = AttrDict(_SECTIONS[name], value)
        super().__setattr__(name, value)

    @property
    def base_path(self) -> Path:
        return self._base_path

    @property
    def type(self) -> str:
        return "pipeline"

    # Before it runs a job has no id, status, link or logs (azure-ai-ml: None); what
    # ``ml_client.jobs.create_or_update(job)`` returns has them.
    id = status = studio_url = creation_context = log_files = None

    @property
    def source(self) -> Path:
        """The file the job came from (YAML) or was built in (Python script)."""
        return self._source or (self._base_path / "<pipeline>")

    # -- the document ----------------------------------------------------------------------
    def _document(self, emitter: Emitter | None = None) -> dict[str, Any]:
        em = emitter or Emitter()
        em.mark_object((), self)
        data: dict[str, Any] = {"$schema": self._extra.get("$schema", PIPELINE_SCHEMA),
                                "type": "pipeline"}
        head = {
            "name": self.name, "display_name": self.display_name,
            "description": self.description, "experiment_name": self.experiment_name,
            "tags": self.tags or None, "properties": self.properties or None,
            "compute": self.compute,
            "identity": None if self.identity is None else value_to_yaml(self.identity),
            "settings": self.settings.to_dict() or None,
        }
        data.update(drop_none(head))
        em.mark_object(("settings",), self.settings)
        if self.inputs:
            data["inputs"] = {}
            for key, value in self.inputs.items():
                data["inputs"][key] = value_to_yaml(value)
                if isinstance(value, Tracked):
                    em.mark(("inputs", key), value._origin)
                em.mark(("inputs", key), self._site("inputs"))
        if self.outputs:
            data["outputs"] = {}
            for key, output in self.outputs.items():
                if output is None or not hasattr(output, "to_dict"):  # a file's odd value:
                    data["outputs"][key] = output  # validation says what is wrong with it
                    continue
                data["outputs"][key] = output.to_dict() or None
                em.mark_object(("outputs", key), output)
        if self.jobs:
            data["jobs"] = {}
            for key, node in self.jobs.items():
                if not hasattr(node, "to_dict"):  # as written in a file: validation says why
                    data["jobs"][key] = node
                    continue
                if node.name != key:
                    object.__setattr__(node, "name", key)
                data["jobs"][key] = node.to_dict(self._base_path, em, ("jobs", key))
        for key, value in self._extra.items():
            if key not in data:
                data[key] = value
        return data

    def to_dict(self) -> dict[str, Any]:
        """The YAML-equivalent document, relative paths relative to :attr:`base_path`."""
        return self._document()

    def canonical(self) -> dict[str, Any]:
        """The document with absolute local paths and no ``$schema``: what equality compares."""
        data = absolute_paths(self._document(), self._base_path)
        data.pop("$schema", None)
        return data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PipelineJob) and self.canonical() == other.canonical()

    __hash__ = None  # type: ignore[assignment]

    def positions(self) -> tuple[dict[str, Any], Any]:
        """The document and a schema ``PositionMap`` locating each key (YAML or Python line)."""
        return job_positions(self._document, self.source, self._yaml_positions)

    # -- YAML ------------------------------------------------------------------------------
    def to_yaml(self) -> str:
        """The job as YAML text (paths relative to :attr:`base_path`)."""
        return dump_text(self._document())

    def dump(self, dest: str | os.PathLike[str] | IO[str], **kwargs: Any) -> None:
        """Write the job as YAML to a file path or an open text stream.

        Relative paths are rewritten so they stay correct from the file's folder.
        """
        if hasattr(dest, "write"):
            dest.write(self.to_yaml())
            return
        path = Path(os.fspath(dest)).resolve()
        document = rebase_paths(self._document(), self._base_path, path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_text(document), encoding="utf-8")

    # -- validate and run ------------------------------------------------------------------
    def compile(self, *, runs_dir: str | Path | None = None, job_name: str | None = None,
                overrides: Any = (), check_paths: bool = True) -> Any:
        """Validate, compile to an :class:`~mlpipe.plan.ExecutionPlan`; raises ValidationError."""
        return running.compile_job(self, runs_dir=runs_dir, job_name=job_name, overrides=overrides,
                           check_paths=check_paths)

    def validate(self) -> Any:
        """Check the job like ``mlpipe job validate``; one ValidationError lists all problems.

        Returns the warnings (a tuple of diagnostics) when the job is valid.
        """
        return self.compile().warnings

    def run(self, **kwargs: Any) -> Any:
        """Run the job locally with the CLI's runtime; see :func:`mlpipe.run`."""
        return running.run(self, **kwargs)

    def __str__(self) -> str:
        """The job's YAML, as azure-ai-ml prints a job."""
        return self.to_yaml()

    def __repr__(self) -> str:
        return (f"PipelineJob(display_name={self.display_name!r}, jobs={list(self.jobs)}, "
                f"base_path={str(self._base_path)!r})")
