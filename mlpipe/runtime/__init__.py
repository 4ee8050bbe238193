"""mlpipe.runtime."""
