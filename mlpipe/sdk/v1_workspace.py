"""The azureml-core (v1) names around a pipeline, answered locally: ``Workspace``,
``ComputeTarget``/``AmlCompute``, ``Model``, ``Environment``/``CondaDependencies``,
``Run.get_context()`` and the ``RunDetails`` widget."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mlpipe.sdk.entities import Environment as V2Environment
from mlpipe.sdk.v1_data import DEFAULT_DATASTORE, Datastore

VERSION = "1.0.0+mlpipe.local"
DEFAULT_CPU_IMAGE = "mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04"
DEFAULT_GPU_IMAGE = "mcr.microsoft.com/azureml/openmpi4.1.0-cuda11.8-cudnn8-ubuntu22.04"
LOCAL = "local"


class _ComputeTargets(Mapping[str, "AmlCompute"]):
    """``ws.compute_targets``: every name is this machine (so ``name in ...`` holds)."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def __getitem__(self, name: str) -> AmlCompute:
        return self._workspace._computes.get(name) or AmlCompute(self._workspace, name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str)

    def __iter__(self) -> Iterator[str]:
        return iter(self._workspace._computes or [LOCAL])

    def __len__(self) -> int:
        return max(1, len(self._workspace._computes))


class Workspace:
    """v1 ``Workspace``: the local stand-in (``from_config`` needs no ``config.json``)."""

    def __init__(self, subscription_id: str | None = None, resource_group: str | None = None,
                 workspace_name: str | None = None, auth: Any = None, **kwargs: Any) -> None:
        self.subscription_id = subscription_id or LOCAL
        self.resource_group = resource_group or LOCAL
        self.name = workspace_name or LOCAL
        self.location = kwargs.get("location") or LOCAL
        self._computes: dict[str, AmlCompute] = {}

    @classmethod
    def from_config(cls, path: str | None = None, auth: Any = None, _logger: Any = None,
                    _file_name: str | None = None) -> Workspace:
        from mlpipe.sdk.client import _read_config

        config = _read_config(path, _file_name)
        return cls(config.get("subscription_id"), config.get("resource_group"),
                   config.get("workspace_name"))

    get = classmethod(lambda cls, name=None, **kwargs: cls(workspace_name=name, **kwargs))

    @property
    def compute_targets(self) -> Mapping[str, AmlCompute]:
        return _ComputeTargets(self)

    @property
    def datastores(self) -> dict[str, Datastore]:
        return {DEFAULT_DATASTORE: Datastore(self, DEFAULT_DATASTORE)}

    def get_default_datastore(self) -> Datastore:
        return Datastore(self, DEFAULT_DATASTORE)

    def get_details(self) -> dict[str, Any]:
        return {"name": self.name, "location": self.location, "resourceGroup":
                self.resource_group, "subscriptionId": self.subscription_id}

    def write_config(self, path: str | None = None, file_name: str | None = None) -> None:
        """Nothing to write: the local workspace needs no config."""

    def __repr__(self) -> str:
        return f"Workspace.create(name='{self.name}', subscription_id='{self.subscription_id}', " \
               f"resource_group='{self.resource_group}')"


class _Status:
    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def serialize(self) -> dict[str, Any]:
        return dict(self._data)


class ComputeTarget:
    """v1 ``ComputeTarget``: ``create`` notes the request; steps run on this machine."""

    def __init__(self, workspace: Any = None, name: str = LOCAL, **kwargs: Any) -> None:
        self.workspace = workspace
        self.name = name
        self.type = "AmlCompute"
        self.provisioning_state = "Succeeded"
        self.provisioning_configuration_ = kwargs.get("provisioning_configuration")

    @staticmethod
    def create(workspace: Any, name: str, provisioning_configuration: Any) -> AmlCompute:
        print(f"mlpipe: compute {name!r} is recorded only; steps run on this machine",
              file=sys.stderr)
        compute = AmlCompute(workspace, name, provisioning_configuration=provisioning_configuration)
        if isinstance(workspace, Workspace):
            workspace._computes[name] = compute
        return compute

    def wait_for_completion(self, show_output: bool = False, min_node_count: int | None = None,
                            timeout_in_minutes: int = 20, is_delete_operation: bool = False
                            ) -> None:
        if show_output:
            print(f"{self.name}: Succeeded (this machine)")

    def get_status(self) -> _Status:
        return _Status({"name": self.name, "provisioningState": self.provisioning_state,
                        "currentNodeCount": 1, "vmSize": "local",
                        "cores": os.cpu_count() or 1})

    def delete(self) -> None:
        """Nothing to delete locally."""

    def __repr__(self) -> str:
        return f"AmlCompute(workspace={self.workspace!r}, name={self.name}, " \
               "provisioning_state=Succeeded, location=local, tags={})"


class AmlCompute(ComputeTarget):
    """v1 ``AmlCompute``: a cluster is this machine."""

    @staticmethod
    def provisioning_configuration(**kwargs: Any) -> dict[str, Any]:
        return dict(kwargs)


class Model:
    """v1 ``Model``: ``register`` records the file or folder in the local asset store;
    ``get_model_path`` (in an entry script too) gives it back."""

    def __init__(self, workspace: Any = None, name: str | None = None, id: str | None = None,
                 tags: Any = None, properties: Any = None, version: int | None = None,
                 **kwargs: Any) -> None:
        fields = _model_fields(name, version) if name else {}
        self.workspace = workspace
        self.name = name
        self.version = int(fields.get("version", version or 0)) or None
        self.id = f"{name}:{self.version}" if name else id
        self.tags = dict(fields.get("tags") or tags or {})
        self.properties = dict(fields.get("properties") or properties or {})
        self.description = fields.get("description")
        self.path = fields.get("path")

    @staticmethod
    def register(workspace: Any, model_path: str, model_name: str, tags: Any = None,
                 properties: Any = None, description: str | None = None,
                 **kwargs: Any) -> Model:
        from mlpipe.sdk.assets import AssetStore

        path = str(Path(model_path).resolve())
        if not Path(path).exists():
            raise FileNotFoundError(f"Model.register: model_path {model_path!r} does not exist "
                                    f"({path})")
        version = AssetStore().register("model", {
            "name": model_name, "path": path, "type": "custom_model",
            "tags": dict(tags or {}), "properties": dict(properties or {}),
            "description": description}, path)
        print(f"Registering model {model_name}")
        return Model(workspace, model_name, version=int(version))

    @staticmethod
    def list(workspace: Any = None, name: str | None = None, tags: Any = None,
             properties: Any = None, latest: bool = False, **kwargs: Any) -> list[Model]:
        """Registered models, filtered by ``name`` and ``tags`` (``[[key, value], [key]]`` or
        ``[key, ...]``); ``latest`` keeps each name's newest version."""
        from mlpipe.sdk.assets import AssetStore

        store = AssetStore()
        found = []
        for fields in (store.list("model", name) if name else _all_versions(store)):
            if _tags_match(fields.get("tags") or {}, tags):
                found.append(fields)
        if latest:
            newest: dict[str, dict[str, Any]] = {}
            for fields in found:
                newest[fields["name"]] = fields  # versions come oldest first
            found = list(newest.values())
        return [Model(workspace, f["name"], version=int(f["version"])) for f in found]

    @staticmethod
    def get_model_path(model_name: str, version: int | None = None, _workspace: Any = None
                       ) -> str:
        return str(_model_fields(model_name, version)["path"])

    def download(self, target_dir: str = ".", exist_ok: bool = False, **kwargs: Any) -> str:
        import shutil

        source = Path(str(self.path))
        target = Path(target_dir) / source.name
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=exist_ok)
        else:
            Path(target_dir).mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        return str(target)

    def __repr__(self) -> str:
        return f"Model(workspace={self.workspace!r}, name={self.name}, id={self.id}, " \
               f"version={self.version}, tags={self.tags}, properties={self.properties})"


def _all_versions(store: Any) -> list[dict[str, Any]]:
    return [version for latest in store.list("model") for version in
            store.list("model", latest["name"])]


def _tags_match(have: Mapping[str, Any], wanted: Any) -> bool:
    for item in wanted or []:
        pair = [item] if isinstance(item, str) else list(item)
        if pair[0] not in have or (len(pair) > 1 and str(have[pair[0]]) != str(pair[1])):
            return False
    return True


def _model_fields(name: str, version: Any) -> dict[str, Any]:
    from mlpipe.sdk.assets import AssetNotFoundError, AssetStore

    try:
        return AssetStore().get("model", name, None if version is None else str(version))
    except AssetNotFoundError as error:
        raise AssetNotFoundError(f"{error}: register it first with Model.register(...) or "
                                 "ml_client.models.create_or_update(...)") from None


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
        from mlpipe.sdk.yamlio import dump_text

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
        return {"name": self.name, "image": self.image or self.docker.base_image,
                "conda_file": self.conda_file or (deps.as_dict() if deps else None)}

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


class _Experiment:
    def __init__(self, name: str) -> None:
        self.name = name
        self.id = name
        self.workspace = Workspace()


class _OfflineRun:
    """``Run.get_context()`` outside Azure: metrics are printed, files and models stay local
    (``register_model`` registers in the local asset store)."""

    _count = 0

    def __init__(self, parent: _OfflineRun | None = None, name: str | None = None) -> None:
        _OfflineRun._count += 1
        self.id = f"OfflineRun_{os.getpid()}_{_OfflineRun._count}"
        self.name = name or self.id
        self.parent = parent or self
        self.experiment = _Experiment(os.environ.get("MLPIPE_EXPERIMENT") or "local")
        self.tags: dict[str, Any] = {}
        self.properties: dict[str, Any] = {}
        self.metrics: dict[str, Any] = {}
        self._files: dict[str, str] = {}
        self._status = "Running"

    def child_run(self, name: str | None = None, run_id: str | None = None,
                  outputs: str | None = None) -> _OfflineRun:
        return _OfflineRun(self, name)

    def log(self, name: str, value: Any, description: str = "", step: int | None = None
            ) -> None:
        self.metrics.setdefault(name, []).append(value)
        print(f"metric {name}: {value}")

    def log_row(self, name: str, description: str | None = None, **kwargs: Any) -> None:
        self.log(name, kwargs)

    def log_list(self, name: str, value: list[Any], description: str = "") -> None:
        self.log(name, value)

    def tag(self, key: str, value: Any = None) -> None:
        self.tags[key] = value

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        self.tags.update(tags)

    def get_tags(self) -> dict[str, Any]:
        return dict(self.tags)

    def add_properties(self, properties: Mapping[str, Any]) -> None:
        self.properties.update(properties)

    def get_metrics(self, name: str | None = None, **kwargs: Any) -> dict[str, Any]:
        return {name: self.metrics.get(name)} if name else dict(self.metrics)

    def upload_file(self, name: str, path_or_stream: str) -> None:
        """Record the file under ``name`` (it stays where it is)."""
        self._files[name] = str(Path(path_or_stream).resolve())

    def register_model(self, model_name: str, model_path: str | None = None,
                       tags: Any = None, properties: Any = None, description: str | None = None,
                       **kwargs: Any) -> Model:
        """Register an uploaded file (or a local path) as a model in the local asset store."""
        path = self._files.get(model_path or model_name) or model_path or model_name
        return Model.register(None, path, model_name, tags=tags, properties=properties,
                              description=description)

    def get_status(self) -> str:
        return self._status

    def complete(self) -> None:
        self._status = "Completed"

    def fail(self, error_details: Any = None, **kwargs: Any) -> None:
        self._status = "Failed"


class Run:
    """v1 ``Run``: ``Run.get_context()`` is an offline run (as azureml-core gives outside Azure)."""

    _context: _OfflineRun | None = None

    @classmethod
    def get_context(cls, allow_offline: bool = True, **kwargs: Any) -> _OfflineRun:
        if cls._context is None:
            cls._context = _OfflineRun()
        return cls._context


class RunDetails:
    """``azureml.widgets.RunDetails``: ``show()`` prints where the run's logs are."""

    def __init__(self, run_instance: Any) -> None:
        self.run = run_instance

    def show(self) -> None:
        where = getattr(self.run, "run_dir", None)
        print(f"mlpipe: RunDetails widget not shown (no notebook widgets here); "
              f"run {getattr(self.run, 'id', '')} logs: {where}")


class InteractiveLoginAuthentication:
    """v1 authentication objects: a local run needs none."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass


ServicePrincipalAuthentication = InteractiveLoginAuthentication
MsiAuthentication = InteractiveLoginAuthentication

__all__ = ["DEFAULT_CPU_IMAGE", "DEFAULT_GPU_IMAGE", "VERSION", "AmlCompute", "ComputeTarget",
           "CondaDependencies", "Environment", "InteractiveLoginAuthentication", "Model",
           "MsiAuthentication", "Run", "RunDetails", "ServicePrincipalAuthentication",
           "Workspace"]
