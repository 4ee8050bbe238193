"""v1 data references: ``Dataset`` (``File`` / ``Tabular``), ``FileDataset``, ``TabularDataset``,
``DatasetConsumptionConfig``, ``PipelineData`` and ``OutputFileDatasetConfig``, as local data.

A dataset is a local folder, file or MLTable folder; ``register`` and
``Dataset.get_by_name`` use the local asset store. :mod:`mlpipe.sdk.v1.translation`
turns each of them into a v2 step input or output.
"""

from __future__ import annotations

import glob as globmod
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from mlpipe.compiler.assets import stand_in
from mlpipe.diagnostics import Diagnostic, ValidationError
from mlpipe.sdk.assets import AssetStore
from mlpipe.sdk.callsite import call_site, caller_dir
from mlpipe.sdk.io import Input
from mlpipe.sdk.v1.datastores import (
    DataPath,
    Datastore,
    cloud_text,
    datastore_argument,
    datastore_path,
    local_copy,
    local_text,
)
from mlpipe.sdk.v1.mltables import (
    delimited_mltable,
    files_mltable,
    frame_mltable,
    is_glob,
    parquet_mltable,
    partitioned_mltable,
)
from mlpipe.sdk.v1.parameters import resolve

D = TypeVar("D", bound="FileDataset")


def _random_name(prefix: str) -> str:
    """v1's name for an unnamed output or input: ``output_1a2b3c4d``."""
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


class PipelineData:
    """v1 intermediate data: a step's output folder, usable as another step's input
    (``as_input`` / ``as_mount`` / ``as_download`` name how it is delivered; ``as_dataset()``
    reads it as files, and then ``parse_parquet_files()`` / ``parse_delimited_files()`` as a
    table)."""

    def __init__(self, name: str, datastore: Any = None, output_name: str | None = None,
                 output_mode: str = "mount", output_path_on_compute: str | None = None,
                 output_overwrite: bool | None = None, data_type: str | None = None,
                 is_directory: bool | None = None, pipeline_output_name: str | None = None,
                 training_output: Any = None, **kwargs: Any) -> None:
        self.name = name
        self.datastore = datastore
        self.output_name = output_name or name
        self.output_mode = output_mode
        self.is_directory = is_directory
        self.data_type = data_type
        self._producer: Any = None  # the step that writes it (set when the step is made)

    def as_dataset(self) -> PipelineOutputFileDataset:
        return PipelineOutputFileDataset(self)

    def as_input(self, input_name: str | None = None) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig(input_name or self.name, self, "mount")

    def as_mount(self, overwrite: bool = False) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig(self.name, self, "mount")

    def as_download(self, input_name: str | None = None, path_on_compute: str | None = None,
                    overwrite: bool | None = None) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig(input_name or self.name, self, "download")

    def get_env_variable_name(self) -> str:
        """v1: the variable that holds the data's path in a step (``AZUREML_DATAREFERENCE_*``)."""
        return f"AZUREML_DATAREFERENCE_{self.name}"

    def __str__(self) -> str:
        return f"$AZUREML_DATAREFERENCE_{self.name}"

    def __repr__(self) -> str:
        return f"$AZUREML_DATAREFERENCE_{self.name}"


class PipelineOutputFileDataset:
    """``PipelineData.as_dataset()``: the output read as files; ``parse_*`` reads it as a
    table (the input keeps the ``PipelineData``'s name)."""

    def __init__(self, pipeline_data: PipelineData) -> None:
        self.pipeline_data = pipeline_data
        self.name = pipeline_data.name

    def parse_parquet_files(self, file_extension: str = ".parquet") -> PipelineOutputTabularDataset:
        return PipelineOutputTabularDataset(self.pipeline_data, TableReader("parquet"))

    def parse_delimited_files(self, parse_header: bool = True, separator: str = ",",
                              **kwargs: Any) -> PipelineOutputTabularDataset:
        return PipelineOutputTabularDataset(self.pipeline_data, TableReader(
            "delimited", separator, "all_files_same_headers" if parse_header else "no_header"))

    def as_named_input(self, name: str) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig(name, self.pipeline_data, "mount")

    def as_mount(self) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig(self.name, self.pipeline_data, "mount")

    def as_download(self) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig(self.name, self.pipeline_data, "download")


class PipelineOutputTabularDataset:
    """``PipelineData.as_dataset().parse_parquet_files()``: the output read as a table."""

    def __init__(self, pipeline_data: PipelineData, reader: TableReader) -> None:
        self.pipeline_data = pipeline_data
        self.reader = reader
        self.name = pipeline_data.name

    def as_named_input(self, name: str) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig(name, self)

    def keep_columns(self, columns: Any, validate: bool = False) -> PipelineOutputTabularDataset:
        return self


class TableReader:
    """How a folder of files is read as a table: ``delimited`` (separator, header) or
    ``parquet``."""

    def __init__(self, kind: str, separator: str = ",",
                 header: str = "all_files_same_headers") -> None:
        self.kind = kind
        self.separator = separator
        self.header = header

    def as_dict(self) -> dict[str, str]:
        return {"reader": self.kind, "separator": self.separator, "header": self.header}


class OutputFileDatasetConfig(PipelineData):
    """v1 ``OutputFileDatasetConfig(name, destination=None)``: a step's output folder;
    ``destination`` (a ``(datastore, path)`` pair, ``{run-id}`` allowed) is where it is written
    (under the datastore's local folder). ``as_input()`` consumes it in a later step,
    ``read_delimited_files()`` / ``read_parquet_files()`` as a table."""

    def __init__(self, name: str | None = None, destination: Any = None, source: str | None = None,
                 partition_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(name or _random_name("output"))
        self.destination = destination
        self.source = source
        self.partition_format = partition_format
        self.mode = "mount"
        self.registration: dict[str, Any] | None = None

    def as_input(self, name: str | None = None) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig(name or _random_name("input"), self, "mount")

    def as_mount(self, disable_metadata_cache: bool = False) -> OutputFileDatasetConfig:  # type: ignore[override]
        return self._with(mode="mount")

    def as_upload(self, overwrite: bool = False, source_globs: Any = None
                  ) -> OutputFileDatasetConfig:
        return self._with(mode="upload")

    def read_delimited_files(self, include_path: bool = False, separator: str = ",",
                             header: Any = True, partition_format: str | None = None,
                             path_glob: str | None = None, set_column_types: Any = None
                             ) -> OutputTabularDatasetConfig:
        name = getattr(header, "name", header)
        value = "no_header" if str(name).lower() in ("false", "no_headers") else \
            "all_files_same_headers"
        return OutputTabularDatasetConfig(self, TableReader("delimited", separator, value))

    def read_parquet_files(self, include_path: bool = False, partition_format: str | None = None,
                           path_glob: str | None = None, set_column_types: Any = None
                           ) -> OutputTabularDatasetConfig:
        return OutputTabularDatasetConfig(self, TableReader("parquet"))

    def register_on_complete(self, name: str, description: str | None = None,
                             tags: Mapping[str, str] | None = None) -> OutputFileDatasetConfig:
        """Register the output in the local asset store when the run completes."""
        return self._with(registration={"name": name, "description": description,
                                        "tags": dict(tags or {})})

    def _with(self, **changes: Any) -> OutputFileDatasetConfig:
        copy = object.__new__(OutputFileDatasetConfig)
        copy.__dict__.update(self.__dict__)
        copy.__dict__.update(changes)
        copy.__dict__["_original"] = getattr(self, "_original", self)  # same output, other mode
        return copy


class OutputTabularDatasetConfig:
    """``OutputFileDatasetConfig.read_delimited_files()`` / ``read_parquet_files()``: the output
    as a table; ``as_input(name)`` consumes it in a later step."""

    def __init__(self, source: OutputFileDatasetConfig, reader: TableReader) -> None:
        self.source = source
        self.reader = reader
        self.name = source.name

    def as_input(self, name: str | None = None) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig(name or _random_name("input"), self)

    def as_mount(self) -> OutputTabularDatasetConfig:
        return self

    def register_on_complete(self, name: str, description: str | None = None,
                             tags: Mapping[str, str] | None = None) -> OutputTabularDatasetConfig:
        self.source = self.source.register_on_complete(name, description, tags)
        return self

    def keep_columns(self, columns: Any, validate: bool = False) -> OutputTabularDatasetConfig:
        return self


class DatasetConsumptionConfig:
    """A named input (``dataset.as_named_input(name)``, ``output.as_input(name)``) with its
    delivery ``mode`` (``direct``, ``mount``, ``download``); ``path_on_compute`` is
    recorded (the step reads the data where it is)."""

    def __init__(self, name: str, dataset: Any, mode: str | None = "direct",
                 path_on_compute: str | None = None) -> None:
        self.name = name
        self.dataset = dataset
        self.mode = mode
        self.path_on_compute = path_on_compute

    def as_mount(self, path_on_compute: str | None = None) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig(self.name, self.dataset, "ro_mount"
                                        if not isinstance(self.dataset, PipelineData) else "mount",
                                        path_on_compute)

    def as_download(self, path_on_compute: str | None = None) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig(self.name, self.dataset, "download", path_on_compute)

    def to_input(self) -> Input:
        mode = None if self.mode == "direct" else self.mode
        given: Input = resolve(self.dataset).to_input(mode)
        return given


class DataReference:
    """v1 ``DataReference(datastore, data_reference_name, path_on_datastore, mode)``: a path on
    a datastore (its local folder, see :mod:`mlpipe.sdk.v1.datastores`) as a step input."""

    def __init__(self, datastore: Datastore, data_reference_name: str | None = None,
                 path_on_datastore: str | None = None, mode: str = "mount",
                 path_on_compute: str | None = None, overwrite: bool = False) -> None:
        self.datastore = datastore_argument(datastore, "DataReference")
        self.data_reference_name: str = data_reference_name or str(getattr(datastore, "name",
                                                                             "data"))
        self.path_on_datastore = path_on_datastore
        self.mode = mode
        self.path_on_compute = path_on_compute
        self.overwrite = overwrite

    def as_mount(self) -> DataReference:
        return self._with_mode("mount")

    def as_download(self, path_on_compute: str | None = None, overwrite: bool = False
                    ) -> DataReference:
        return self._with_mode("download")

    def path(self, path: str | None = None, data_reference_name: str | None = None
             ) -> DataReference:
        return DataReference(self.datastore, data_reference_name or self.data_reference_name,
                             path, self.mode)

    def local_path(self) -> str:
        return os.fspath(DataPath(self.datastore, self.path_on_datastore))

    def to_input(self, mode: str | None = None) -> Input:
        """The step input: on a storage account's datastore, its ``azureml://datastores/``
        URI, read when the step runs (as azureml-core moves no data when a pipeline is
        defined); else the local folder."""
        how = "download" if self.mode == "download" else None
        path = DataPath(self.datastore, self.path_on_datastore)
        uri = path.cloud_uri()
        if uri is not None:
            return Input(type=self.datastore.input_type(self.path_on_datastore), path=uri,
                         mode=how)
        local = os.fspath(path)
        return Input(type="uri_file" if Path(local).is_file() else "uri_folder", path=local,
                     mode=how)

    def _with_mode(self, mode: str) -> DataReference:
        return DataReference(self.datastore, self.data_reference_name, self.path_on_datastore,
                             mode, self.path_on_compute, self.overwrite)

    def __str__(self) -> str:
        return f"$AZUREML_DATAREFERENCE_{self.data_reference_name}"


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

    def as_mount(self, path_on_compute: str | None = None) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig("input_data", self, "ro_mount", path_on_compute)

    def as_download(self, path_on_compute: str | None = None) -> DatasetConsumptionConfig:
        return DatasetConsumptionConfig("input_data", self, "download", path_on_compute)

    def to_path(self) -> list[str]:
        """The files' paths relative to the dataset's folder (``/name.csv``), as v1 lists them."""
        root = Path(self.local_path())
        if root.is_file():
            return ["/" + root.name]
        return sorted("/" + p.relative_to(root).as_posix() for p in _files_of(self))

    def download(self, target_path: str | os.PathLike[str] | None = None,
                 overwrite: bool = False, ignore_not_found: bool = False) -> list[str]:
        """Copy the files into ``target_path`` (a new temporary folder when not given),
        keeping their paths below the dataset's folder; returns the copies' paths."""
        root = Path(self.local_path())
        target = Path(target_path) if target_path is not None else Path(tempfile.mkdtemp())
        copies = []
        for source in _files_of(self):
            copy = target / (source.name if root.is_file() else source.relative_to(root))
            if copy.exists() and not overwrite:
                raise FileExistsError(f"FileDataset.download: {copy} exists (pass "
                                      "overwrite=True to replace it)")
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy)
            copies.append(str(copy))
        return copies

    def mount(self, mount_point: str | None = None, **kwargs: Any) -> _Mount:
        """A context (``with ds.mount() as m: m.mount_point``) whose ``mount_point`` is the
        dataset's folder: nothing needs mounting locally."""
        path = Path(self.local_path())
        return _Mount(str(path if path.is_dir() else path.parent))

    def local_path(self) -> str:
        """The dataset's path, absolute (relative paths are the creating script's); a URL is
        its ``mlpipe.toml`` stand-in when one is mapped (else the URL itself)."""
        if "://" in self.path:
            found = stand_in(self.path, self._base)
            if found is not None:
                return str(found)
            return local_copy(self.path, self._base) or self.path  # a datastore's: fetched now
        path = Path(self.path)
        return self.path if path.is_absolute() else str((self._base / path).resolve())

    def register(self: D, workspace: Any, name: str, description: str | None = None,
                 tags: Mapping[str, str] | None = None, create_new_version: bool = False
                 ) -> D:
        """Register the dataset in the local asset store (``Dataset.get_by_name`` and v2
        ``azureml:name:version`` inputs then find it); a datastore's folder is registered
        as its URI (nothing is downloaded, as in azureml)."""
        on_account = self._on_account()
        path = self.path if on_account is not None else self.local_path()
        self.version = int(AssetStore().register("data", {
            "name": name, "type": self.type, "path": path, "description": description,
            "tags": dict(tags or {})}, path))
        self.name = name
        return self

    def to_input(self, mode: str | None = None) -> Input:
        lazy = self._cloud_input(mode)
        if lazy is not None:
            return lazy
        path = self.local_path()
        if self.type == "uri_folder" and (self.partition_format or is_glob(self.path)):
            return Input(type="mltable", path=str(files_mltable(path, self.partition_format)),
                         mode=mode)
        kind = self.type
        if kind == "uri_folder" and Path(path).is_file():
            kind = "uri_file"
        return Input(type=kind, path=path, mode=mode)

    def _cloud_input(self, mode: str | None) -> Input | None:
        """A dataset of a datastore's folder or file (``from_files(datastore.path(...))``) as
        its URI, read when the step runs; ``None`` when it needs local files first (a
        table, a glob, a partition format) or is not on a storage account."""
        found = self._on_account()
        if found is None or self.type != "uri_folder" or self.partition_format \
                or is_glob(self.path):
            return None
        return Input(type=found.datastore.input_type(found.path_on_datastore), path=self.path,
                     mode=mode)

    def _on_account(self) -> DataPath | None:
        """The ``DataPath`` of a dataset whose path is a storage account's datastore URI
        (not mapped to a local folder in ``mlpipe.toml``), else ``None``."""
        found = datastore_path(self.path, self._base)
        if found is None or stand_in(self.path, self._base) is not None \
                or found.cloud_uri() is None:
            return None
        return found


def _files_of(dataset: FileDataset) -> list[Path]:
    """The files a dataset stands for (a folder's files below it, a glob's matches)."""
    path = dataset.local_path()
    if is_glob(path):
        return sorted(Path(p) for p in globmod.glob(path, recursive=True) if Path(p).is_file())
    root = Path(path)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise FileNotFoundError(f"dataset path {path} does not exist")
    return sorted(p for p in root.rglob("*") if p.is_file())


class _Mount:
    """What ``FileDataset.mount()`` returns: ``mount_point``, ``start()``, ``stop()``."""

    def __init__(self, mount_point: str) -> None:
        self.mount_point = mount_point

    def start(self) -> None:
        """Nothing to mount: the files are on this machine."""

    def stop(self) -> None:
        """Nothing to unmount."""

    def __enter__(self) -> _Mount:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class TabularDataset(FileDataset):
    """A local MLTable folder read as a table (the v2 form of a v1 TabularDataset)."""

    type = "mltable"
    partition_keys: list[str] = []

    def to_pandas_dataframe(self, on_error: str = "null",
                            out_of_range_datetime: str = "null") -> Any:
        """The whole table (the MLTable's transformations applied)."""
        from mlpipe.data import read_mltable

        return read_mltable(self.local_path())

    def random_split(self, percentage: float, seed: int | None = None
                     ) -> tuple[TabularDataset, TabularDataset]:
        """Two tables: each row goes to the first with probability ``percentage`` (seeded);
        Azure's split of the same rows is random too, so which rows differ."""
        import numpy  # noqa: PLC0415 - pandas' own dependency

        frame = self.to_pandas_dataframe()
        first = numpy.random.RandomState(seed).rand(len(frame)) < percentage
        return self._derived(frame[first], "split"), self._derived(frame[~first], "split")

    def take(self, count: int) -> TabularDataset:
        return self._derived(self.to_pandas_dataframe().head(count), "take")

    def skip(self, count: int) -> TabularDataset:
        return self._derived(self.to_pandas_dataframe().iloc[count:], "skip")

    def keep_columns(self, columns: str | list[str], validate: bool = False) -> TabularDataset:
        keep = [columns] if isinstance(columns, str) else list(columns)
        return self._derived(self.to_pandas_dataframe()[keep], "columns")

    def drop_columns(self, columns: str | list[str]) -> TabularDataset:
        drop = [columns] if isinstance(columns, str) else list(columns)
        return self._derived(self.to_pandas_dataframe().drop(columns=drop), "columns")

    def _derived(self, frame: Any, prefix: str) -> TabularDataset:
        return TabularDataset(str(frame_mltable(frame.reset_index(drop=True), prefix)))

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


class FileDatasetFactory:
    """``Dataset.File`` (azureml.data.dataset_factory's ``FileDatasetFactory``)."""

    @staticmethod
    def from_files(path: str | os.PathLike[str] | Sequence[Any], validate: bool = True,
                   partition_format: str | None = None, **kwargs: Any) -> FileDataset:
        """Files at ``path`` (a folder, a file or a glob; ``(datastore, path)``); with
        ``partition_format`` (``"data/{user}/{season}/{genre}.wav"``) the values in each
        file's path become its partition keys, for ``ParallelRunConfig(partition_keys=...)``."""
        if isinstance(path, os.PathLike) or (isinstance(path, tuple) and len(path) == 2
                                             and isinstance(path[0], Datastore)):
            path = cloud_text(path) or local_text(path)  # a datastore's: read when used
        if not isinstance(path, str):
            paths = list(path)
            if len(paths) != 1:
                raise ValidationError([Diagnostic("local FileDataset takes one folder or file path",
                                                  location=call_site(), code="unsupported")])
            path = os.fspath(paths[0])
        return FileDataset(str(path), partition_format)


class TabularDatasetFactory:
    """``Dataset.Tabular`` (azureml.data.dataset_factory's ``TabularDatasetFactory``)."""

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

    @staticmethod
    def from_parquet_files(path: Any, validate: bool = True, include_path: bool = False,
                           set_column_types: Any = None, partition_format: str | None = None
                           ) -> TabularDataset:
        """Parquet files (a file, a folder or a glob; a ``Datastore.path(...)``) as a table: an
        MLTable for them is written under ``<runs-dir>/datasets``."""
        return TabularDataset(str(parquet_mltable(path, caller_dir())))

    @staticmethod
    def register_pandas_dataframe(dataframe: Any, target: Any, name: str,
                                  description: str | None = None,
                                  tags: Mapping[str, str] | None = None,
                                  show_progress: bool = True, row_group_size: int | None = None,
                                  make_target_path_unique: bool = True) -> TabularDataset:
        """``dataframe`` written as ``dataframe.parquet`` to the datastore ``target`` (a
        ``DataPath``, a ``Datastore`` or ``(datastore, path)``; in a new ``<uuid>/`` folder
        below it unless ``make_target_path_unique=False``), read back with
        :meth:`from_parquet_files` and registered as a new version of ``name``, as azureml does."""
        datastore, folder = _datastore_target(target, "register_pandas_dataframe")
        folder = folder.strip("/")
        if make_target_path_unique:
            folder = f"{folder}/{uuid.uuid4()}".lstrip("/")
        with tempfile.TemporaryDirectory(prefix="mlpipe-dataframe-") as scratch:
            dataframe.to_parquet(Path(scratch, "dataframe.parquet"),
                                 row_group_size=row_group_size, engine="pyarrow")
            datastore.upload(scratch, folder, overwrite=True, show_progress=show_progress)
        dataset = TabularDatasetFactory.from_parquet_files(DataPath(datastore, folder + "/"))
        return dataset.register(datastore.workspace, name, description=description, tags=tags,
                                create_new_version=True)


def _datastore_target(target: Any, call: str) -> tuple[Datastore, str]:
    """A v1 ``target`` (``DataPath``, ``Datastore`` or ``(datastore, path)``) as its datastore
    and the path on it; anything else is one error naming the argument."""
    if isinstance(target, DataPath):
        return target.datastore, target.path_on_datastore
    if isinstance(target, tuple) and len(target) == 2:
        return datastore_argument(target[0], call) or Datastore(), str(target[1])
    if isinstance(target, Datastore):
        return target, ""
    raise ValidationError([Diagnostic(
        f"{call}(target=...) takes a DataPath, a Datastore or (datastore, path), got "
        f"{type(target).__name__}", key_path=f"{call}.target", location=call_site(),
        code="type", hint="pass (ws.get_default_datastore(), 'folder/on/the/datastore')")])


class Dataset:
    """``Dataset.File.from_files(path)``, ``Dataset.Tabular.from_mltable(path)`` for local data;
    ``Dataset.get_by_name(workspace, name)`` for a registered one."""

    File = FileDatasetFactory
    Tabular = TabularDatasetFactory

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


__all__ = ["DataReference", "Dataset", "DatasetConsumptionConfig", "FileDataset",
           "FileDatasetFactory", "TabularDatasetFactory",
           "OutputFileDatasetConfig", "OutputTabularDatasetConfig", "PipelineData",
           "PipelineOutputFileDataset", "PipelineOutputTabularDataset", "TableReader",
           "TabularDataset"]
