"""v1 datastores and data paths as local folders, and CSV files as an MLTable.

A datastore is a local folder: the one ``mlpipe.toml`` ``[assets]`` (beside the
script or notebook, or in the working folder) maps its URL to
(``https://<account>.blob.core.windows.net/<container>``, or
``azureml://datastores/<name>``), else ``<runs-dir>/datastores/<name>`` (where
the compiler writes datastore outputs). ``Datastore.path("mnist")`` is a
:class:`DataPath` whose ``os.fspath`` is that folder's ``mnist``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

from mlpipe.compiler.assets import ASSETS_FILE, stand_in
from mlpipe.plan import resolve_runs_dir

DEFAULT_DATASTORE = "workspaceblobstore"


class DataPath(os.PathLike[str]):
    """v1 ``DataPath``: a path on a datastore; ``os.fspath`` gives the local path."""

    def __init__(self, datastore: Datastore | None = None, path_on_datastore: str | None = None,
                 name: str | None = None) -> None:
        self.datastore = datastore or Datastore(None, DEFAULT_DATASTORE)
        self.path_on_datastore = path_on_datastore or ""
        self.name = name

    def __fspath__(self) -> str:
        return str(self.datastore.local_root / self.path_on_datastore.lstrip("/"))

    def __repr__(self) -> str:
        return f"DataPath({self.datastore.name!r}, {self.path_on_datastore!r})"


class Datastore:
    """v1 ``Datastore``: a local folder standing for the cloud container (see module doc)."""

    def __init__(self, workspace: Any = None, name: str | None = None, *,
                 url: str | None = None, base: Path | None = None) -> None:
        self.workspace = workspace
        self.name = name or DEFAULT_DATASTORE
        self.url = url
        self.datastore_type = "AzureBlob"
        from mlpipe.sdk.callsite import caller_dir

        self._base = base or caller_dir()

    @property
    def local_root(self) -> Path:
        """The folder this datastore is, here."""
        for reference in (self.url, f"azureml://datastores/{self.name}"):
            found = stand_in(reference, self._base) if reference else None
            if found is not None:
                return found
        return resolve_runs_dir() / "datastores" / self.name

    @staticmethod
    def register_azure_blob_container(workspace: Any, datastore_name: str, container_name: str,
                                      account_name: str, sas_token: str | None = None,
                                      account_key: str | None = None, protocol: str | None = None,
                                      endpoint: str | None = None, overwrite: bool = False,
                                      **kwargs: Any) -> Datastore:
        """A datastore for the container (mapped to a local folder, see the module doc)."""
        from mlpipe.sdk.callsite import caller_dir

        url = (f"https://{account_name}.blob.{endpoint or 'core.windows.net'}/"
               f"{container_name}")
        return Datastore(workspace, datastore_name, url=url, base=caller_dir())

    register_azure_file_share = register_azure_blob_container

    @staticmethod
    def get(workspace: Any, datastore_name: str) -> Datastore:
        from mlpipe.sdk.callsite import caller_dir

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


_HEADERS = {"true": "all_files_same_headers", "all_files_have_same_headers":
            "all_files_same_headers", "false": "no_header", "no_headers": "no_header",
            "from_first_file": "from_first_file", "only_first_file_has_headers":
            "from_first_file", "combine_all_files_headers": "all_files_different_headers"}


def local_text(item: Any) -> str:
    """A v1 path argument as text: a ``DataPath``, a ``(datastore, path)`` pair, a path."""
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Datastore):
        return os.fspath(DataPath(item[0], str(item[1])))
    return os.fspath(item) if isinstance(item, os.PathLike) else str(item)


def write_mltable(text: str, prefix: str) -> Path:
    """An MLTable folder ``<runs-dir>/datasets/<prefix>_<digest>`` holding ``text``."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    folder = resolve_runs_dir() / "datasets" / f"{prefix}_{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MLTable").write_text(text, encoding="utf-8")
    return folder


def delimited_mltable(path: Any, base: Path, separator: str = ",", header: Any = True) -> Path:
    """An MLTable folder under ``<runs-dir>/datasets`` reading the CSV files at ``path`` (a
    file, a folder, a glob, a ``DataPath`` or a list of them), relative to ``base``."""
    items = path if isinstance(path, list) else [path]
    entries = []
    for item in items:
        text = local_text(item)
        local = Path(text) if Path(text).is_absolute() else base / text
        kind = ("pattern" if any(c in text for c in "*?[") else
                "folder" if local.is_dir() or text.endswith("/") else "file")
        entries.append(f"  - {kind}: {str(local.resolve())!r}\n")
    name = getattr(header, "name", header)
    header_value = _HEADERS.get(str(name).lower(), "all_files_same_headers")
    text = ("paths:\n" + "".join(entries) + "transformations:\n  - read_delimited:\n"
            f"      delimiter: {separator!r}\n      header: {header_value}\n")
    return write_mltable(text, "delimited")


def partitioned_mltable(frame: Any, keys: list[str], target: Path) -> Path:
    """v1 ``partition_by``: ``frame`` written as ``target/<key1>/<key2>/part.csv`` files (the key
    columns in the path) and an MLTable reading them back with the keys as columns."""
    for values, group in frame.groupby(keys, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        folder = target.joinpath(*[str(v) for v in values])
        folder.mkdir(parents=True, exist_ok=True)
        group.drop(columns=keys).to_csv(folder / "part.csv", index=False)
    fmt = "".join("{%s}/" % k for k in keys) + "part.csv"
    text = (f"paths:\n  - pattern: {str(target.resolve() / '**' / 'part.csv')!r}\n"
            "transformations:\n  - read_delimited:\n      delimiter: ','\n"
            "      header: all_files_same_headers\n"
            f"  - extract_columns_from_partition_format:\n      partition_format: {fmt!r}\n")
    (target / "MLTable").write_text(text, encoding="utf-8")
    return target


__all__ = ["DEFAULT_DATASTORE", "DataPath", "Datastore", "delimited_mltable", "local_text",
           "partitioned_mltable", "stand_in", "write_mltable"]
