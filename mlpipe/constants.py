"""``mlpipe.constants``: mirror of ``azure.ai.ml.constants``.

The values are not repeated here: each class is built from the schema that owns
them (``mlpipe.schema``), so a type or mode the validator accepts is a constant
here and nothing else is. Names follow azure-ai-ml (``AssetTypes.URI_FOLDER``).
Mirror module: docs/architecture.md lists every mirror.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Any, get_args

from mlpipe.schema.inputs_outputs import DataType, InputMode, LiteralType, OutputMode
from mlpipe.schema.parallel import ParallelTask
from mlpipe.schema.pipeline import NODE_TYPES


def _members(values: Iterable[str]) -> dict[str, Any]:
    """``{"URI_FOLDER": "uri_folder", ...}`` for the values, in a stable order."""
    return {value.upper(): value for value in sorted(set(values))}


def _constants(name: str, doc: str, values: Iterable[str]) -> type:
    return type(name, (), {"__doc__": doc, "__module__": __name__, **_members(values)})


AssetTypes = _constants("AssetTypes", "Data input/output ``type`` values.", get_args(DataType))
InputTypes = _constants("InputTypes", "Literal input ``type`` values.", get_args(LiteralType))
InputOutputModes = _constants("InputOutputModes", "Input/output ``mode`` values.",
                              (*get_args(InputMode), *get_args(OutputMode)))
ParallelTaskType = _constants("ParallelTaskType", "``task.type`` of a parallel step.",
                              get_args(ParallelTask.model_fields["type"].annotation))
JobType = _constants("JobType", "Node and job ``type`` values.", NODE_TYPES)


class ListViewType(str, Enum):
    """``list_view_type`` of ``ml_client.<assets>.list`` (local stores have only active assets)."""

    ACTIVE_ONLY = "ActiveOnly"
    ARCHIVED_ONLY = "ArchivedOnly"
    ALL = "All"


__all__ = ["AssetTypes", "InputOutputModes", "InputTypes", "JobType", "ListViewType",
           "ParallelTaskType"]
