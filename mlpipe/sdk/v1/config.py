"""v1 ``ParallelRunConfig``: its defaults, its validation and its YAML file.

The v1 rules (ranges, ``output_action``, ``partition_keys`` with ``mini_batch_size``,
the ``mini_batch_size`` pattern, read with :mod:`mlpipe.sizes`) are checked when a config
is made, as v1 does, and reported together in one :class:`~mlpipe.diagnostics.ValidationError`.
:mod:`mlpipe.sdk.v1.translation` turns a config into a v2 parallel step.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeGuard

from mlpipe.diagnostics import Diagnostic, Location, ValidationError
from mlpipe.sdk.callsite import call_site, caller_dir
from mlpipe.sdk.entities import Environment
from mlpipe.sdk.loading import read_yaml, resolve_source
from mlpipe.sdk.paths import relative_to
from mlpipe.sdk.v1.parameters import PipelineParameter, resolve
from mlpipe.sdk.yamlio import dump_text
from mlpipe.sizes import MINI_BATCH_SIZE_PATTERN, parse_mini_batch_size

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
                    f"{MINI_BATCH_SIZE_PATTERN.pattern} (for example 10, 1024KB, 10MB, 1GB)",
                    "pattern")
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


__all__ = ["ParallelRunConfig", "environment_reference"]
