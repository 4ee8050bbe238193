"""``ml_client.data``, ``.models``, ``.environments``, ``.components``: a local asset store.

``create_or_update`` records the asset in ``<runs-dir>/assets/registry.json``
(the next version when it has none); ``get`` and ``list`` read it back; data,
models and file components are then what ``azureml:name:version`` means in jobs
compiled over the same runs folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from mlpipe.compiler.assets import stand_in
from mlpipe.data.cloud.uris import is_cloud_uri
from mlpipe.io_types import DATA_ASSET_TYPES
from mlpipe.jobs.download import copy_into
from mlpipe.sdk.assets import AssetStore, Data, Model, Resource, local_path, reference
from mlpipe.sdk.entities import Environment, environment_value
from mlpipe.sdk.loading import load_component
from mlpipe.sdk.mldesigner import as_component
from mlpipe.sdk.operations.base import Operations


class _AssetOperations(Operations):
    """``create_or_update``, ``get`` and ``list`` of one kind of asset."""

    _kind: ClassVar[str]
    _entity: ClassVar[type[Resource]] = Resource
    _types: ClassVar[tuple[str, ...]] = ()  # the asset types Azure takes (empty: any)

    def _assets(self) -> AssetStore:
        return AssetStore(self._runs_dir)

    def _fields(self, asset: Any) -> dict[str, Any]:
        return {key: value for key, value in vars(asset).items()
                if not key.startswith("_") and _jsonable(value)}

    def _local_path(self, asset: Any) -> str | None:
        """The asset's local path: its own, or the mlpipe.toml stand-in of a remote one; a
        cloud URI without a stand-in is kept as it is (jobs read it through its datastore)."""
        path = getattr(asset, "path", None)
        found = local_path(path, self.base_dir)
        if found is None and isinstance(path, str):
            mapped = stand_in(path, self.base_dir)
            found = None if mapped is None else str(mapped)
            if found is None and is_cloud_uri(path):
                found = path.strip()
        return found

    def _make(self, fields: dict[str, Any]) -> Any:
        """The entity for stored ``fields`` (``id`` is ``azureml:name:version``)."""
        entity: Any = self._entity(**{k: v for k, v in fields.items()
                                      if k in self._entity._fields and k != "id"})
        entity.id = reference(fields["name"], fields.get("version"))
        return entity

    def _register(self, asset: Any) -> Any:
        """Register ``asset`` locally; returns it with its ``version`` (and ``id``) set."""
        name = getattr(asset, "name", None)
        if not name or not isinstance(name, str):
            raise ValueError(f"ml_client.{self._group}.create_or_update() needs an asset with a "
                             f"name (text), got {asset!r}")
        fields = self._fields(asset)
        path = self._local_path(asset)
        self._check(fields)
        if path is not None and "path" in fields:
            fields["path"] = path
        version = self._assets().register(self._kind, fields, path)
        return self._make(self._assets().get(self._kind, name, version))

    def _check(self, fields: dict[str, Any]) -> None:
        """What Azure refuses at registration: a type the kind of asset does not have."""
        kind = fields.get("type")
        if self._types and kind not in self._types:
            raise ValueError(f"{self._kind} {fields['name']}: type {kind!r} is not one of "
                             f"{', '.join(self._types)}")

    def get(self, name: str, version: str | None = None, label: str | None = None,
            **kwargs: Any) -> Any:
        """The asset ``name`` at ``version`` (else the latest, as with ``label="latest"``)."""
        return self._make(self._assets().get(self._kind, name, version, label))

    def list(self, name: str | None = None, **kwargs: Any) -> list[Any]:
        """Every version of ``name``, or the latest version of each asset."""
        return [self._make(fields) for fields in self._assets().list(self._kind, name)]


def _jsonable(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool, list, dict))


class DataOperations(_AssetOperations):
    """``ml_client.data``: data assets (``azureml:name:version`` inputs read ``path``)."""

    _group = "data"
    _kind = "data"
    _entity = Data
    _types = DATA_ASSET_TYPES

    def create_or_update(self, data: Any) -> Any:
        """Register ``data`` locally; returns it with its ``version`` (and ``id``) set."""
        return self._register(data)


class ModelOperations(_AssetOperations):
    """``ml_client.models``: models (``azureml:name:version`` inputs read ``path``)."""

    _group = "models"
    _kind = "model"
    _entity = Model

    def create_or_update(self, model: Any) -> Any:
        """Register ``model`` locally; returns it with its ``version`` (and ``id``) set."""
        return self._register(model)

    def download(self, name: str, version: str, download_path: str | Path = ".") -> None:
        """Copy the model's files to ``<download_path>/<name>``."""
        model = self.get(name, version)
        copy_into(Path(model.path), Path(download_path) / name)


class EnvironmentOperations(_AssetOperations):
    """``ml_client.environments``: environments are recorded, never built."""

    _group = "environments"
    _kind = "environment"

    def create_or_update(self, environment: Any) -> Any:
        """Record ``environment`` (never built); returns it with its ``version`` set."""
        return self._register(environment)

    def _fields(self, asset: Any) -> dict[str, Any]:
        value = environment_value(asset)
        fields = dict(value) if isinstance(value, dict) else {"name": asset.name}
        fields.update(name=asset.name, version=asset.version)
        return {k: v for k, v in fields.items() if _jsonable(v)}

    def _local_path(self, asset: Any) -> str | None:
        return None

    def _make(self, fields: dict[str, Any]) -> Any:
        fields = {k: v for k, v in fields.items() if k != "local_path"}
        return Environment(**fields)


class ComponentOperations(_AssetOperations):
    """``ml_client.components``: a component from a YAML file is registered by its file
    (``azureml:name:version`` steps then use that file); one made in code is kept for
    ``get`` in this process."""

    _group = "components"
    _kind = "component"
    _made_in_code: ClassVar[dict[tuple[str, str], Any]] = {}

    def create_or_update(self, component: Any, version: str | None = None,
                         **kwargs: Any) -> Any:
        component = as_component(component)  # a @command_component function's component
        name = getattr(component, "name", None)
        if not name:
            raise ValueError("ml_client.components.create_or_update() needs a component with "
                             f"a name, got {component!r}")
        source = getattr(component, "path", None)
        data = getattr(component, "data", None) or {}
        fields = {"name": name, "version": version or data.get("version"),
                  "type": getattr(component, "type", None), "source": None}
        path = str(source) if isinstance(source, Path) else None
        fields["source"] = path
        registered = self._assets().register(self._kind, fields, path)
        if path is None:
            self._made_in_code[(name, registered)] = component
        return component

    def get(self, name: str, version: str | None = None, label: str | None = None,
            **kwargs: Any) -> Any:
        fields = self._assets().get(self._kind, name, version, label)
        return self._make(fields)

    def _make(self, fields: dict[str, Any]) -> Any:
        if fields.get("local_path"):
            return load_component(fields["local_path"])
        key = (fields["name"], fields["version"])
        if key in self._made_in_code:
            return self._made_in_code[key]
        raise LookupError(f"component {fields['name']}:{fields['version']} was made in code by "
                          "another process; register a component loaded from a YAML file "
                          "to use it across scripts")


__all__ = ["ComponentOperations", "DataOperations", "EnvironmentOperations", "ModelOperations"]
