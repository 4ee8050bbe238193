"""Input data to mini-batches (file lists, MLTable tables, partitions)."""

from mlpipe.data.minibatch import MiniBatch

__all__ = ["MiniBatch"]
