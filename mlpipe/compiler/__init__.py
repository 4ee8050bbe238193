"""mlpipe.compiler."""
