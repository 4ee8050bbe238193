"""A folder mlpipe puts first on ``PYTHONPATH`` of the command steps it starts: its
``sitecustomize`` installs the import hook of :mod:`mlpipe.import_mirrors` in every Python
started there (see :func:`mlpipe.import_mirrors.child_environment`)."""
