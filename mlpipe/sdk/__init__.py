"""mlpipe.sdk."""
