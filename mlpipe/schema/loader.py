"""Load pipeline jobs and components: YAML -> plain data -> models + diagnostics."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, Union

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

import mlpipe.schema.checks as checks
from mlpipe.diagnostics import (
    Diagnostic,
    HasDiagnostics,
    Location,
    ValidationError,
    did_you_mean,
    errors_of,
)
from mlpipe.schema.command import CommandComponent
from mlpipe.schema.errors import translate_errors
from mlpipe.schema.lazy import LazyModel
from mlpipe.schema.parallel import ParallelComponent
from mlpipe.schema.parts import validate_parts
from mlpipe.schema.pipeline import ComponentPipelineJob, PipelineComponent, PipelineJob
from mlpipe.schema.yamlio import PositionMap, YamlDocument, describe_value, load_yaml_file

M = TypeVar("M", bound=BaseModel)
if TYPE_CHECKING:
    from mlpipe.schema.data_transfer import DataTransferCopyComponent
    from mlpipe.schema.import_job import ImportComponent
    from mlpipe.schema.spark import SparkComponent

Component = Union[ParallelComponent, CommandComponent, PipelineComponent, "SparkComponent",
                  "DataTransferCopyComponent", "ImportComponent"]
# The component types only Azure runs are imported when a file has one (schema/lazy.py).
COMPONENT_MODELS: dict[str, type[BaseModel] | LazyModel] = {
    "parallel": ParallelComponent, "command": CommandComponent, "pipeline": PipelineComponent,
    "spark": LazyModel("mlpipe.schema.spark:SparkComponent"),
    "data_transfer": LazyModel("mlpipe.schema.data_transfer:DataTransferCopyComponent"),
    "import": LazyModel("mlpipe.schema.import_job:ImportComponent")}


DEFAULT_COMPONENT_TYPE = "command"


def component_model(kind: str) -> type[BaseModel] | None:
    """The model of a component file of type ``kind`` (lower-cased), if it is one."""
    model = COMPONENT_MODELS.get(kind)
    return model.resolve() if isinstance(model, LazyModel) else model

@dataclass
class Loaded(HasDiagnostics, Generic[M]):
    """The result of loading a document.

    ``model`` is ``None`` when there are errors; ``diagnostics`` holds errors and
    warnings in file order; ``data`` is the plain dict that was validated;
    ``source`` is the file's absolute path (or the name given to ``load_*_data``);
    ``parts`` is what validated (:func:`~mlpipe.schema.parts.validate_parts`): the model
    when the document's models validate (even if other checks found errors), else a
    :class:`~mlpipe.schema.parts.Partial`; ``None`` when not even the document's kind is known.
    """

    model: M | None
    diagnostics: list[Diagnostic]
    positions: PositionMap
    source: str
    data: dict[str, Any] = field(default_factory=dict)
    parts: Any = None

    @property
    def ok(self) -> bool:
        return not self.errors

    def raise_if_errors(self) -> M:
        """The model, or :class:`~mlpipe.diagnostics.ValidationError` with every problem."""
        if self.errors or self.model is None:
            raise ValidationError(self.diagnostics)
        return self.model


def _sorted(diags: list[Diagnostic]) -> list[Diagnostic]:
    def key(d: Diagnostic) -> tuple[int, int, int]:
        loc = d.location or Location()
        return (0 if d.severity == "error" else 1, loc.line or 0, loc.column or 0)

    return sorted(diags, key=key)


def _validate(model_cls: type[M], data: dict[str, Any], positions: PositionMap
              ) -> tuple[M | None, list[Diagnostic], Any]:
    try:
        model = model_cls.model_validate(data)
        return model, [], model
    except PydanticValidationError as exc:
        return (None, translate_errors(model_cls, exc.errors(), data, positions),
                validate_parts(model_cls, data))


def _start(data: Any, source: str, positions: PositionMap | None
           ) -> tuple[dict[str, Any], PositionMap, Loaded[Any] | None]:
    """The document as a plain dict and its positions, plus the result to return at once
    when it is not a mapping or is a legacy (pre-v2) component."""
    positions = positions if positions is not None else PositionMap(source)
    if not isinstance(data, Mapping):
        return {}, positions, Loaded(None, [Diagnostic(
            f"the document must be a mapping of keys to values, got {describe_value(data)}",
            location=positions.locate(()), code="not-a-mapping")], positions, source, {})
    plain = dict(data)
    legacy = _legacy_component(plain, positions)
    return plain, positions, Loaded(None, legacy, positions, source, plain) if legacy else None


def _check(model_cls: type[BaseModel], plain: dict[str, Any], source: str,
           positions: PositionMap, extra: list[Diagnostic]) -> Loaded[Any]:
    model, diags, parts = _validate(model_cls, plain, positions)
    diags = _sorted([d for d in diags if not checks.is_cloud_only_key(d)] + extra)
    if errors_of(diags):
        model = None
    return Loaded(model, diags, positions, source, plain, parts)


def load_pipeline_data(data: Mapping[str, Any], source: str,
                       positions: PositionMap | None = None) -> Loaded[PipelineJob]:
    """Validate an already-parsed pipeline job (from the SDK, or after ``--set``)."""
    plain, positions, done = _start(data, source, positions)
    if done is not None:
        return done
    extra = (checks.unknown_settings(plain, positions)
             + checks.check_pipeline(plain, positions)
             + checks.binding_syntax(plain, positions)
             + checks.cloud_only_warnings(plain, positions, is_pipeline=True))
    model = (ComponentPipelineJob if isinstance(plain, dict) and "jobs" not in plain
             and plain.get("component") is not None else PipelineJob)
    return _check(model, plain, source, positions, extra)


def load_component_data(data: Mapping[str, Any], source: str,
                        positions: PositionMap | None = None) -> Loaded[Component]:
    """Validate an already-parsed component; dispatches on ``type`` (parallel | command |
    pipeline)."""
    plain, positions, done = _start(data, source, positions)
    if done is not None:
        return done
    # no type: a command component, as azure-ai-ml's load_component reads it
    kind = plain.get("type", DEFAULT_COMPONENT_TYPE)
    kind = kind.lower() if isinstance(kind, str) else kind
    model_cls = component_model(kind) if isinstance(kind, str) else None
    if model_cls is None:
        return Loaded(None, [_choice_error("type", kind, True, COMPONENT_MODELS,
                                           "a component's type", positions)],
                      positions, source, plain)
    is_pipeline = kind == "pipeline"
    if is_pipeline:
        extra = checks.check_pipeline(plain, positions)
    else:
        extra = (checks.dropped_component_extras(plain, positions)
                 + checks.check_component(plain, positions))
    extra += checks.binding_syntax(plain, positions)
    extra += checks.cloud_only_warnings(plain, positions, is_pipeline=is_pipeline)
    return _check(model_cls, plain, source, positions, extra)


def load_job_data(data: Mapping[str, Any], source: str,
                  positions: PositionMap | None = None) -> Loaded[Any]:
    """Validate an already-parsed standalone job (``type: command|sweep|spark|automl``, or
    the type its ``$schema`` names); see :mod:`mlpipe.schema.standalone`."""
    from mlpipe.schema.kinds import RUNNABLE_TYPES, STANDALONE_TYPES, job_type
    from mlpipe.schema.standalone import AUTOML_JOBS, job_model

    plain, positions, done = _start(data, source, positions)
    if done is not None:
        return done
    kind = job_type(plain) or "command"
    model_cls = job_model(kind, plain)
    if model_cls is None:
        if kind == "automl":
            problem = _choice_error("task", plain.get("task"), "task" in plain, AUTOML_JOBS,
                                    "an AutoML job's task", positions)
        else:
            problem = _choice_error("type", plain.get("type"), True, STANDALONE_TYPES,
                                    "a standalone job's type", positions)
        return Loaded(None, [problem], positions, source, plain)
    extra = checks.check_job(plain, positions, kind) + checks.binding_syntax(plain, positions)
    if kind in RUNNABLE_TYPES:  # run here as its one step: say what it does not do here
        extra += checks.cloud_only_warnings(plain, positions, is_pipeline=False)
    return _check(model_cls, plain, source, positions, extra)


def _choice_error(key: str, value: Any, present: bool, choices: Iterable[str], what: str,
                  positions: PositionMap) -> Diagnostic:
    names = list(choices)
    if not present:
        return Diagnostic(f"required key '{key}' is missing: {what} is one of {', '.join(names)}",
                          key_path=key, location=positions.locate(()), code="missing")
    hint = did_you_mean(str(value), names) if isinstance(value, str) else None
    return Diagnostic(f"must be one of {', '.join(names)}, got {describe_value(value)}",
                      key_path=key, location=positions.locate((key,)), code="enum", hint=hint)


def _legacy_component(data: dict[str, Any], positions: PositionMap) -> list[Diagnostic]:
    """The pre-v2 internal component format (``type: ParallelComponent``, componentsdk schema)."""
    kind = data.get("type")
    schema = data.get("$schema")
    legacy_type = isinstance(kind, str) and kind.endswith("Component")
    legacy_schema = isinstance(schema, str) and "componentsdk" in schema.lower()
    if not (legacy_type or legacy_schema):
        return []
    path = ("type",) if legacy_type else ("$schema",)
    what = f"'type: {kind}'" if legacy_type else f"'$schema: {schema}'"
    return [Diagnostic(f"{what} is the legacy internal component format (componentsdk), not the "
                       f"Azure ML v2 schema mlpipe validates", key_path=path[0],
                       location=positions.locate(path), code="unsupported-schema",
                       hint="v2 components use 'type: parallel' with 'input_data', 'task: {type: "
                            "run_function, code, entry_script, program_arguments}' and inputs "
                            "typed uri_folder, mltable, ...")]


def _load_file(path: str | Path | YamlDocument, load_data: Any) -> Loaded[Any]:
    doc = path if isinstance(path, YamlDocument) else load_yaml_file(path)
    if doc.data is None:
        return Loaded(None, doc.diagnostics, doc.positions, doc.source, {})
    loaded: Loaded[Any] = load_data(doc.data, doc.source, doc.positions)
    loaded.diagnostics = _sorted(doc.diagnostics + loaded.diagnostics)
    if loaded.errors:
        loaded.model = None
    return loaded


def load_pipeline(path: str | Path | YamlDocument) -> Loaded[PipelineJob]:
    """Read and validate a pipeline job YAML file (or one already parsed with
    :func:`~mlpipe.schema.yamlio.load_yaml_file`)."""
    return _load_file(path, load_pipeline_data)


def load_job(path: str | Path | YamlDocument) -> Loaded[Any]:
    """Read and validate a standalone (non-pipeline) job YAML file."""
    return _load_file(path, load_job_data)


def load_runnable(path: str | Path | YamlDocument) -> Loaded[Any]:
    """Read and validate a job YAML mlpipe runs: a standalone job (:func:`load_job`) when
    :func:`~mlpipe.schema.kinds.file_kind` says it is one, else a pipeline job."""
    from mlpipe.schema.kinds import file_kind

    doc = path if isinstance(path, YamlDocument) else load_yaml_file(path)
    return load_job(doc) if file_kind(doc.data) == "job" else load_pipeline(doc)


def load_component(path: str | Path | YamlDocument) -> Loaded[Component]:
    """Read and validate a parallel or command component YAML file (or one already
    parsed with :func:`~mlpipe.schema.yamlio.load_yaml_file`)."""
    return _load_file(path, load_component_data)
