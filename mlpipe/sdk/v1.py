"""The v1 ``ParallelRunConfig`` / ``ParallelRunStep`` / ``Pipeline`` API, run locally as v2.

The v1 rules (ranges, ``output_action``, ``partition_keys`` with ``mini_batch_size``,
the ``mini_batch_size`` pattern ...) are checked when a config is made, as v1
does, and reported together in one :class:`~mlpipe.diagnostics.ValidationError`.
A step then becomes a v2 ``type: parallel`` step:

==========================  ======================================================
v1                          v2
==========================  ======================================================
node_count                  resources.instance_count
process_count_per_node      max_concurrency_per_instance
run_invocation_timeout      retry_settings.timeout
run_max_try                 retry_settings.max_retries + 1
allowed_failed_count        mini_batch_error_threshold
allowed_failed_percent      program_arguments ``--allowed_failed_percent``
error_threshold             error_threshold
output_action append_row    task.append_row_to: ${{outputs.<output>}}
source_directory            task.code (entry_script stays relative to it)
==========================  ======================================================
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

from mlpipe.diagnostics import Diagnostic, Location, ValidationError
from mlpipe.sdk.callsite import call_site, caller_dir
from mlpipe.sdk.entities import Environment, JobResourceConfiguration, RetrySettings, RunFunction
from mlpipe.sdk.io import Input, Output
from mlpipe.sdk.job import PipelineJob
from mlpipe.sdk.nodes import ParallelNode
from mlpipe.sdk.paths import relative_to
from mlpipe.sdk.v1_runs import (
    PipelineParameter,
    PipelineRun,
    parameter_values,
    resolve,
    v2_name,
)
from mlpipe.sdk.yamlio import dump_text
from mlpipe.sizes import MINI_BATCH_SIZE_PATTERN, parse_mini_batch_size

D = TypeVar("D", bound="FileDataset")
_FILE_NAME_BAD = re.compile(r'[~"#%&*:<>?/\\{|}]+')
_LOGGING_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_PARAMS = ("environment", "entry_script", "error_threshold", "output_action", "compute_target",
           "node_count", "process_count_per_node", "mini_batch_size", "source_directory",
           "description", "logging_level", "run_invocation_timeout", "run_max_try",
           "append_row_file_name", "allowed_failed_count", "allowed_failed_percent",
           "partition_keys", "environment_variables")


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


class ParallelRunConfig:
    """v1 ``azureml.pipeline.steps.ParallelRunConfig`` with its defaults and validation.

    ``environment`` may be an environment name (``"azureml:name:1"``), an
    :class:`~mlpipe.entities.Environment`, a dict, or any object with ``name``
    (and ``version``); it is recorded, never built. Relative ``source_directory``
    and ``entry_script`` are relative to the calling script (to the YAML file
    for :meth:`load_yaml`).
    """

    def __init__(self, environment: Any, entry_script: str, error_threshold: int,
                 output_action: str, compute_target: Any, node_count: int,
                 process_count_per_node: int | None = None,
                 mini_batch_size: int | str | None = None, source_directory: str | None = None,
                 description: str | None = None, logging_level: str = "INFO",
                 run_invocation_timeout: int = 60, run_max_try: int = 3,
                 append_row_file_name: str | None = None, allowed_failed_count: int | None = None,
                 allowed_failed_percent: float | None = None,
                 partition_keys: list[str] | str | None = None,
                 environment_variables: dict[str, str] | None = None) -> None:
        self.environment = environment
        self.entry_script = entry_script.strip() if isinstance(entry_script, str) else entry_script
        self.error_threshold = error_threshold
        self.output_action = output_action
        self.compute_target = compute_target
        self.node_count = node_count
        self.process_count_per_node = process_count_per_node
        self.mini_batch_size = mini_batch_size
        self.source_directory = (source_directory.strip() if isinstance(source_directory, str)
                                 else source_directory)
        self.description = description
        self.logging_level = "INFO" if logging_level is None else logging_level
        self.run_invocation_timeout = (60 if run_invocation_timeout is None
                                       else run_invocation_timeout)
        self.run_max_try = 3 if run_max_try is None else run_max_try
        self.append_row_file_name = append_row_file_name
        self.allowed_failed_count = allowed_failed_count
        self.allowed_failed_percent = allowed_failed_percent
        self.partition_keys = partition_keys
        self.environment_variables = environment_variables
        self._origin: Location | None = getattr(self, "_origin", None) or call_site()
        self._base_path: Path = getattr(self, "_base_path", None) or caller_dir()
        self._key_sites: dict[str, Location] = getattr(self, "_key_sites", {})
        # PipelineParameter settings: checked with their defaults, resolved per submission.
        self._parameters: dict[str, PipelineParameter] = {
            key: value for key in _PARAMS
            if isinstance(value := getattr(self, key), PipelineParameter)}
        for key, parameter in self._parameters.items():
            setattr(self, key, parameter.default_value)
        problems = self.problems()
        if problems:
            raise ValidationError(problems)
        if isinstance(self.mini_batch_size, str):
            self.mini_batch_size = _mini_batch_to_int(self.mini_batch_size)
        if isinstance(self.partition_keys, str):
            self.partition_keys = json.loads(self.partition_keys)

    def resolved(self) -> ParallelRunConfig:
        """This config with its ``PipelineParameter`` settings at the values in force."""
        if not self._parameters:
            return self
        copied = copy.copy(self)
        for key, parameter in self._parameters.items():
            value = resolve(parameter)
            if key == "mini_batch_size" and isinstance(value, str):
                value = _mini_batch_to_int(value)
            setattr(copied, key, value)
        return copied

    # -- v1 validation ------------------------------------------------------------------------
    def problems(self) -> list[Diagnostic]:
        """Every v1 rule this configuration breaks (empty when it is valid)."""
        out: list[Diagnostic] = []

        def bad(param: str, message: str, code: str = "invalid", hint: str | None = None) -> None:
            out.append(Diagnostic(message, key_path=f"parallel_run_config.{param}",
                                  location=self._key_sites.get(param, self._origin), code=code,
                                  hint=hint))

        if self.environment is None:
            bad("environment", "environment is required", "required")
        if not isinstance(self.entry_script, str) or not self.entry_script:
            bad("entry_script",
                "entry_script is required: the path of the script with init() and run(mini_batch)",
                "required")
        if self.compute_target is None:
            bad("compute_target", "compute_target is required (a compute name or object)",
                "required")
        action = self.output_action
        if not isinstance(action, str) or action.lower() not in ("append_row", "summary_only"):
            bad("output_action",
                f"output_action must be 'append_row' or 'summary_only', got {action!r}", "enum")
        if not _is_int(self.error_threshold) or self.error_threshold < -1:
            bad("error_threshold", f"error_threshold {self.error_threshold!r} is not an int "
                "greater than or equal to -1", "range")
        if not _is_int(self.node_count) or self.node_count < 1:
            bad("node_count", f"node_count {self.node_count!r} must be an int of at least 1",
                "range")
        pcpn = self.process_count_per_node
        if pcpn is not None and (not _is_int(pcpn) or pcpn < 1):
            bad("process_count_per_node",
                f"process_count_per_node {pcpn!r} must be an int greater than 0", "range")
        size = self.mini_batch_size
        if size is not None:
            if not isinstance(size, (int, str)) or isinstance(size, bool):
                bad("mini_batch_size", "mini_batch_size must be an int or a str", "type")
            elif isinstance(size, str) and not MINI_BATCH_SIZE_PATTERN.match(size):
                bad("mini_batch_size", f"mini_batch_size {size!r} must match "
                    r"^\d+([kKmMgG][bB])*$ (for example 10, 1024KB, 10MB, 1GB)", "pattern")
            elif _is_int(size) and size < 1:
                bad("mini_batch_size", f"mini_batch_size {size!r} must be at least 1", "range")
        keys = self.partition_keys
        if keys is not None:
            parsed: Any = keys
            if isinstance(keys, str):
                try:
                    parsed = json.loads(keys)
                except ValueError:
                    parsed = None
            if not (isinstance(parsed, list) and parsed
                    and all(isinstance(k, str) for k in parsed)):
                bad("partition_keys",
                    "partition_keys must be a non-empty list of str (or the JSON text of one)",
                    "type")
            if size is not None:
                bad("partition_keys",
                    "partition_keys and mini_batch_size cannot both be set: with partition_keys "
                    "each key combination is one mini-batch", "conflict",
                    hint="remove mini_batch_size")
        if self.logging_level not in _LOGGING_LEVELS:
            bad("logging_level",
                f"logging_level {self.logging_level!r} must be one of {', '.join(_LOGGING_LEVELS)}",
                "enum")
        timeout = self.run_invocation_timeout
        if not _is_int(timeout) or timeout <= 0:
            bad("run_invocation_timeout",
                f"run_invocation_timeout {timeout!r} must be an integer greater than 0", "range")
        tries = self.run_max_try
        if not _is_int(tries) or tries <= 0:
            bad("run_max_try", f"run_max_try {tries!r} must be an integer greater than 0", "range")
        count = self.allowed_failed_count
        if count is not None and (not _is_int(count) or count < -1):
            bad("allowed_failed_count",
                f"allowed_failed_count {count!r} is not an int greater than or equal to -1",
                "range")
        percent = self.allowed_failed_percent
        if percent is not None:
            if not isinstance(percent, (int, float)) or isinstance(percent, bool):
                bad("allowed_failed_percent",
                    f"allowed_failed_percent {percent!r} is not an int or float", "type")
            elif not 0 <= percent <= 100:
                bad("allowed_failed_percent",
                    f"allowed_failed_percent {percent!r} is not between 0 and 100", "range")
        name = self.append_row_file_name
        appends = isinstance(action, str) and action.lower() == "append_row"
        if name is not None and appends:  # noqa: SIM102 - one rule, one condition
            if not isinstance(name, str) or not name or _FILE_NAME_BAD.search(name):
                bad("append_row_file_name",
                    f"append_row_file_name {name!r} must be a valid UNIX file name", "pattern")
        env_vars = self.environment_variables
        if env_vars is not None and not (isinstance(env_vars, Mapping)
                                         and all(isinstance(k, str) for k in env_vars)):
            bad("environment_variables", "environment_variables must be a dict of names to values",
                "type")
        return out

    # -- YAML -----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The ``parallel_run_config`` mapping :meth:`save_to_yaml` writes (v1's keys)."""
        compute = self.compute_target
        return {
            "mini_batch_size": self.mini_batch_size,
            "error_threshold": self.error_threshold,
            "output_action": self.output_action,
            "logging_level": self.logging_level,
            "compute_target_name": compute
            if isinstance(compute, str)
            else getattr(compute, "name", str(compute)),
            "node_count": self.node_count,
            "process_count_per_node": self.process_count_per_node,
            "entry_script": self.entry_script,
            "source_directory": self.source_directory,
            "description": self.description,
            "run_invocation_timeout": self.run_invocation_timeout,
            "run_max_try": self.run_max_try,
            "append_row_file_name": self.append_row_file_name,
            "allowed_failed_count": self.allowed_failed_count,
            "allowed_failed_percent": self.allowed_failed_percent,
            "partition_keys": self.partition_keys,
            "environment_variables": self.environment_variables,
            "environment": environment_reference(self.environment),
        }

    def save_to_yaml(self, path: str | os.PathLike[str]) -> None:
        """Write the configuration to a YAML file (a ``parallel_run_config:`` mapping, as v1)."""
        target = Path(os.fspath(path)).resolve()
        data = self.to_dict()
        if data["source_directory"] and not Path(data["source_directory"]).is_absolute():
            data["source_directory"] = relative_to(self._base_path / data["source_directory"],
                                                   target.parent)
        elif not data["source_directory"] and not Path(data["entry_script"]).is_absolute():
            data["entry_script"] = relative_to(self._base_path / data["entry_script"],
                                               target.parent)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(dump_text({"parallel_run_config": data}), encoding="utf-8")

    @staticmethod
    def load_yaml(workspace: Any, path: str | os.PathLike[str] | None = None) -> ParallelRunConfig:
        """Read a configuration written by :meth:`save_to_yaml`.

        Called as ``load_yaml(workspace, path)`` or ``load_yaml(path)``.
        """
        from mlpipe.sdk.loading import read_yaml, resolve_source

        if path is None:
            workspace, path = None, workspace
        file = resolve_source(path).resolve()
        data, positions = read_yaml(file, "parallel_run_config")
        config = data.get("parallel_run_config")
        if not isinstance(config, Mapping):
            raise ValidationError([Diagnostic("expected a 'parallel_run_config' mapping at the top "
                                              "of the file", key_path="parallel_run_config",
                                              location=positions.locate(()), code="required")])
        known = set(_PARAMS) | {"compute_target_name"}
        unknown = [Diagnostic(f"unknown key {key!r}", key_path=f"parallel_run_config.{key}",
                              location=positions.locate(("parallel_run_config", key)),
                              code="unknown-key") for key in config if key not in known]
        if unknown:
            raise ValidationError(unknown)
        size = config.get("mini_batch_size")
        new = ParallelRunConfig.__new__(ParallelRunConfig)
        new._origin = positions.locate(("parallel_run_config",))
        new._base_path = file.parent
        new._key_sites = {key: positions.locate(("parallel_run_config", key)) for key in config}
        new._key_sites["compute_target"] = new._key_sites.get("compute_target_name", new._origin)
        new.__init__(  # type: ignore[misc]
            environment=config.get("environment"),
            entry_script=config.get("entry_script"),
            error_threshold=config.get("error_threshold"),
            output_action=config.get("output_action"),
            compute_target=config.get("compute_target_name", config.get("compute_target")),
            node_count=config.get("node_count"),
            process_count_per_node=config.get("process_count_per_node"),
            mini_batch_size=None if size is None else str(size),
            source_directory=config.get("source_directory"),
            description=config.get("description"),
            logging_level=config.get("logging_level"),
            run_invocation_timeout=config.get("run_invocation_timeout"),
            run_max_try=config.get("run_max_try"),
            append_row_file_name=config.get("append_row_file_name"),
            allowed_failed_count=config.get("allowed_failed_count"),
            allowed_failed_percent=config.get("allowed_failed_percent"),
            partition_keys=config.get("partition_keys"),
            environment_variables=config.get("environment_variables"),
        )
        return new

    def _canonical(self) -> dict[str, Any]:
        data = self.to_dict()
        if data["source_directory"]:
            data["source_directory"] = str((self._base_path / data["source_directory"]).resolve())
        elif isinstance(data["entry_script"], str):
            data["entry_script"] = str((self._base_path / data["entry_script"]).resolve())
        return data

    def __eq__(self, other: object) -> bool:
        """Equal settings, with relative folders compared where they point."""
        return isinstance(other, ParallelRunConfig) and self._canonical() == other._canonical()

    def __repr__(self) -> str:
        return f"ParallelRunConfig({self.to_dict()})"


def _mini_batch_to_int(size: str) -> int:
    """v1 turns ``"10KB"`` into bytes (1 KB = 1024 bytes) and ``"5"`` into 5."""
    read = parse_mini_batch_size(size)
    assert read is not None  # checked against MINI_BATCH_SIZE_PATTERN first
    return read.bytes


def environment_reference(env: Any) -> Any:
    """The YAML value of a v1 environment (a reference string or an inline mapping)."""
    if env is None or isinstance(env, (str, Mapping)):
        if isinstance(env, str) and not env.startswith("azureml:"):
            return f"azureml:{env}"
        return dict(env) if isinstance(env, Mapping) else env
    if isinstance(env, Environment):
        return env.to_yaml_value()
    name = getattr(env, "name", None)
    version = getattr(env, "version", None)
    if name:
        return f"azureml:{name}:{version}" if version else f"azureml:{name}@latest"
    return str(env)


# -- data references -------------------------------------------------------------------------------


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

    def __init__(self, path: str) -> None:
        self.path = str(path)
        self._base = caller_dir()
        self.name: str | None = None
        self.version: int | None = None

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
        from mlpipe.sdk.assets import AssetStore

        path = self.local_path()
        self.version = int(AssetStore().register("data", {
            "name": name, "type": self.type, "path": path, "description": description,
            "tags": dict(tags or {})}, path))
        self.name = name
        return self

    def to_input(self, mode: str | None = None) -> Input:
        path = self.local_path()
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
        from mlpipe.sdk.v1_data import local_text, partitioned_mltable

        folder = Path(local_text(target))
        folder = folder if folder.is_absolute() else caller_dir() / folder
        result = TabularDataset(str(partitioned_mltable(self.to_pandas_dataframe(),
                                                        list(partition_keys), folder)))
        result.partition_keys = list(partition_keys)
        return result.register(None, name) if name else result


class _FileFactory:
    @staticmethod
    def from_files(path: str | os.PathLike[str] | Sequence[Any], validate: bool = True,
                   **kwargs: Any) -> FileDataset:
        from mlpipe.sdk.v1_data import Datastore, local_text

        if isinstance(path, os.PathLike) or (isinstance(path, tuple) and len(path) == 2
                                             and isinstance(path[0], Datastore)):
            path = local_text(path)
        if not isinstance(path, str):
            paths = list(path)
            if len(paths) != 1:
                raise ValidationError([Diagnostic("local FileDataset takes one folder or file path",
                                                  location=call_site(), code="unsupported")])
            path = os.fspath(paths[0])
        return FileDataset(str(path))


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
        from mlpipe.sdk.v1_data import delimited_mltable

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
        from mlpipe.sdk.assets import AssetStore

        fields = AssetStore().get("data", name, None if version == "latest" else str(version))
        kind = TabularDataset if fields.get("type") == "mltable" else FileDataset
        dataset = kind(str(fields["path"]))
        dataset.name = name
        dataset.version = int(fields["version"]) if str(fields["version"]).isdigit() else None
        return dataset


# -- steps and pipelines ---------------------------------------------------------------------------


class ParallelRunStep:
    """v1 ``ParallelRunStep``: one parallel step with its config, input(s) and output."""

    def __init__(self, name: str, parallel_run_config: ParallelRunConfig, inputs: Sequence[Any],
                 output: Any = None, side_inputs: Sequence[Any] | None = None,
                 arguments: Sequence[Any] | None = None, allow_reuse: bool = True) -> None:
        self.name = name
        self.parallel_run_config = parallel_run_config
        self.inputs = list(inputs or [])
        self.output = output
        self.side_inputs = list(side_inputs or [])
        self.arguments = list(arguments or [])
        self.allow_reuse = allow_reuse
        self._origin = call_site()
        problems = []
        if not isinstance(parallel_run_config, ParallelRunConfig):
            problems.append(Diagnostic("parallel_run_config must be a ParallelRunConfig",
                                       key_path=f"{name}.parallel_run_config",
                                       location=self._origin, code="type"))
        if len(self.inputs) != 1:
            problems.append(Diagnostic(f"ParallelRunStep {name!r} has {len(self.inputs)} inputs; a "
                                       f"v2 parallel step "
                                       "reads exactly one input_data", key_path=f"{name}.inputs",
                                       location=self._origin, code="unsupported",
                                       hint="pass further data as side_inputs"))
        if problems:
            raise ValidationError(problems)

    def to_node(self, producers: Mapping[int, tuple[str, str]], base: Path) -> ParallelNode:
        """The v2 parallel step (``producers`` maps id(PipelineData) to (step, output))."""
        config = self.parallel_run_config.resolved()
        names: dict[int, str] = {}
        inputs: dict[str, Any] = {}

        def add_input(item: Any, default_name: str) -> str:
            name, value = _input_of(item, default_name, producers, base)
            names[id(item)] = name
            inputs[name] = value
            return name

        data_name = add_input(self.inputs[0], "input_data")
        for index, item in enumerate(self.side_inputs):
            add_input(item, f"side_input_{index}")

        outputs: dict[str, Output] = {}
        output_name = None
        append = str(config.output_action).lower() == "append_row"
        if self.output is not None or append:
            output_name, decl = _output_of(self.output, append, config.append_row_file_name, base)
            outputs[output_name] = decl

        args = [_argument(a, names, output_name, self.output) for a in self.arguments]
        if config.allowed_failed_percent is not None:
            args += ["--allowed_failed_percent", _number_text(config.allowed_failed_percent)]
        code, entry = _code_and_entry(config, base)
        task = RunFunction(
            code=code,
            entry_script=entry,
            environment=environment_reference(config.environment),
            program_arguments=" ".join(args) or None,
            append_row_to="${{outputs.%s}}" % output_name if append else None,
        )
        compute = config.compute_target
        node = ParallelNode(
            name=v2_name(self.name),
            display_name=self.name if v2_name(self.name) != self.name else None,
            description=config.description,
            compute=compute if isinstance(compute, str) else getattr(compute, "name", None),
            outputs=outputs,
            input_data="${{inputs.%s}}" % data_name,
            mini_batch_size=None if config.mini_batch_size is None else str(config.mini_batch_size),
            partition_keys=config.partition_keys,
            resources=JobResourceConfiguration(instance_count=config.node_count),
            max_concurrency_per_instance=config.process_count_per_node,
            error_threshold=config.error_threshold,
            mini_batch_error_threshold=config.allowed_failed_count,
            logging_level=config.logging_level,
            retry_settings=RetrySettings(max_retries=config.run_max_try - 1,
                                         timeout=config.run_invocation_timeout),
            environment_variables=dict(config.environment_variables)
            if config.environment_variables
            else None,
            task=task,
            is_deterministic=None if self.allow_reuse else False,
        )
        node._inputs._values.update(inputs)
        object.__setattr__(node, "_origin", self._origin)
        object.__setattr__(node, "_call_site", self._origin)
        object.__setattr__(node, "_definition_site", config._origin)
        for obj in (task, node.resources, node.retry_settings):
            object.__setattr__(obj, "_origin", config._origin)
        return node


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _input_of(item: Any, default_name: str, producers: Mapping[int, tuple[str, str]],
              base: Path) -> tuple[str, Any]:
    if isinstance(item, PipelineParameter):
        name = item.name
        value = resolve(item)
        return name, _input_of(value, name, producers, base)[1]
    if isinstance(item, PipelineData):
        source = producers.get(id(item))
        if source is None:
            raise ValidationError([Diagnostic(f"input {item.name!r} is a PipelineData that no step "
                                              f"of this "
                                              "pipeline writes", location=call_site(),
                                              code="binding")])
        return item.name, {"type": "uri_folder", "path": "${{parent.jobs.%s.outputs.%s}}" % source}
    if isinstance(item, DatasetConsumptionConfig):
        return item.name, _local_input(item.to_input(), base)
    if isinstance(item, FileDataset):
        return default_name, _local_input(item.to_input(), base)
    if isinstance(item, Input):
        return default_name, _local_input(item, base)
    if isinstance(item, (str, os.PathLike)):
        return default_name, _local_input(FileDataset(os.fspath(item)).to_input(), base)
    raise ValidationError([Diagnostic(f"cannot use {type(item).__name__} as a step input; use a "
                                      f"path, Input, "
                                      "Dataset.File.from_files(...).as_named_input(name) or "
                                      "PipelineData", location=call_site(), code="type")])


def _local_input(value: Input, base: Path) -> Input:
    if value.path and Path(value.path).is_absolute():
        value.path = relative_to(Path(value.path), base)
    return value


def _output_of(output: Any, append: bool, file_name: str | None, base: Path) -> tuple[str, Output]:
    name = "output"
    path = None
    if isinstance(output, PipelineData):
        name = output.output_name
        destination = getattr(output, "destination", None)
        if destination:
            path = relative_to((base / destination).resolve(), base)
    elif isinstance(output, Output):
        return "output", output
    elif isinstance(output, str):
        name = output
    if append and file_name:
        # v2 writes the append-row file under the basename of a uri_file output's path.
        template = path or "azureml://datastores/${{default_datastore}}/paths/${{name}}/%s" % name
        return name, Output(type="uri_file", path=f"{template.rstrip('/')}/{file_name}")
    return name, Output(type="uri_folder", path=path)


def _argument(value: Any, names: Mapping[int, str], output_name: str | None, output: Any) -> str:
    if id(value) in names:
        return "${{inputs.%s}}" % names[id(value)]
    if output is not None and value is output and output_name:
        return "${{outputs.%s}}" % output_name
    if isinstance(value, bool):
        return str(value)
    text = str(value)
    return text if "${{" in text else shlex.quote(text)


def _code_and_entry(config: ParallelRunConfig, base: Path) -> tuple[str, str]:
    entry = str(config.entry_script)
    cfg_base = config._base_path
    if config.source_directory:
        folder = Path(config.source_directory)
        folder = folder if folder.is_absolute() else (cfg_base / folder).resolve()
        return relative_to(folder, base), entry
    script = Path(entry)
    script = script if script.is_absolute() else (cfg_base / script).resolve()
    return relative_to(script.parent, base), script.name


class Pipeline:
    """v1 ``Pipeline(workspace, steps)``: a v2 pipeline job to validate, dump or run."""

    def __init__(self, workspace: Any = None, steps: Sequence[ParallelRunStep] = (),
                 description: str | None = None, default_datastore: Any = None,
                 **kwargs: Any) -> None:
        self.workspace = workspace
        self.steps = list(steps)
        self.description = description
        self.default_datastore = default_datastore
        self._origin = call_site()
        self._base_path = caller_dir()

    def to_job(self, *, experiment_name: str | None = None) -> PipelineJob:
        """The v2 :class:`~mlpipe.sdk.job.PipelineJob` these steps convert to."""
        producers: dict[int, tuple[str, str]] = {}
        for step in self.steps:
            if isinstance(step.output, PipelineData):
                producers[id(step.output)] = (v2_name(step.name), step.output.output_name)
        problems = [Diagnostic(f"step {type(step).__name__} is not supported; only "
                               "ParallelRunStep converts to v2 here", location=self._origin,
                               code="unsupported") for step in self.steps if not isinstance(step,
                                                                                            ParallelRunStep)]
        names = [step.name for step in self.steps if isinstance(step, ParallelRunStep)]
        problems += [Diagnostic(f"two steps are named {name!r}", location=self._origin,
                                code="duplicate")
                     for name in sorted(set(names)) if names.count(name) > 1]
        if problems:
            raise ValidationError(problems)
        jobs = {v2_name(step.name): step.to_node(producers, self._base_path)
                for step in self.steps}
        datastore = self.default_datastore
        settings = {}
        if datastore is not None:
            settings["default_datastore"] = (datastore if isinstance(datastore, str)
                                             else getattr(datastore, "name", str(datastore)))
        return PipelineJob(jobs=jobs, description=self.description, experiment_name=experiment_name,
                           settings=settings, base_path=self._base_path,
                           source=Path(self._origin.file) if self._origin and self._origin.file
                           else None, origin=self._origin)

    def validate(self) -> Any:
        """Check the converted pipeline; raises one ValidationError listing every problem."""
        return self.to_job().validate()

    def run(self, *, experiment_name: str | None = None,
            pipeline_parameters: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """Run locally (see :func:`mlpipe.run`); returns the run result.

        ``pipeline_parameters`` give ``PipelineParameter`` values for this run."""
        from mlpipe.sdk.running import run

        with parameter_values(pipeline_parameters):
            job = self.to_job(experiment_name=experiment_name)
        return run(job, **kwargs)

    def submit(self, experiment_name: str | None = None,
               pipeline_parameters: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """v1's ``submit``: runs the pipeline locally; returns a v1 ``PipelineRun``."""
        return PipelineRun(self.run(experiment_name=experiment_name,
                                    pipeline_parameters=pipeline_parameters, **kwargs),
                           experiment_name)


class Experiment:
    """v1 ``Experiment(workspace, name)``; ``submit(pipeline)`` runs it locally."""

    def __init__(self, workspace: Any = None, name: str | None = None) -> None:
        self.workspace = workspace
        self.name = name

    def submit(self, config: Pipeline, tags: Mapping[str, str] | None = None,
               **kwargs: Any) -> Any:
        """Run the v1 ``Pipeline`` locally under this experiment's name; returns a v1
        ``PipelineRun`` (``pipeline_parameters=`` set ``PipelineParameter`` values)."""
        if not isinstance(config, Pipeline):
            raise ValidationError([Diagnostic(
                f"Experiment.submit() takes a v1 Pipeline, got {type(config).__name__}",
                location=call_site(), code="type",
                hint="a v2 PipelineJob runs with job.run() or mlpipe.run(job)")])
        return config.submit(experiment_name=self.name, **kwargs)
