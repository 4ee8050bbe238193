"""The types and modes of inputs and outputs: the one home of Azure ML's vocabulary for them.

The schema validates YAML against these (``schema/inputs_outputs.py``), the submission rules
list them (``schema/submission.py``), the plan and the compiler tell data from literals by
them (``plan.py``, ``compiler/values.py``) and the ``azure.ai.ml.constants`` mirror names
them (``constants.py``). ``tests/test_vocabulary.py`` fails when a list of them is spelled
anywhere else.
"""

from __future__ import annotations

from typing import Literal, get_args

# A data input or output: what it points at.
DataType = Literal["uri_file", "uri_folder", "mltable", "mlflow_model", "custom_model",
                   "triton_model"]
# A literal input (a value, not a path).
LiteralType = Literal["string", "integer", "number", "boolean"]
InputMode = Literal["ro_mount", "download", "direct", "eval_mount", "eval_download"]
OutputMode = Literal["rw_mount", "upload", "mount", "direct"]
# azure-ai-ml's legacy port type: any data, read like uri_folder / uri_file.
LEGACY_PATH_TYPE: Literal["path"] = "path"

INPUT_MODES: tuple[str, ...] = get_args(InputMode)
OUTPUT_MODES: tuple[str, ...] = get_args(OutputMode)
# every mode azure-ai-ml's InputOutputModes names (``link``: an output's, not run here)
PORT_MODES: tuple[str, ...] = (*INPUT_MODES, *(m for m in OUTPUT_MODES if m not in INPUT_MODES),
                               "link")
EVAL_MODES: tuple[str, ...] = ("eval_mount", "eval_download")  # an MLTable evaluated first

DATA_TYPES: tuple[str, ...] = get_args(DataType)
LITERAL_TYPES: tuple[str, ...] = get_args(LiteralType)
PORT_TYPES: tuple[str, ...] = (*DATA_TYPES, LEGACY_PATH_TYPE)  # what a component port may be
MODEL_TYPES: frozenset[str] = frozenset({"mlflow_model", "custom_model", "triton_model"})
DATA_ASSET_TYPES: tuple[str, ...] = ("uri_file", "uri_folder", "mltable")  # a data asset's
DEFAULT_DATA_TYPE: Literal["uri_folder"] = "uri_folder"  # an input or output without a type


def is_data_type(type_: object) -> bool:
    """Whether ``type_`` is data (a path), the legacy ``path`` type included."""
    return isinstance(type_, str) and type_ in PORT_TYPES


def is_literal_type(type_: object) -> bool:
    """Whether ``type_`` is a literal (``string``, ``integer``, ``number``, ``boolean``)."""
    return isinstance(type_, str) and type_ in LITERAL_TYPES


__all__ = ["DATA_ASSET_TYPES", "DATA_TYPES", "DEFAULT_DATA_TYPE", "EVAL_MODES", "INPUT_MODES",
           "LEGACY_PATH_TYPE", "LITERAL_TYPES", "MODEL_TYPES", "OUTPUT_MODES", "PORT_MODES",
           "PORT_TYPES", "DataType", "InputMode", "LiteralType", "OutputMode", "is_data_type",
           "is_literal_type"]
