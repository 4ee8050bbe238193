"""v1 datastores and data paths.

``Datastore.register_azure_blob_container`` / ``register_azure_data_lake_gen2`` register the
datastore as ``mlpipe datastore create`` does (the runs folder's store, the secret in its
0600 file; ``create_if_not_exists=True`` creates the container in the account), and
``Datastore.get`` gives it back with its ``account_name`` and ``container_name``.

Where a datastore's files are, here: the folder ``mlpipe.toml`` ``[assets]`` (beside the
script or notebook, or in the working folder) maps its URL to
(``https://<account>.blob.core.windows.net/<container>``, or
``azureml://datastores/<name>``), else ``<runs-dir>/datastores/<name>`` (where the compiler
writes datastore outputs). For a registered datastore with no such mapping that folder is
filled from the storage account: ``os.fspath(datastore.path("mnist/"))`` downloads the
blobs below ``mnist/`` through the runs folder's etag cache first (a blob already there is
not downloaded again), so v1 datasets built on it read the account's data.

A step input of such a datastore (``DataReference``, ``DataPath``, ``(DataPath,
DataPathComputeBinding)``, ``Dataset.File.from_files(datastore.path(...))``) moves no data
when the pipeline is defined, as in azureml-core: it is the URI
``azureml://datastores/<name>/paths/<path>`` (:meth:`Datastore.cloud_uri`), read when the
step runs, as a v2 input of that mode is.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from mlpipe.compiler.assets import ASSETS_FILE, cloud_location, load_asset_map, stand_in
from mlpipe.compiler.values import DEFAULT_DATASTORE
from mlpipe.data.cloud.store import DatastoreInfo, DatastoreStore
from mlpipe.data.cloud.uris import parse_cloud_uri
from mlpipe.diagnostics import Diagnostic, ValidationError
from mlpipe.plan import CloudLocation
from mlpipe.runs import DATASTORES_DIR, resolve_runs_dir
from mlpipe.sdk.callsite import call_site, caller_dir


class DataPath(os.PathLike[str]):
    """v1 ``DataPath``: a path on a datastore; ``os.fspath`` gives the local path."""

    def __init__(self, datastore: Datastore | None = None, path_on_datastore: str | None = None,
                 name: str | None = None) -> None:
        self.datastore = datastore_argument(datastore, "DataPath") \
            or Datastore(None, DEFAULT_DATASTORE)
        self.path_on_datastore = path_on_datastore or ""
        self.name = name

    def __fspath__(self) -> str:
        local = self.datastore.local_root / self.path_on_datastore.lstrip("/")
        self.datastore._fill(self.path_on_datastore, local)
        return str(local)

    def cloud_uri(self) -> str | None:
        """The path's ``azureml://datastores/...`` URI when its datastore is in a storage
        account (``None``: a local folder); nothing is read."""
        cloud_uri = getattr(self.datastore, "cloud_uri", None)
        return cloud_uri(self.path_on_datastore) if cloud_uri is not None else None

    def __repr__(self) -> str:
        return f"DataPath({self.datastore.name!r}, {self.path_on_datastore!r})"


def datastore_argument(value: Any, call: str) -> Any:
    """``value`` when it is a datastore (or ``None``); a string or anything else is one error
    naming the argument, at the user's line (not an ``AttributeError`` deep in a run)."""
    if value is None or isinstance(value, Datastore) or hasattr(value, "local_root"):
        return value
    shown = f"the string {value!r}" if isinstance(value, str) else type(value).__name__
    fix = (f"Datastore.get(ws, {value!r})" if isinstance(value, str)
           else "Datastore.get(ws, name)")
    raise ValidationError([Diagnostic(
        f"{call}(datastore=...) takes a Datastore, got {shown}", key_path=f"{call}.datastore",
        location=call_site(), code="type",
        hint=f"pass {fix} or ws.get_default_datastore()"
             + (f"; to name the reference, use data_reference_name={value!r}"
                if call == "DataReference" and isinstance(value, str) else ""))])


class DataPathComputeBinding:
    """v1 ``DataPathComputeBinding(mode=...)``: how a ``DataPath`` reaches a step, recorded (the
    step reads the local folder); ``(data_path, binding)`` is a step input."""

    def __init__(self, mode: str = "mount", path_on_compute: str | None = None,
                 overwrite: bool = False) -> None:
        self.mode = mode
        self.path_on_compute = path_on_compute
        self.overwrite = overwrite


class Datastore:
    """v1 ``Datastore``: a registered datastore (see the module doc) or a local folder."""

    def __init__(self, workspace: Any = None, name: str | None = None, *,
                 url: str | None = None, base: Path | None = None) -> None:
        self.workspace = workspace
        self.name = name or DEFAULT_DATASTORE
        self._base = base or caller_dir()
        info = DatastoreStore(resolve_runs_dir()).get(self.name)
        self._info = info
        self.account_name = info.account_name if info else None
        self.container_name = info.container_name if info else None
        self.endpoint = info.endpoint if info else None
        self.protocol = info.protocol if info else None
        self.datastore_type = "AzureDataLakeGen2" if info and info.type == \
            "azure_data_lake_gen2" else "AzureBlob"
        self.credential_type = {"account_key": "AccountKey", "sas_token": "Sas"}.get(
            (info.credential if info else None) or "", "None")
        self.url = url or (f"https://{info.account_name}.blob.{info.endpoint}/"
                           f"{info.container_name}" if info else None)

    @property
    def local_root(self) -> Path:
        """The folder this datastore is, here."""
        found = self._stand_in()
        return found if found is not None else resolve_runs_dir() / DATASTORES_DIR / self.name

    def _stand_in(self) -> Path | None:
        for reference in (self.url, f"azureml://datastores/{self.name}"):
            found = stand_in(reference, self._base) if reference else None
            if found is not None:
                return found
        return None

    def _location(self, path: str) -> CloudLocation | None:
        """Where ``path`` is in the storage account (``None``: the datastore is a local
        folder: not registered, or mapped to one in mlpipe.toml ``[assets]``)."""
        if self._stand_in() is not None:
            return None
        asset_map, _ = load_asset_map(self._base, resolve_runs_dir())
        location, _ = cloud_location(f"azureml://datastores/{self.name}/paths/"
                                     f"{path.lstrip('/')}", asset_map)
        return location

    def cloud_uri(self, path: str | None) -> str | None:
        """``azureml://datastores/<name>/paths/<path>`` when the datastore is in a storage
        account (registered, not mapped to a local folder), else ``None``."""
        if self._location(path or "") is None:
            return None
        return f"azureml://datastores/{self.name}/paths/{(path or '').lstrip('/')}"

    def input_type(self, path: str | None) -> str:
        """``uri_file`` when ``path`` is one blob of the account (one HEAD request), else
        ``uri_folder`` (written as a folder, the whole container, or no such blob)."""
        location = self._location(path or "")
        if location is None or not location.path or (path or "").endswith("/"):
            return "uri_folder"
        from mlpipe.data.cloud.access import access_for  # noqa: PLC0415
        from mlpipe.data.cloud.blobs import blob_properties  # noqa: PLC0415

        try:
            blob_properties(access_for(location), location.container, location.path)
        except Exception:  # noqa: BLE001 - no blob of that name: a folder (or nothing,
            return "uri_folder"  # which the job's check before it starts names)
        return "uri_file"

    def _fill(self, path: str, local: Path) -> None:
        """Download the blob (or the blobs below the folder) ``path`` into ``local``."""
        location = self._location(path)
        if location is None:
            return
        from mlpipe.data.cloud.access import access_for  # noqa: PLC0415
        from mlpipe.data.cloud.cache import materialize  # noqa: PLC0415

        single = self.input_type(path) == "uri_file"
        cache = resolve_runs_dir() / "assets" / "blob_cache"
        materialize(location, access_for(location), local, cache, single_file=single,
                    prune=False)

    def _send(self, local: Path, path: str) -> None:
        """Upload the file or folder ``local`` to ``path`` in the storage account."""
        location = self._location(path)
        if location is None:
            return
        from mlpipe.data.cloud.access import access_for  # noqa: PLC0415
        from mlpipe.data.cloud.upload import upload_output  # noqa: PLC0415

        upload_output(local, location, access_for(location), None)

    @staticmethod
    def register_azure_blob_container(workspace: Any, datastore_name: str, container_name: str,
                                      account_name: str, sas_token: str | None = None,
                                      account_key: str | None = None, protocol: str | None = None,
                                      endpoint: str | None = None, overwrite: bool = False,
                                      create_if_not_exists: bool = False, **kwargs: Any
                                      ) -> Datastore:
        """Register the container as datastore ``datastore_name`` (``create_if_not_exists``:
        the container is created in the account when it is not there)."""
        return _register(workspace, "azure_blob", datastore_name, container_name, account_name,
                         sas_token, account_key, protocol, endpoint, create_if_not_exists)

    @staticmethod
    def register_azure_data_lake_gen2(workspace: Any, datastore_name: str, filesystem: str,
                                      account_name: str, tenant_id: str | None = None,
                                      client_id: str | None = None,
                                      client_secret: str | None = None,
                                      resource_url: str | None = None,
                                      authority_url: str | None = None,
                                      protocol: str | None = None, endpoint: str | None = None,
                                      overwrite: bool = False, **kwargs: Any) -> Datastore:
        """Register the ADLS Gen2 file system as datastore ``datastore_name`` (a service
        principal is not used here: DefaultAzureCredential reads it from ``AZURE_*``)."""
        return _register(workspace, "azure_data_lake_gen2", datastore_name, filesystem,
                         account_name, None, None, protocol, endpoint, False)

    register_azure_file_share = register_azure_blob_container

    @staticmethod
    def get(workspace: Any, datastore_name: str) -> Datastore:
        return Datastore(workspace, datastore_name, base=caller_dir())

    @staticmethod
    def get_default(workspace: Any) -> Datastore:
        return Datastore(workspace, DEFAULT_DATASTORE)

    def path(self, path: str | None = None, data_reference_name: str | None = None) -> DataPath:
        return DataPath(self, path, data_reference_name)

    def as_mount(self) -> DataPath:
        return DataPath(self, "")

    as_download = as_mount

    def download(self, target_path: str | os.PathLike[str], prefix: str | None = None,
                 overwrite: bool = False, show_progress: bool = True) -> int:
        """Copy the datastore's files (under ``prefix``) into ``target_path``; returns the count."""
        source = self.local_root / (prefix or "")
        self._fill(prefix or "", source)
        target = Path(target_path)
        if source.is_file():
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / source.name)
            return 1
        if not source.is_dir():
            raise FileNotFoundError(
                f"datastore {self.name!r} has no {prefix or 'files'} locally: {source} does not "
                f"exist (map {self.url or 'azureml://datastores/' + self.name} to a local folder "
                f"in {ASSETS_FILE} [assets])")
        shutil.copytree(source, target, dirs_exist_ok=True)
        return sum(1 for p in source.rglob("*") if p.is_file())

    def upload(self, src_dir: str, target_path: str | None = None, overwrite: bool = False,
               show_progress: bool = True) -> DataPath:
        """Copy ``src_dir`` into the datastore's local folder."""
        target = self.local_root / (target_path or "")
        shutil.copytree(src_dir, target, dirs_exist_ok=True)
        self._send(Path(src_dir), target_path or "")
        return DataPath(self, target_path)

    def upload_files(self, files: list[str], relative_root: str | None = None,
                     target_path: str | None = None, overwrite: bool = False,
                     show_progress: bool = True) -> DataPath:
        """Copy ``files`` into the datastore's folder under ``target_path`` (keeping their
        paths relative to ``relative_root``, else their names)."""
        target = self.local_root / (target_path or "")
        for file in files:
            name = (os.path.relpath(file, relative_root) if relative_root
                    else Path(file).name)
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(file, target / name)
            self._send(Path(file), f"{(target_path or '').rstrip('/')}/{name}".lstrip("/"))
        return DataPath(self, target_path)

    def __repr__(self) -> str:
        if self._info is not None:
            return (f"Datastore(name={self.name!r}, account_name={self.account_name!r}, "
                    f"container_name={self.container_name!r})")
        return f"Datastore(name={self.name!r}, local={str(self.local_root)!r})"


def _register(workspace: Any, kind: str, name: str, container: str, account: str,
              sas_token: str | None, account_key: str | None, protocol: str | None,
              endpoint: str | None, create: bool) -> Datastore:
    base = caller_dir()
    info = DatastoreInfo(name=name, type=kind,  # type: ignore[arg-type]
                         account_name=account, container_name=container,
                         endpoint=endpoint or "core.windows.net", protocol=protocol or "https")
    secret = ("account_key", account_key) if account_key else \
        ("sas_token", sas_token) if sas_token else None
    DatastoreStore(resolve_runs_dir()).register(info, secret)
    datastore = Datastore(workspace, name, base=base)
    location = datastore._location("") if create else None
    if location is not None:
        from mlpipe.data.cloud.access import access_for  # noqa: PLC0415

        client = access_for(location).service_client().get_container_client(container)
        if not client.exists():
            client.create_container()
    return datastore


def cloud_text(item: Any) -> str | None:
    """The ``azureml://datastores/...`` URI of a v1 path argument (a ``DataPath``, a
    ``(datastore, path)`` pair) on a storage account's datastore, else ``None``."""
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Datastore):
        item = DataPath(item[0], str(item[1]))
    return item.cloud_uri() if isinstance(item, DataPath) else None


def datastore_path(uri: str, base: Path) -> DataPath | None:
    """The ``DataPath`` an ``azureml://datastores/<name>/paths/<path>`` URI names, or
    ``None`` for any other text."""
    parts = parse_cloud_uri(uri)
    if parts is None or parts.datastore is None:
        return None
    path = parts.path + ("/" if parts.path and uri.endswith("/") else "")
    return DataPath(Datastore(None, parts.datastore, base=base), path)


def local_copy(uri: str, base: Path) -> str | None:
    """The local copy of an ``azureml://datastores/...`` URI (downloaded now, through the
    etag cache), or ``None`` for any other text."""
    found = datastore_path(uri, base)
    return os.fspath(found) if found is not None else None


def local_text(item: Any) -> str:
    """A v1 path argument as text: a ``DataPath``, a ``(datastore, path)`` pair, a path."""
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Datastore):
        return os.fspath(DataPath(item[0], str(item[1])))
    return os.fspath(item) if isinstance(item, os.PathLike) else str(item)


__all__ = ["DEFAULT_DATASTORE", "DataPath", "DataPathComputeBinding", "Datastore", "cloud_text",
           "datastore_path", "local_copy", "local_text"]
