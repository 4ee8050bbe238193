"""``CommandComponent`` and ``ParallelComponent`` made in code, as azure-ai-ml makes them.

The keywords become a component YAML document, written to
``<runs-dir>/components/<name>-<digest>.yml`` (relative ``code`` and ``conda_file``
made absolute); the result is a :class:`~mlpipe.sdk.nodes.Component` like one from
``load_component``: call it in a ``@pipeline`` function to add a step, or register it
with ``ml_client.components.create_or_update``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from mlpipe.runs import resolve_runs_dir
from mlpipe.sdk.callsite import caller_dir
from mlpipe.sdk.entities import environment_value
from mlpipe.sdk.nodes import Component
from mlpipe.sdk.tracking import Record, drop_none
from mlpipe.sdk.yamlio import dump_text

_SCHEMAS = {
    "command": "https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json",
    "parallel": "https://azuremlschemas.azureedge.net/latest/parallelComponent.schema.json",
}


def _value(value: Any) -> Any:
    """An SDK object (Input, Output, RunFunction, Environment, ...) as its YAML value."""
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): _value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_value(v) for v in value]
    if hasattr(value, "to_yaml_value"):
        return environment_value(value)
    return value


def _absolute(value: Any, base: Path) -> Any:
    if isinstance(value, str) and value and ":" not in value.split("/")[0]:
        path = Path(value).expanduser()
        return str(path if path.is_absolute() else (base / path).resolve())
    return value


class _MadeComponent(Component):
    """A component document made from keywords and written to the runs folder."""

    _type: ClassVar[str]

    def __init__(self, *, name: str | None = None, version: str | None = None,
                 description: str | None = None, tags: dict[str, Any] | None = None,
                 display_name: str | None = None, inputs: dict[str, Any] | None = None,
                 outputs: dict[str, Any] | None = None, is_deterministic: bool = True,
                 **settings: Any) -> None:
        base = caller_dir()
        body = {key: _value(value) for key, value in settings.items()}
        if "code" in body:
            body["code"] = _absolute(body["code"], base)
        task = body.get("task")
        if isinstance(task, dict) and "code" in task:
            task["code"] = _absolute(task["code"], base)
        for holder in (body, task if isinstance(task, dict) else {}):
            env = holder.get("environment")
            if isinstance(env, dict) and isinstance(env.get("conda_file"), str):
                env["conda_file"] = _absolute(env["conda_file"], base)
        document = drop_none({
            "$schema": _SCHEMAS.get(self._type), "type": self._type, "name": name,
            "version": None if version is None else str(version), "display_name": display_name,
            "description": description, "tags": tags or None,
            "is_deterministic": None if is_deterministic else False,
            "inputs": _value(inputs) or None, "outputs": _value(outputs) or None, **body})
        text = dump_text(document)
        digest = hashlib.sha256(text.encode()).hexdigest()[:10]
        path = resolve_runs_dir() / "components" / f"{name or self._type}-{digest}.yml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        super().__init__(path, document)
        self.version = document.get("version")
        self.description = description
        self.tags = dict(tags or {})


class CommandComponent(_MadeComponent):
    """``azure.ai.ml.entities.CommandComponent(name=, command=, code=, environment=, inputs=,
    outputs=, ...)``."""

    _type = "command"


class ParallelComponent(_MadeComponent):
    """``azure.ai.ml.entities.ParallelComponent(name=, task=RunFunction(...), input_data=,
    mini_batch_size=, inputs=, outputs=, ...)``."""

    _type = "parallel"


class PipelineComponent(Component):
    """``azure.ai.ml.entities.PipelineComponent``: made by calling a ``@pipeline`` function
    inside another, not from keywords."""

    def __init__(self, *, name: str | None = None, version: str | None = None,
                 description: str | None = None, tags: dict[str, Any] | None = None,
                 display_name: str | None = None, inputs: dict[str, Any] | None = None,
                 outputs: dict[str, Any] | None = None, jobs: dict[str, Any] | None = None,
                 is_deterministic: bool | None = None, **kwargs: Any) -> None:
        raise TypeError("PipelineComponent(...) is not built from keywords in mlpipe: write the "
                        "sub-pipeline as a @pipeline function and call it inside another "
                        "@pipeline function, or load_component() its YAML file")


__all__ = ["CommandComponent", "ParallelComponent", "PipelineComponent"]
