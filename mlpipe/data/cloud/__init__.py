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

from mlpipe.plan import STREAMED_MODES, STREAMED_TYPES, streams

__all__ = ["STREAMED_MODES", "STREAMED_TYPES", "streams"]
