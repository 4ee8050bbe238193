"""Cloud storage inputs and outputs: Azure Blob and ADLS Gen2 through fsspec and adlfs.

* :mod:`~mlpipe.data.cloud.uris` reads the URIs (``azureml://datastores/...``, ``wasbs://``,
  ``abfss://``, ``https://<account>.blob.core.windows.net/...``);
* :mod:`~mlpipe.data.cloud.store` keeps the registered datastores (their secrets apart);
* :mod:`~mlpipe.data.cloud.access` resolves an account's URL and credential;
* :mod:`~mlpipe.data.cloud.blobs` lists (paged, streamed) and probes;
* :mod:`~mlpipe.data.cloud.reader` reads a streamed mini-batch's blobs on the worker;
* :mod:`~mlpipe.data.cloud.cache` downloads ``download`` inputs through an etag cache;
* :mod:`~mlpipe.data.cloud.upload` uploads outputs when their step ends.

Only this package imports the azure packages, and only when a job uses cloud data.
"""

from __future__ import annotations

from mlpipe.plan import PlanInput

STREAMED_TYPES = frozenset({"uri_folder", "uri_file", "path"})
STREAMED_MODES = frozenset({None, "ro_mount", "mount"})


def streams(item: PlanInput, *, major: bool) -> bool:
    """Whether a cloud input is read a mini-batch at a time on the workers (the major
    input of a parallel step, a ``uri_folder``/``uri_file`` in ``ro_mount``, Azure's
    default mode) rather than downloaded before its step starts (``download``, an MLTable,
    a step's other inputs, a command step's)."""
    return item.cloud is not None and major and item.type in STREAMED_TYPES \
        and item.mode in STREAMED_MODES


__all__ = ["streams"]
