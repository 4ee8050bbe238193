"""v1 datastores and data paths as local folders.

A datastore is a local folder: the one ``mlpipe.toml`` ``[assets]`` (beside the
script or notebook, or in the working folder) maps its URL to
(``https://<account>.blob.core.windows.net/<container>``, or
``azureml://datastores/<name>``), else ``<runs-dir>/datastores/<name>`` (where
the compiler writes datastore outputs). ``Datastore.path("mnist")`` is a
:class:`DataPath` whose ``os.fspath`` is that folder's ``mnist``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from mlpipe.compiler.assets import ASSETS_FILE, stand_in
from mlpipe.compiler.values import DEFAULT_DATASTORE
from mlpipe.diagnostics import Diagnostic, ValidationError
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
        return str(self.datastore.local_root / self.path_on_datastore.lstrip("/"))

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
    """v1 ``Datastore``: a local folder standing for the cloud container (see module doc)."""

    def __init__(self, workspace: Any = None, name: str | None = None, *,
                 url: str | None = None, base: Path | None = None) -> None:
        self.workspace = workspace
        self.name = name or DEFAULT_DATASTORE
        self.url = url
        self.datastore_type = "AzureBlob"
        self._base = base or caller_dir()

    @property
    def local_root(self) -> Path:
        """The folder this datastore is, here."""
        for reference in (self.url, f"azureml://datastores/{self.name}"):
            found = stand_in(reference, self._base) if reference else None
            if found is not None:
                return found
        return resolve_runs_dir() / DATASTORES_DIR / self.name

    @staticmethod
    def register_azure_blob_container(workspace: Any, datastore_name: str, container_name: str,
                                      account_name: str, sas_token: str | None = None,
                                      account_key: str | None = None, protocol: str | None = None,
                                      endpoint: str | None = None, overwrite: bool = False,
                                      **kwargs: Any) -> Datastore:
        """A datastore for the container (mapped to a local folder, see the module doc)."""
        url = (f"https://{account_name}.blob.{endpoint or 'core.windows.net'}/"
               f"{container_name}")
        return Datastore(workspace, datastore_name, url=url, base=caller_dir())

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
        return DataPath(self, target_path)

    def __repr__(self) -> str:
        return f"Datastore(name={self.name!r}, local={str(self.local_root)!r})"


def local_text(item: Any) -> str:
    """A v1 path argument as text: a ``DataPath``, a ``(datastore, path)`` pair, a path."""
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Datastore):
        return os.fspath(DataPath(item[0], str(item[1])))
    return os.fspath(item) if isinstance(item, os.PathLike) else str(item)


__all__ = ["DEFAULT_DATASTORE", "DataPath", "DataPathComputeBinding", "Datastore", "local_text"]
