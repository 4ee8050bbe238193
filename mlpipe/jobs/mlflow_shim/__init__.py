"""Folder put on a sweep trial's PYTHONPATH when mlflow is not installed: its ``mlflow``
package is mlpipe's stand-in (:mod:`mlpipe.jobs.sweep.metrics`)."""
