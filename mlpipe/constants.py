"""``mlpipe.constants``: ``AssetTypes`` and ``InputOutputModes`` as in ``azure.ai.ml.constants``."""

from __future__ import annotations


class AssetTypes:
    """Input/output ``type`` values."""

    URI_FILE = "uri_file"
    URI_FOLDER = "uri_folder"
    MLTABLE = "mltable"
    MLFLOW_MODEL = "mlflow_model"
    CUSTOM_MODEL = "custom_model"
    TRITON_MODEL = "triton_model"


class InputOutputModes:
    """Input/output ``mode`` values."""

    MOUNT = "mount"
    DOWNLOAD = "download"
    UPLOAD = "upload"
    RO_MOUNT = "ro_mount"
    RW_MOUNT = "rw_mount"
    EVAL_MOUNT = "eval_mount"
    EVAL_DOWNLOAD = "eval_download"
    DIRECT = "direct"


__all__ = ["AssetTypes", "InputOutputModes"]
