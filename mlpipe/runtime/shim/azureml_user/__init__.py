"""Shim of Azure's ``azureml_user`` package, on ``sys.path`` inside mlpipe workers only."""
