"""v1 ``Environment`` and ``CondaDependencies``: recorded as the step's environment, never
built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mlpipe.sdk.entities import Environment as V2Environment
from mlpipe.sdk.yamlio import dump_text

DEFAULT_CPU_IMAGE = "mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04"
DEFAULT_GPU_IMAGE = "mcr.microsoft.com/azureml/openmpi4.1.0-cuda11.8-cudnn8-ubuntu22.04"


class CondaDependencies:
    """v1 ``CondaDependencies``: recorded on the environment, never installed."""

    def __init__(self, conda_dependencies_file_path: str | None = None, **kwargs: Any) -> None:
        self.python_version: str | None = None
        self.conda_packages: list[str] = []
        self.pip_packages: list[str] = []
        self.channels: list[str] = []

    @staticmethod
    def create(pip_indexurl: str | None = None, pip_packages: list[str] | None = None,
               conda_packages: list[str] | None = None, python_version: str | None = None,
               pin_sdk_version: bool = True) -> CondaDependencies:
        deps = CondaDependencies()
        deps.python_version = python_version
        deps.pip_packages = list(pip_packages or [])
        deps.conda_packages = list(conda_packages or [])
        return deps

    def add_pip_package(self, pip_package: str) -> None:
        self.pip_packages.append(pip_package)

    def add_conda_package(self, conda_package: str) -> None:
        self.conda_packages.append(conda_package)

    def add_channel(self, channel: str) -> None:
        self.channels.append(channel)

    def as_dict(self) -> dict[str, Any]:
        deps: list[Any] = [f"python={self.python_version}"] if self.python_version else []
        deps += self.conda_packages
        if self.pip_packages:
            deps.append({"pip": list(self.pip_packages)})
        return {"channels": self.channels or ["conda-forge"], "dependencies": deps}

    def serialize_to_string(self) -> str:
        return dump_text(self.as_dict())


class _Section:
    """``env.python`` / ``env.docker`` / ``env.spark``: attributes are recorded."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names never set (the sections are made with their fields).
        raise AttributeError(f"environment section has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        self.__dict__[name] = value


class Environment(V2Environment):
    """v1 ``Environment(name)`` with ``python.conda_dependencies``, ``docker.base_image``;
    recorded (as the step's inline environment), never built."""

    python: _Section
    docker: _Section
    spark: _Section

    def __init__(self, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        object.__setattr__(self, "python", _Section(conda_dependencies=None,
                                                     user_managed_dependencies=False))
        object.__setattr__(self, "docker", _Section(base_image=DEFAULT_CPU_IMAGE,
                                                     enabled=True))
        object.__setattr__(self, "spark", _Section(precache_packages=True))
        object.__setattr__(self, "environment_variables", {})

    def to_yaml_value(self) -> str | dict[str, Any]:
        deps = self.python.conda_dependencies
        value = {"name": self.name, "image": self.image or self.docker.base_image,
                 "conda_file": self.conda_file or (deps.as_dict() if deps else None)}
        return {key: item for key, item in value.items() if item is not None}

    @staticmethod
    def from_conda_specification(name: str, file_path: str) -> Environment:
        env = Environment(name)
        env.conda_file = str(Path(file_path).resolve())
        return env

    @staticmethod
    def from_pip_requirements(name: str, file_path: str) -> Environment:
        env = Environment(name)
        env.python.conda_dependencies = CondaDependencies.create(
            pip_packages=Path(file_path).read_text(encoding="utf-8").split())
        return env

    @staticmethod
    def get(workspace: Any, name: str, version: str | None = None, **kwargs: Any) -> Environment:
        """A curated or registered environment by name (recorded: nothing is fetched)."""
        env = Environment(name)
        env.version = version
        return env

    def register(self, workspace: Any) -> Environment:
        return self


__all__ = ["DEFAULT_CPU_IMAGE", "DEFAULT_GPU_IMAGE", "CondaDependencies", "Environment"]
