"""Folder put on a command step's PYTHONPATH (a sweep trial's too) when mlflow is not
installed: its ``mlflow`` package is mlpipe's stand-in (:mod:`mlpipe.jobs.step_metrics`)."""
