"""Folder put on the workers' ``sys.path`` so entry scripts can import ``azureml_user``."""
