"""v1 ``RunConfiguration``, ``ScriptRunConfig``, ``DockerConfiguration`` and the
distribution configurations: a step's script, environment and compute (the environment and
the distribution are recorded: the runner's own Python runs every step, once)."""

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


class _Distribution:
    """A v1 distributed-training configuration, recorded (a local step runs once)."""

    def __init__(self, **settings: Any) -> None:
        self.__dict__.update(settings)


class MpiConfiguration(_Distribution):
    """v1 ``MpiConfiguration(process_count_per_node=1, node_count=1)``: recorded."""

    def __init__(self, process_count_per_node: int = 1, node_count: int = 1) -> None:
        super().__init__(process_count_per_node=process_count_per_node, node_count=node_count)


class PyTorchConfiguration(_Distribution):
    """v1 ``PyTorchConfiguration``: recorded."""

    def __init__(self, communication_backend: str = "Nccl", process_count: int | None = None,
                 node_count: int = 1) -> None:
        super().__init__(communication_backend=communication_backend,
                         process_count=process_count, node_count=node_count)


class TensorflowConfiguration(_Distribution):
    """v1 ``TensorflowConfiguration``: recorded."""

    def __init__(self, worker_count: int = 1, parameter_server_count: int = 1) -> None:
        super().__init__(worker_count=worker_count, parameter_server_count=parameter_server_count)


class ScriptRunConfig:
    """v1 ``ScriptRunConfig``: a script (``script`` + ``arguments``, or a ``command``) in
    ``source_directory``; ``Experiment.submit(config)`` runs it here as a one-step job, and
    ``CommandStep(runconfig=config)`` as a pipeline step."""

    def __init__(self, source_directory: str = ".", script: str | None = None,
                 arguments: list[Any] | None = None, run_config: RunConfiguration | None = None,
                 _telemetry_values: Any = None, compute_target: Any = None,
                 environment: Any = None, distributed_job_config: Any = None,
                 resume_from: Any = None, max_run_duration_seconds: int | None = None,
                 command: str | list[Any] | None = None, docker_runtime_config: Any = None
                 ) -> None:
        self.source_directory = source_directory
        self.script = script
        self.arguments = list(arguments or [])
        self.command = command
        self.run_config = run_config or RunConfiguration()
        if environment is not None:
            self.run_config.environment = environment
        if compute_target is not None:
            self.run_config.target = compute_target
        self.distributed_job_config = distributed_job_config
        self.max_run_duration_seconds = max_run_duration_seconds

    def command_words(self) -> list[Any]:
        """What runs: ``command`` (a text or its words), else ``python <script> <arguments>``."""
        if self.command is not None:
            return [self.command] if isinstance(self.command, str) else list(self.command)
        return ["python", str(self.script), *self.arguments]


__all__ = ["DockerConfiguration", "MpiConfiguration", "PyTorchConfiguration", "RunConfiguration",
           "ScriptRunConfig", "TensorflowConfiguration"]
