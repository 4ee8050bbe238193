"""Settings objects mirroring ``azure.ai.ml.entities`` (RetrySettings, JobResourceConfiguration, ...)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mlpipe.sdk.tracking import Tracked, drop_none


class RetrySettings(Tracked):
    """``retry_settings`` of a parallel step: ``max_retries`` after the first try, ``timeout`` (s) per run()."""

    def __init__(self, *, timeout: int | str | None = None, max_retries: int | str | None = None,
                 **kwargs: Any) -> None:
        self.timeout = timeout
        self.max_retries = max_retries
        self._extra = dict(kwargs)
        self._start_tracking()

    def to_dict(self) -> dict[str, Any]:
        return drop_none({"max_retries": self.max_retries, "timeout": self.timeout, **self._extra})

    @classmethod
    def coerce(cls, value: RetrySettings | Mapping[str, Any] | None) -> RetrySettings | None:
        if value is None or isinstance(value, RetrySettings):
            return value
        if isinstance(value, Mapping):
            return cls(**dict(value))
        return value  # left for the schema to reject

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RetrySettings) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"RetrySettings({self.to_dict()})"


BatchRetrySettings = RetrySettings


class JobResourceConfiguration(Tracked):
    """``resources`` of a step: ``instance_count`` runs locally; the rest is recorded for the cloud."""

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
        self._extra = dict(kwargs)
        self._start_tracking()

    def to_dict(self) -> dict[str, Any]:
        return drop_none({
            "instance_count": self.instance_count, "instance_type": self.instance_type,
            "locations": self.locations, "max_instance_count": self.max_instance_count,
            "shm_size": self.shm_size, "docker_args": self.docker_args,
            "properties": self.properties, **self._extra,
        })

    @classmethod
    def coerce(cls, value: JobResourceConfiguration | Mapping[str, Any] | None
               ) -> JobResourceConfiguration | None:
        if value is None or isinstance(value, JobResourceConfiguration):
            return value
        if isinstance(value, Mapping):
            return cls(**dict(value))
        return value  # left for the schema to reject

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JobResourceConfiguration) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"JobResourceConfiguration({self.to_dict()})"


class Environment(Tracked):
    """An environment as azure-ai-ml writes it; mlpipe records it and never builds it."""

    def __init__(self, *, name: str | None = None, version: str | None = None,
                 image: str | None = None, conda_file: str | Mapping[str, Any] | None = None,
                 description: str | None = None, **kwargs: Any) -> None:
        self.name = name
        self.version = version
        self.image = image
        self.conda_file = conda_file
        self.description = description
        self._extra = dict(kwargs)
        self._start_tracking()

    def to_yaml_value(self) -> str | dict[str, Any]:
        if self.name and self.version and not (self.image or self.conda_file):
            return f"azureml:{self.name}:{self.version}"
        return drop_none({
            "name": self.name, "version": self.version, "description": self.description,
            "image": self.image, "conda_file": self.conda_file, **self._extra,
        })

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Environment) and self.to_yaml_value() == other.to_yaml_value()


def environment_value(env: Any) -> Any:
    """The YAML value of an ``environment=`` argument (a reference string, dict or Environment)."""
    if isinstance(env, Environment):
        return env.to_yaml_value()
    if isinstance(env, Mapping):
        return dict(env)
    return env


class RunFunction(Tracked):
    """The ``task`` of a parallel step: ``code``, ``entry_script``, ``program_arguments``, ``append_row_to``."""

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
        self._extra = dict(kwargs)
        self._start_tracking()

    def to_dict(self) -> dict[str, Any]:
        return drop_none({
            "type": self.type, "code": self.code, "entry_script": self.entry_script,
            "environment": environment_value(self.environment),
            "program_arguments": self.program_arguments, "model": self.model,
            "append_row_to": self.append_row_to, **self._extra,
        })

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunFunction:
        return cls(**dict(data))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunFunction) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"RunFunction({self.to_dict()})"
