"""mlpipe: validate and run Azure ML v2 pipelines with parallel steps locally."""

from __future__ import annotations

__version__ = "0.1.0.dev0"

__all__ = ["__version__"]
