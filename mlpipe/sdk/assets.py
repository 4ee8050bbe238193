"""Registered assets: ``Data`` and ``Model`` entities and the local store behind ``ml_client``.

``ml_client.data.create_or_update(Data(name="iris", version="1", path="./iris"))``
records the asset in ``<runs-dir>/assets/registry.json``. The compiler reads the
``references`` of that file as it reads the ``[assets]`` table of ``mlpipe.toml``,
so a job that names ``azureml:iris:1`` (or ``azureml:iris@latest``) later in the
same script, or in any later run over the same runs folder, reads the local path.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from mlpipe.compiler.assets import REGISTRY_FILE, is_remote
from mlpipe.runs import resolve_runs_dir
from mlpipe.sdk.exceptions import ResourceNotFoundError
from mlpipe.sdk.yamlio import dump_text


class AssetNotFoundError(ResourceNotFoundError):
    """No asset of that kind, name and version is registered locally."""


class Resource:
    """Base of the plain azure-ai-ml entities: keyword fields, ``{}`` tags and properties,
    printed as YAML like azure-ai-ml prints its entities."""

    _fields: ClassVar[tuple[str, ...]] = ()

    def _set(self, values: Mapping[str, Any], extra: Mapping[str, Any]) -> None:
        for key in self._fields:
            value = values.get(key)
            if key in ("tags", "properties"):
                value = dict(value or {})
            setattr(self, key, value)
        self._extra = dict(extra)

    def _to_dict(self) -> dict[str, Any]:
        data = {key: getattr(self, key) for key in self._fields}
        data.update(self._extra)
        return {k: _plain(v) for k, v in data.items() if v not in (None, {}, [])}

    def __str__(self) -> str:
        return dump_text(self._to_dict())

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self._to_dict().items())
        return f"{type(self).__name__}({shown})"

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not set: the fields are set in __init__.
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Resource) and type(other) is type(self) \
            and self._to_dict() == other._to_dict()

    __hash__ = None  # type: ignore[assignment]


def _plain(value: Any) -> Any:
    if isinstance(value, Resource):
        return value._to_dict()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


class Data(Resource):
    """``azure.ai.ml.entities.Data``: a named, versioned ``uri_file``/``uri_folder``/``mltable``."""

    _fields = ("name", "version", "description", "tags", "properties", "path", "type", "id")

    def __init__(self, *, name: str | None = None, version: str | None = None,
                 description: str | None = None, tags: dict[str, Any] | None = None,
                 properties: dict[str, Any] | None = None, path: str | None = None,
                 type: str = "uri_folder", **kwargs: Any) -> None:
        self._set(dict(name=name, version=version, description=description, tags=tags,
                       properties=properties, path=path, type=type, id=None), kwargs)


class Model(Resource):
    """``azure.ai.ml.entities.Model``: a named, versioned model file or folder."""

    _fields = ("name", "version", "type", "path", "description", "tags", "properties",
               "flavors", "stage", "id")

    def __init__(self, *, name: str | None = None, version: str | None = None,
                 type: str | None = None, path: str | os.PathLike[str] | None = None,
                 utc_time_created: str | None = None, flavors: dict[str, Any] | None = None,
                 description: str | None = None, tags: dict[str, Any] | None = None,
                 properties: dict[str, Any] | None = None, stage: str | None = None,
                 **kwargs: Any) -> None:
        self._set(dict(name=name, version=version, type=type or "custom_model",
                       path=None if path is None else os.fspath(path), description=description,
                       tags=tags, properties=properties, flavors=flavors, stage=stage, id=None),
                  kwargs)
        self.utc_time_created = utc_time_created


def reference(name: str, version: str | None = None, label: str | None = None) -> str:
    """``azureml:name:version``, ``azureml:name@label`` or ``azureml:name``."""
    if version:
        return f"azureml:{name}:{version}"
    return f"azureml:{name}@{label}" if label else f"azureml:{name}"


class AssetStore:
    """Assets registered from Python, kept in ``<runs-dir>/assets/registry.json``.

    The file holds ``assets`` (kind -> name -> version -> fields) and ``references``
    (``azureml:name:version`` / ``azureml:name@latest`` / ``azureml:name`` -> local path)
    for the compiler.
    """

    def __init__(self, runs_dir: str | os.PathLike[str] | None = None) -> None:
        self.runs_dir = resolve_runs_dir(runs_dir)
        self.path = self.runs_dir / REGISTRY_FILE

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"assets": {}, "references": {}}
        return data if isinstance(data, dict) else {"assets": {}, "references": {}}

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        temp.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
        os.replace(temp, self.path)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the store's lock: step workers register models at the same time."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name("registry.lock"), "a+b") as handle:
            if sys.platform == "win32":
                import msvcrt

                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
                try:
                    yield
                finally:
                    handle.seek(0)
                    msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
            else:
                import fcntl

                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def register(self, kind: str, fields: dict[str, Any], local_path: str | None, *,
                 copy: bool = False) -> str:
        """Store ``fields`` (``name`` required) under the next version when it has none;
        return the version. ``local_path`` is what ``azureml:`` references resolve to; with
        ``copy`` the file or folder is first copied into the store
        (``<runs-dir>/assets/<kind>/<name>/<version>/<its name>``, as the cloud uploads it),
        so removing the original afterwards is safe; ``fields["path"]`` is then the copy."""
        with self._locked():
            return self._register(kind, fields, local_path, copy)

    def _register(self, kind: str, fields: dict[str, Any], local_path: str | None,
                  copy: bool = False) -> str:
        data = self._read()
        versions = data.setdefault("assets", {}).setdefault(kind, {}).setdefault(
            fields["name"], {})
        version = str(fields.get("version") or _next_version(versions))
        if copy and local_path is not None:
            local_path = self._keep_copy(kind, fields["name"], version, Path(local_path))
            fields = {**fields, "path": local_path}
        versions[version] = {**fields, "version": version, "local_path": local_path}
        if local_path is not None:
            references = data.setdefault("references", {})
            name = fields["name"]
            references[reference(name, version)] = local_path
            latest = versions[_latest(versions)].get("local_path")
            if latest:
                references[reference(name, label="latest")] = latest
                references[reference(name)] = latest
        self._write(data)
        return version

    def _keep_copy(self, kind: str, name: str, version: str, source: Path) -> str:
        target = self.path.parent / kind / name / version / source.name
        if target.exists():
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy2(source, target)
        return str(target)

    def get(self, kind: str, name: str, version: str | None = None,
            label: str | None = None) -> dict[str, Any]:
        """The fields of one registered asset (the latest version without ``version``)."""
        versions = self._read().get("assets", {}).get(kind, {}).get(name, {})
        if not versions:
            raise AssetNotFoundError(f"no {kind} asset named {name!r} is registered in "
                                     f"{self.path}")
        chosen = str(version) if version is not None else _latest(versions)
        if chosen not in versions:
            raise AssetNotFoundError(f"{kind} asset {name!r} has no version {chosen!r} "
                                     f"(registered: {', '.join(sorted(versions, key=_order))})")
        return dict(versions[chosen])

    def list(self, kind: str, name: str | None = None) -> list[dict[str, Any]]:
        """Registered assets of ``kind``: every version of ``name``, else the latest of each."""
        names = self._read().get("assets", {}).get(kind, {})
        if name is not None:
            versions = names.get(name, {})
            return [dict(versions[v]) for v in sorted(versions, key=_order)]
        return [dict(versions[_latest(versions)]) for _, versions in sorted(names.items())
                if versions]


def _order(version: str) -> tuple[int, int, str]:
    return (0, int(version), "") if version.isdigit() else (1, 0, version)


def _latest(versions: Mapping[str, Any]) -> str:
    return max(versions, key=_order)


def _next_version(versions: Mapping[str, Any]) -> str:
    numbers = [int(v) for v in versions if v.isdigit()]
    return str(max(numbers, default=0) + 1)


def asset_fields(source: str | os.PathLike[str], params_override: Any = None) -> dict[str, Any]:
    """The fields of an asset YAML file (data, model, environment, compute); a relative
    local ``path`` is made absolute from the file's folder."""
    from mlpipe.diagnostics import ValidationError, errors_of  # noqa: PLC0415
    from mlpipe.schema import load_yaml_file  # noqa: PLC0415

    path = Path(os.fspath(source)).resolve()
    document = load_yaml_file(str(path))
    if errors_of(document.diagnostics):  # a broken file is named, never read as empty
        raise ValidationError(document.diagnostics)
    data = dict(document.data or {})
    for override in params_override or []:
        data.update(override)
    data.pop("$schema", None)
    local = data.get("path")
    if isinstance(local, str) and "://" not in local and not local.startswith("azureml:"):
        data["path"] = str((path.parent / local).resolve())
    return data


def local_path(path: Any, base: Path) -> str | None:
    """An asset's ``path`` as an absolute local path (``None`` for a remote one)."""
    if path is None:
        return None
    text = os.fspath(path)
    if is_remote(text):
        return None
    if text.startswith("file:"):
        text = text[5:]
    resolved = Path(text).expanduser()
    return str((resolved if resolved.is_absolute() else base / resolved).resolve())


__all__ = ["AssetNotFoundError", "AssetStore", "Data", "Model", "Resource", "asset_fields",
           "local_path", "reference"]
