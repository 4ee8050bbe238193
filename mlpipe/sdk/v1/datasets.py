"""v1 data references: ``Dataset`` (``File`` / ``Tabular``), ``FileDataset``, ``TabularDataset``,
``DatasetConsumptionConfig``, ``PipelineData`` and ``OutputFileDatasetConfig``, as local data.

A dataset is a local folder, file or MLTable folder; ``register`` and
``Dataset.get_by_name`` use the local asset store. :mod:`mlpipe.sdk.v1.translation`
turns each of them into a v2 step input or output.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from mlpipe.diagnostics import Diagnostic, ValidationError
from mlpipe.sdk.assets import AssetStore
from mlpipe.sdk.callsite import call_site, caller_dir
from mlpipe.sdk.io import Input
from mlpipe.sdk.v1.datastores import Datastore, local_text
from mlpipe.sdk.v1.mltables import (
    delimited_mltable,
    files_mltable,
    is_glob,
    partitioned_mltable,
)
from mlpipe.sdk.v1.parameters import resolve

D = TypeVar("D", bound="FileDataset")


class PipelineData:
    """v1 intermediate data: a step's output folder, usable as another step's input."""

    def __init__(self, name: str, datastore: Any = None, output_name: str | None = None,
                 output_mode: str = "mount", is_directory: bool | None = None,
                 **kwargs: Any) -> None:
        self.name = name
        self.datastore = datastore
        self.output_name = output_name or name
        self.output_mode = output_mode
        self.is_directory = is_directory

    def as_dataset(self) -> PipelineData:
        return self

    def as_input(self, input_name: str | None = None) -> PipelineData:
        return self


class OutputFileDatasetConfig(PipelineData):
    """v1 ``OutputFileDatasetConfig(name, destination=None)``; a local ``destination`` is kept."""

    def __init__(self, name: str | None = None, destination: Any = None, source: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(name or "output")
        self.destination = destination if isinstance(destination, str) else None

    def as_mount(self) -> OutputFileDatasetConfig:
        return self

    def as_upload(self, **kwargs: Any) -> OutputFileDatasetConfig:
        return self


class DatasetConsumptionConfig:
    """A named input (``dataset.as_named_input(name)``) with its delivery ``mode``."""

    def __init__(self, name: str, dataset: Any, mode: str | None = None) -> None:
        self.name = name
        self.dataset = dataset
        self.mode = mode

    def as_mount(self) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig(self.name, self.dataset, "ro_mount")

    def as_download(self) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig(self.name, self.dataset, "download")

    def to_input(self) -> Input:
        return resolve(self.dataset).to_input(self.mode)


class FileDataset:
    """A local folder or file read as files (v1 ``Dataset.File.from_files(path)``)."""

    type = "uri_folder"

    def __init__(self, path: str, partition_format: str | None = None) -> None:
        self.path = str(path)
        self.partition_format = partition_format
        self._base = caller_dir()
        self.name: str | None = None
        self.version: int | None = None

    @property
    def partition_keys(self) -> list[str]:
        """The ``{key}`` names of ``partition_format`` (v1: the dataset's partition keys)."""
        return re.findall(r"\{(\w+)(?::[^}]*)?\}", self.partition_format or "")

    def as_named_input(self, name: str) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig(name, self)

    def as_mount(self) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig("input_data", self, "ro_mount")

    def as_download(self) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig("input_data", self, "download")

    def local_path(self) -> str:
        """The dataset's path, absolute (relative paths are the creating script's)."""
        return (self.path if Path(self.path).is_absolute() or "://" in self.path
                else str((self._base / self.path).resolve()))

    def register(self: D, workspace: Any, name: str, description: str | None = None,
                 tags: Mapping[str, str] | None = None, create_new_version: bool = False
                 ) -> D:
        """Register the dataset in the local asset store (``Dataset.get_by_name`` and v2
        ``azureml:name:version`` inputs then find it)."""
        path = self.local_path()
        self.version = int(AssetStore().register("data", {
            "name": name, "type": self.type, "path": path, "description": description,
            "tags": dict(tags or {})}, path))
        self.name = name
        return self

    def to_input(self, mode: str | None = None) -> Input:
        path = self.local_path()
        if self.type == "uri_folder" and (self.partition_format or is_glob(self.path)):
            return Input(type="mltable", path=str(files_mltable(path, self.partition_format)),
                         mode=mode)
        kind = self.type
        if kind == "uri_folder" and Path(path).is_file():
            kind = "uri_file"
        return Input(type=kind, path=path, mode=mode)


class TabularDataset(FileDataset):
    """A local MLTable folder read as a table (the v2 form of a v1 TabularDataset)."""

    type = "mltable"
    partition_keys: list[str] = []

    def to_pandas_dataframe(self, on_error: str = "null",
                            out_of_range_datetime: str = "null") -> Any:
        """The whole table (the MLTable's transformations applied)."""
        from mlpipe.data import read_mltable

        return read_mltable(self.local_path())

    def partition_by(self, partition_keys: list[str], target: Any, name: str | None = None,
                     show_progress: bool = True, partition_as_file_dataset: bool = False
                     ) -> TabularDataset:
        """The table written once per key combination under ``target`` (a folder, a
        ``DataPath`` or ``(datastore, path)``); the result reads it back with the keys as
        columns, ready for ``ParallelRunConfig(partition_keys=...)``."""
        folder = Path(local_text(target))
        folder = folder if folder.is_absolute() else caller_dir() / folder
        result = TabularDataset(str(partitioned_mltable(self.to_pandas_dataframe(),
                                                        list(partition_keys), folder)))
        result.partition_keys = list(partition_keys)
        return result.register(None, name) if name else result


class _FileFactory:
    @staticmethod
    def from_files(path: str | os.PathLike[str] | Sequence[Any], validate: bool = True,
                   partition_format: str | None = None, **kwargs: Any) -> FileDataset:
        """Files at ``path`` (a folder, a file or a glob; ``(datastore, path)``); with
        ``partition_format`` (``"data/{user}/{season}/{genre}.wav"``) the values in each
        file's path become its partition keys, for ``ParallelRunConfig(partition_keys=...)``."""
        if isinstance(path, os.PathLike) or (isinstance(path, tuple) and len(path) == 2
                                             and isinstance(path[0], Datastore)):
            path = local_text(path)
        if not isinstance(path, str):
            paths = list(path)
            if len(paths) != 1:
                raise ValidationError([Diagnostic("local FileDataset takes one folder or file path",
                                                  location=call_site(), code="unsupported")])
            path = os.fspath(paths[0])
        return FileDataset(str(path), partition_format)


class _TabularFactory:
    @staticmethod
    def from_mltable(path: str) -> TabularDataset:
        return TabularDataset(path)

    @staticmethod
    def from_delimited_files(path: Any, validate: bool = True, include_path: bool = False,
                             infer_column_types: bool = True, set_column_types: Any = None,
                             separator: str = ",", header: Any = True,
                             **kwargs: Any) -> TabularDataset:
        """CSV files (a file, a folder or a glob; a ``Datastore.path(...)``) as a table: an
        MLTable for them is written under ``<runs-dir>/datasets``."""
        return TabularDataset(str(delimited_mltable(path, caller_dir(), separator, header)))


class Dataset:
    """``Dataset.File.from_files(path)``, ``Dataset.Tabular.from_mltable(path)`` for local data;
    ``Dataset.get_by_name(workspace, name)`` for a registered one."""

    File = _FileFactory
    Tabular = _TabularFactory

    @staticmethod
    def get_by_name(workspace: Any, name: str, version: str | int = "latest") -> FileDataset:
        """The dataset registered as ``name`` (``dataset.register(...)`` or
        ``ml_client.data.create_or_update(...)``) from the local asset store."""
        fields = AssetStore().get("data", name, None if version == "latest" else str(version))
        kind = TabularDataset if fields.get("type") == "mltable" else FileDataset
        dataset = kind(str(fields["path"]))
        dataset.name = name
        dataset.version = int(fields["version"]) if str(fields["version"]).isdigit() else None
        return dataset


__all__ = ["Dataset", "DatasetConsumptionConfig", "FileDataset", "OutputFileDatasetConfig",
           "PipelineData", "TabularDataset"]
