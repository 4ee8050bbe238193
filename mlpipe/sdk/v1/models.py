"""v1 ``Model``: registered in, and read back from, the local asset store."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlpipe.sdk.assets import AssetNotFoundError, AssetStore
from mlpipe.sdk.io import Input


class Model:
    """v1 ``Model``: ``register`` copies the file or folder into the local asset store (as the
    cloud uploads it: deleting the original afterwards is safe); ``get_model_path`` (in an
    entry script too) gives the copy back."""

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
        path = str(Path(model_path).resolve())
        if not Path(path).exists():
            raise FileNotFoundError(f"Model.register: model_path {model_path!r} does not exist "
                                    f"({path})")
        version = AssetStore().register("model", {
            "name": model_name, "path": path, "type": "custom_model",
            "tags": dict(tags or {}), "properties": dict(properties or {}),
            "description": description}, path, copy=True)
        print(f"Registering model {model_name}")
        return Model(workspace, model_name, version=int(version))

    @staticmethod
    def list(workspace: Any = None, name: str | None = None, tags: Any = None,
             properties: Any = None, latest: bool = False, **kwargs: Any) -> list[Model]:
        """Registered models, filtered by ``name`` and ``tags`` (``[[key, value], [key]]`` or
        ``[key, ...]``); ``latest`` keeps each name's newest version."""
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

    def to_input(self, mode: str | None = None) -> Any:
        """The model as a step's ``custom_model`` input (v1 ``ParallelRunStep(models=[...])``:
        the step reads the registered copy; ``Model.get_model_path`` finds it too)."""
        return Input(type="custom_model", path=str(self.path), mode=mode or "ro_mount")

    def download(self, target_dir: str = ".", exist_ok: bool = False, **kwargs: Any) -> str:
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
    try:
        return AssetStore().get("model", name, None if version is None else str(version))
    except AssetNotFoundError as error:
        raise AssetNotFoundError(f"{error}: register it first with Model.register(...) or "
                                 "ml_client.models.create_or_update(...)") from None


__all__ = ["Model"]
