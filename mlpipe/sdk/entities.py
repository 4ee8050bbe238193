"""Objects mirroring ``azure.ai.ml.entities``: RetrySettings, JobResourceConfiguration, ..."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mlpipe.sdk.tracking import Record, Tracked, drop_none, reading_file


class RetrySettings(Record):
    """``retry_settings`` of a parallel step: ``max_retries`` after the first try, ``timeout``
    (seconds) per run()."""

    _keys = ("max_retries", "timeout")

    def __init__(self, *, timeout: int | str | None = None, max_retries: int | str | None = None,
                 **kwargs: Any) -> None:
        self.timeout = timeout
        self.max_retries = max_retries
        self._finish(kwargs)


BatchRetrySettings = RetrySettings


class JobResourceConfiguration(Record):
    """``resources`` of a step: ``instance_count`` runs locally; the rest is kept for the cloud."""

    _keys = ("instance_count", "instance_type", "locations", "max_instance_count", "shm_size",
             "docker_args", "properties")

    def __init__(
        self,
        *,
        locations: list[str] | None = None,
        instance_count: int | str | None = None,
        instance_type: str | None = None,
        properties: dict[str, Any] | None = None,
        docker_args: str | None = None,
        shm_size: str | None = None,
        max_instance_count: int | None = None,
        **kwargs: Any,
    ) -> None:
        self.locations = locations
        self.instance_count = instance_count
        self.instance_type = instance_type
        self.properties = properties
        self.docker_args = docker_args
        self.shm_size = shm_size
        self.max_instance_count = max_instance_count
        self._finish(kwargs)


class CommandJobLimits(Record):
    """``limits`` of a command step: ``timeout`` in seconds (``node.set_limits(timeout=...)``)."""

    _keys = ("timeout",)

    def __init__(self, *, timeout: int | str | None = None, **kwargs: Any) -> None:
        self.timeout = timeout
        self._finish(kwargs)


class QueueSettings(Record):
    """``queue_settings`` of a command step (``job_tier``, ``priority``): recorded for the
    cloud, written in lower case as azure-ai-ml writes them."""

    _keys = ("job_tier", "priority")

    def __init__(self, *, job_tier: str | None = None, priority: str | None = None,
                 **kwargs: Any) -> None:
        self.job_tier = job_tier
        self.priority = priority
        self._finish(kwargs)

    def _yaml_value(self, key: str) -> Any:
        value = getattr(self, key)
        return value.lower() if isinstance(value, str) else value


class Environment(Tracked):
    """An environment as azure-ai-ml writes it; mlpipe records it and never builds it."""

    def __init__(self, *, name: str | None = None, version: str | None = None,
                 description: str | None = None, image: str | None = None, build: Any = None,
                 conda_file: str | Mapping[str, Any] | None = None,
                 tags: dict[str, Any] | None = None, properties: dict[str, Any] | None = None,
                 datastore: str | None = None, **kwargs: Any) -> None:
        self.name = name
        self.version = version
        self.image = image
        self.build = build
        self.conda_file = conda_file
        self.description = description
        self.tags = dict(tags or {})  # azure-ai-ml's defaults: {} rather than None
        self.properties = dict(properties or {})
        self.datastore = datastore
        self._extra = dict(kwargs)
        self._start_tracking()

    def to_yaml_value(self) -> str | dict[str, Any]:
        if self.name and self.version and not (self.image or self.conda_file or self.build):
            return f"azureml:{self.name}:{self.version}"
        build = self.build
        if build is not None and not isinstance(build, Mapping):
            build = drop_none({"path": getattr(build, "path", None),
                               "dockerfile_path": getattr(build, "dockerfile_path", None)})
        return drop_none({"name": self.name, "version": self.version,
                          "description": self.description, "image": self.image,
                          "build": build, "conda_file": self.conda_file,
                          "tags": self.tags or None, "properties": self.properties or None,
                          "datastore": self.datastore, **self._extra})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Environment) and self.to_yaml_value() == other.to_yaml_value()


def azureml_reference(value: Any, *keep: str) -> Any:
    """A workspace name given in code as azure-ai-ml writes it: ``"cpu"`` is ``azureml:cpu``
    (an environment ``"train-env:4"`` is ``azureml:train-env:4``); ``azureml:`` references,
    the names in ``keep`` (``serverless`` as a default compute, ``local`` as a step's),
    other values and values read from a YAML file stay as they are."""
    if (isinstance(value, str) and value and not value.startswith("azureml:")
            and value not in keep and not reading_file()):
        return "azureml:" + value
    return value


def environment_reference(env: Any) -> Any:
    """An ``environment=`` given in code as azure-ai-ml keeps it (see :func:`azureml_reference`)."""
    return azureml_reference(env)


def environment_value(env: Any) -> Any:
    """The YAML value of an ``environment=`` argument (a reference string, dict or Environment)."""
    if isinstance(env, Environment):
        return env.to_yaml_value()
    if isinstance(env, Mapping):
        return dict(env)
    return env


class RunFunction(Record):
    """The ``task`` of a parallel step: ``code``, ``entry_script``, ``program_arguments``,
    ``append_row_to``."""

    _keys = ("type", "code", "entry_script", "environment", "program_arguments", "model",
             "append_row_to")

    def __init__(
        self,
        *,
        code: str | None = None,
        entry_script: str | None = None,
        program_arguments: str | None = None,
        model: str | None = None,
        append_row_to: str | None = None,
        environment: Any = None,
        **kwargs: Any,
    ) -> None:
        self.type = kwargs.pop("type", "run_function")
        self.code = None if code is None else str(code)
        self.entry_script = entry_script
        self.program_arguments = program_arguments
        self.model = model
        self.append_row_to = append_row_to
        self.environment = environment
        self._finish(kwargs)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "environment":
            value = environment_reference(value)
        super().__setattr__(name, value)

    def _yaml_value(self, key: str) -> Any:
        value = getattr(self, key)
        return environment_value(value) if key == "environment" else value

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunFunction:
        return cls(**dict(data))
