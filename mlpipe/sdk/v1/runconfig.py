"""v1 ``RunConfiguration`` and ``DockerConfiguration``: a step's environment and compute,
recorded (the runner's own Python runs every step)."""

from __future__ import annotations

from typing import Any

from mlpipe.sdk.v1.environments import CondaDependencies, Environment


class DockerConfiguration:
    """v1 ``DockerConfiguration(use_docker=...)``: recorded, no container is started."""

    def __init__(self, use_docker: bool | None = None, shared_volumes: bool | None = None,
                 arguments: list[str] | None = None, shm_size: str | None = None) -> None:
        self.use_docker = use_docker
        self.shared_volumes = shared_volumes
        self.arguments = list(arguments or [])
        self.shm_size = shm_size


class RunConfiguration:
    """v1 ``RunConfiguration``: ``environment`` (a v1 ``Environment``, becomes the step's
    environment), ``target`` (the step's compute), ``environment_variables`` (set for the
    step); the rest is recorded."""

    def __init__(self, script: str | None = None, arguments: list[Any] | None = None,
                 framework: str | None = None, communicator: str | None = None,
                 conda_dependencies: CondaDependencies | None = None, _history_enabled: Any = None,
                 _path: Any = None, _name: str | None = None, command: Any = None) -> None:
        self.script = script
        self.arguments = list(arguments or [])
        self.command = command
        self.framework = framework or "Python"
        self.communicator = communicator or "None"
        self.target: Any = "local"
        self.node_count = 1
        self.environment = Environment(_name or "default-environment")
        self.environment.python.conda_dependencies = conda_dependencies
        self.environment_variables: dict[str, str] = {}
        self.docker: DockerConfiguration | None = None
        self.max_run_duration_seconds: int | None = None
        self.history: Any = None

    @property
    def environment_variables_in_force(self) -> dict[str, str]:
        """The variables the step runs with: the environment's, then the run config's."""
        return {**(getattr(self.environment, "environment_variables", None) or {}),
                **self.environment_variables}

    def save(self, path: str | None = None, name: str | None = None,
             separate_environment_yaml: bool = False) -> None:
        """Nothing to save locally: the configuration lives in the pipeline."""

    @staticmethod
    def load(path: str, name: str | None = None) -> RunConfiguration:
        return RunConfiguration(_name=name)


__all__ = ["DockerConfiguration", "RunConfiguration"]
