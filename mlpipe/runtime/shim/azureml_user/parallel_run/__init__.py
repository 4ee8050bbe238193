"""``from azureml_user.parallel_run import EntryScript`` inside mlpipe workers."""

from mlpipe.runtime.entry_script import EntryScript

__all__ = ["EntryScript"]
