"""A v1 step's data as v2 inputs, outputs and argument text.

Every v1 data object a step names (in ``inputs``, ``outputs``, ``side_inputs``,
``arguments``) becomes one v2 input or output of the step's node:

- ``PipelineData`` / ``OutputFileDatasetConfig`` the step writes: ``outputs.<name>``
  (``destination`` gives its path);
- the same object read by a later step (itself, ``as_input()``, ``as_dataset()``,
  ``read_delimited_files()``, ...): ``inputs.<name>: ${{parent.jobs.<step>.outputs.<o>}}``;
- ``Dataset.File`` / ``Dataset.Tabular`` (``as_named_input``): ``inputs.<name>``
  (``uri_folder`` / ``uri_file`` / ``mltable``);
- ``DataReference``, ``DataPath`` (with its ``DataPathComputeBinding``): ``inputs.<name>``,
  the datastore's local folder;
- ``PipelineParameter``: its value in force (a data value becomes an input);
- any other argument: its text, shell-quoted.

A step's named dataset inputs are also described to the v1 run context
(``Run.get_context().input_datasets``): ``AZUREML_DATAREFERENCE_<name>`` holds the path and
:data:`DATASETS_ENV` (JSON) how to present it (:mod:`mlpipe.sdk.v1.run_context`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlpipe.diagnostics import Diagnostic, ValidationError
from mlpipe.sdk.callsite import call_site
from mlpipe.sdk.io import Input, Output
from mlpipe.sdk.paths import relative_to
from mlpipe.sdk.v1.datasets import (
    DataReference,
    DatasetConsumptionConfig,
    FileDataset,
    OutputTabularDatasetConfig,
    PipelineData,
    PipelineOutputFileDataset,
    PipelineOutputTabularDataset,
    TableReader,
    TabularDataset,
)
from mlpipe.sdk.v1.datastores import DataPath, DataPathComputeBinding
from mlpipe.sdk.v1.parameters import PipelineParameter, resolve

DATASETS_ENV = "MLPIPE_V1_DATASETS"
DATA_REFERENCE_ENV = "AZUREML_DATAREFERENCE_{}"

# (producing step's v2 name, output name) by id() of the data object's origin.
Producers = Mapping[int, tuple[str, str]]
# v1's run_after as data: the earlier step writes this (empty) output, the later one reads it.
RUN_AFTER = "run_after"


@dataclass(frozen=True)
class Order:
    """A step's ``run_after`` edges: the v2 names of the steps it runs after, and whether a
    later step runs after it."""

    after: Sequence[str] = ()
    awaited: bool = False


def origin(data: Any) -> Any:
    """The output object a copy (``ofdc.as_mount()``) stands for: the one steps are wired by."""
    return getattr(data, "_original", data)


def written_data(data: Any) -> PipelineData | None:
    """The ``PipelineData`` / ``OutputFileDatasetConfig`` whose folder ``data`` reads."""
    while isinstance(data, DatasetConsumptionConfig):
        data = data.dataset
    if isinstance(data, (PipelineOutputFileDataset, PipelineOutputTabularDataset)):
        data = data.pipeline_data
    elif isinstance(data, OutputTabularDatasetConfig):
        data = data.source
    elif not isinstance(data, PipelineData):
        return None
    written: PipelineData = origin(data)
    return written


def identifier(name: str) -> str:
    """A v1 name as a v2 input, output or step name (an identifier)."""
    cleaned = re.sub(r"\W", "_", name)
    return f"n_{cleaned}" if not cleaned or cleaned[:1].isdigit() else cleaned


def is_data(value: Any) -> bool:
    """Whether an argument is a data object (else it is text)."""
    value = resolve(value)
    return isinstance(value, (PipelineData, DatasetConsumptionConfig, PipelineOutputFileDataset,
                              PipelineOutputTabularDataset, OutputTabularDatasetConfig,
                              FileDataset, DataReference, DataPath, Input)) or _is_binding(value)


def _is_binding(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 \
        and isinstance(value[1], DataPathComputeBinding)


class Wiring:
    """The v2 inputs and outputs of one v1 step, and its arguments as text.

    ``writes`` are the data objects the step produces (:func:`origin` identities);
    ``producers`` says which step writes each data object the pipeline has."""

    def __init__(self, step_name: str, writes: Iterable[Any], producers: Producers,
                 base: Path, order: Order = Order()) -> None:
        self.step_name = step_name
        self.producers = producers
        self.base = base
        self.writes = {id(origin(data)) for data in writes}
        self.inputs: dict[str, Any] = {}
        self.outputs: dict[str, Output] = {}
        self.datasets: dict[str, dict[str, Any]] = {}  # v1 name -> how the run context shows it
        self._names: dict[int, str] = {}  # id(object or its origin) -> ${{...}} text
        for index, earlier in enumerate(order.after):
            self.inputs[f"{RUN_AFTER}_{index}"] = {
                "type": "uri_folder", "path": "${{parent.jobs.%s.outputs.%s}}" % (earlier,
                                                                                  RUN_AFTER)}
        if order.awaited:
            self.outputs[RUN_AFTER] = Output(type="uri_folder")

    # -- inputs --------------------------------------------------------------------------
    def add_input(self, item: Any, default_name: str = "input") -> str:
        """Make ``item`` an input (once); returns its binding text ``${{inputs.<name>}}``."""
        known = self._names.get(self._key(item))
        if known is not None:
            return known
        if isinstance(item, PipelineParameter):
            value = resolve(item)
            return self._remember(item, self.add_input(value, item.name) if is_data(value)
                                  else self._refuse(item))
        if _is_binding(item):
            param = item[0]
            name = param.name if isinstance(param, PipelineParameter) else default_name
            return self._remember(item, self._local(name, resolve(param), item[1].mode, "file"))
        written = written_data(item)
        if written is not None:
            return self._remember(item, self._upstream(item, written))
        name, dataset = default_name, item
        mode: str | None = None
        if isinstance(item, DatasetConsumptionConfig):
            name, dataset, mode = item.name, resolve(item.dataset), item.mode
        elif isinstance(item, DataReference):
            name, mode = item.data_reference_name, item.mode
        if isinstance(dataset, (str, os.PathLike)) and not isinstance(dataset, DataPath):
            dataset = FileDataset(os.fspath(dataset))
        kind = "table" if isinstance(dataset, TabularDataset) else "file"
        return self._remember(item, self._local(name, dataset, mode, kind))

    def _upstream(self, item: Any, written: PipelineData) -> str:
        source = self.producers.get(id(written))
        if source is None:
            raise ValidationError([Diagnostic(
                f"input {written.name!r} is a {type(written).__name__} that no step of this "
                "pipeline writes", location=call_site(), code="binding",
                hint="add the step that lists it in outputs= (or arguments=) to the pipeline")])
        name = item.name if isinstance(item, DatasetConsumptionConfig) else written.name
        key = self._unique(identifier(name), self.inputs)
        mode = item.mode if isinstance(item, DatasetConsumptionConfig) else None
        self.inputs[key] = {"type": "uri_folder", "path": "${{parent.jobs.%s.outputs.%s}}" % source,
                            **({"mode": "download"} if mode == "download" else {})}
        reader = table_reader(item)
        if reader is not None:
            self._describe(name, key, {"kind": "folder_table", **reader.as_dict()})
        elif isinstance(item, (DatasetConsumptionConfig, PipelineOutputFileDataset)):
            self._describe(name, key, {"kind": "file", "mode": mode or "mount"})
        return "${{inputs.%s}}" % key

    def _local(self, name: str, dataset: Any, mode: str | None, kind: str) -> str:
        if isinstance(dataset, DataPath):
            dataset = DataReference(dataset.datastore, name, dataset.path_on_datastore,
                                    "download" if mode == "download" else "mount")
        if isinstance(dataset, Input):
            value = dataset
        elif hasattr(dataset, "to_input"):
            value = dataset.to_input(None if mode in (None, "direct") else mode)
        else:
            raise self._unknown(dataset)
        if value.path and Path(value.path).is_absolute():
            value.path = relative_to(Path(value.path), self.base)
        key = self._unique(identifier(name), self.inputs)
        self.inputs[key] = value
        if isinstance(dataset, (FileDataset, DataReference)):
            self._describe(name, key, {"kind": kind, "mode": mode or "direct"})
        return "${{inputs.%s}}" % key

    def _describe(self, name: str, key: str, how: dict[str, Any]) -> None:
        self.datasets[name] = {"input": key, **how}

    # -- outputs -------------------------------------------------------------------------
    def add_output(self, item: Any, path: str | None = None, kind: str = "uri_folder") -> str:
        """Make ``item`` (a ``PipelineData`` / ``OutputFileDatasetConfig`` or a name) an output
        (once); returns its binding text ``${{outputs.<name>}}``."""
        data = origin(item)
        known = self._names.get(id(data))
        if known is not None:
            return known
        if isinstance(item, str):
            key = self._unique(identifier(item), self.outputs)
        else:
            key = self._unique(identifier(data.output_name), self.outputs)
            path = path or destination(item, self.base)
        self.outputs[key] = Output(type=kind, path=path)
        return self._remember(data, "${{outputs.%s}}" % key) if not isinstance(item, str) \
            else "${{outputs.%s}}" % key

    def writes_data(self, item: Any) -> bool:
        """Whether ``item`` (an argument, an entry of ``outputs``) is data this step writes."""
        return isinstance(item, PipelineData) and id(origin(item)) in self.writes

    # -- arguments -----------------------------------------------------------------------
    def argument(self, value: Any) -> str:
        """One argument as command-line text: data as its ``${{...}}`` binding (added as an
        input or output when no list named it), anything else shell-quoted."""
        if self.writes_data(value):
            return self.add_output(value)
        if isinstance(value, PipelineParameter) and not is_data(value):
            return self.argument(resolve(value))
        if is_data(value):
            return self.add_input(value)
        if isinstance(value, bool):
            return str(value)
        text = str(value)
        return text if "${{" in text else shlex.quote(text)

    def environment(self) -> dict[str, str]:
        """The variables that describe the step's named datasets to the v1 run context."""
        if not self.datasets:
            return {}
        env = {DATA_REFERENCE_ENV.format(name): "${{inputs.%s}}" % how["input"]
               for name, how in self.datasets.items()}
        env[DATASETS_ENV] = json.dumps(self.datasets, sort_keys=True)
        return env

    # -- helpers -------------------------------------------------------------------------
    def _key(self, item: Any) -> int:
        if _is_binding(item):
            return id(item[0])
        return id(origin(item)) if isinstance(item, PipelineData) else id(item)

    def _remember(self, item: Any, text: str) -> str:
        self._names[self._key(item)] = text
        return text

    def _unique(self, name: str, taken: Mapping[str, Any]) -> str:
        others = set(self.inputs) | set(self.outputs)
        if name not in others:
            return name
        index = 1
        while f"{name}_{index}" in others:
            index += 1
        return f"{name}_{index}"

    def _refuse(self, item: Any) -> str:
        raise ValidationError([Diagnostic(
            f"step {self.step_name!r}: PipelineParameter {item.name!r} is listed as an input but "
            f"holds {resolve(item)!r}, not data", location=call_site(), code="type",
            hint="pass it in arguments= instead")])

    def _unknown(self, item: Any) -> ValidationError:
        return ValidationError([Diagnostic(
            f"step {self.step_name!r}: cannot use {type(item).__name__} as a step input; use a "
            "path, Input, Dataset.File.from_files(...).as_named_input(name), a DataReference, "
            "PipelineData or OutputFileDatasetConfig", location=call_site(), code="type")])


def binding_name(text: str) -> str:
    """``x`` of ``${{inputs.x}}`` / ``${{outputs.x}}``."""
    return text.rsplit(".", 1)[1].rstrip("}")


def table_reader(item: Any) -> TableReader | None:
    """How ``item`` reads a step's output as a table (``None``: it does not)."""
    while isinstance(item, DatasetConsumptionConfig):
        item = item.dataset
    if isinstance(item, (PipelineOutputTabularDataset, OutputTabularDatasetConfig)):
        return item.reader
    return None


def destination(item: Any, base: Path) -> str | None:
    """Where a v1 output is written, as a v2 path: an ``OutputFileDatasetConfig``'s
    ``destination`` (a ``(datastore, path)`` pair, ``{run-id}`` is the job's name, or a local
    folder), else its datastore's ``<job name>/<output name>`` (v1 keeps intermediate data
    on the datastore; here ``<runs-dir>/datastores/<datastore>/...``)."""
    target = getattr(item, "destination", None)
    if isinstance(target, DataPath):
        target = (target.datastore, target.path_on_datastore)
    if target is None:
        store = _store_name(getattr(item, "datastore", None)) or "${{default_datastore}}"
        return "azureml://datastores/%s/paths/${{name}}/%s" % (store, item.output_name)
    if isinstance(target, tuple) and len(target) == 2:
        store, path = target
        path = str(path or "").replace("{run-id}", "${{name}}").replace("{output-name}",
                                                                         item.name).strip("/")
        return f"azureml://datastores/{_store_name(store)}/paths/{path}"
    return relative_to((base / str(target)).resolve(), base)


def _store_name(store: Any) -> str | None:
    return store if isinstance(store, str) or store is None else \
        getattr(store, "name", str(store))


__all__ = ["DATASETS_ENV", "DATA_REFERENCE_ENV", "RUN_AFTER", "Order", "Producers", "Wiring",
           "binding_name", "destination", "identifier", "is_data", "origin", "table_reader",
           "written_data"]
