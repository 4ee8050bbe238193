"""mlpipe.schema."""
