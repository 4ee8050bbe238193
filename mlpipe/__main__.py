"""``python -m mlpipe`` runs the command line."""

from mlpipe.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
