"""What a :class:`~mlpipe.runtime.worker.WorkerRuntime` changes in the process that hosts it,
saved before it starts and given back after it stops.

A local worker is a process of its own that ends with the step; a Dask worker (and an
in-process runner) outlives it, and the next step, or the next user of that process,
must find it as it was: standard streams, working folder, environment, ``sys.path``,
``sys.argv``, ``sys.meta_path`` (an import hook the step installed, with the modules it
loaded), and no module imported from the step's code (the next step may have a
``score.py`` or ``helpers.py`` of its own). Modules imported from elsewhere (numpy,
the user's installed packages) stay imported, as a Dask user expects of a worker.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass
class ProcessState:
    """A snapshot of the process-wide state a worker changes (see the module docstring)."""

    fds: tuple[int, int]  # duplicates of file descriptors 1 and 2
    cwd: str
    environ: dict[str, str]
    path: list[str]
    argv: list[str]
    meta_path: list[Any]
    modules: frozenset[str]

    @classmethod
    def save(cls) -> ProcessState:
        return cls((os.dup(1), os.dup(2)), os.getcwd(), dict(os.environ), list(sys.path),
                   list(sys.argv), list(sys.meta_path), frozenset(sys.modules))

    def restore(self, code_dirs: Sequence[str]) -> None:
        """Give the process back as saved, forgetting the modules imported from ``code_dirs``
        since. Call once: the saved descriptors are closed."""
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                stream.flush()
        for fd, saved in zip((1, 2), self.fds, strict=True):
            os.dup2(saved, fd)
            os.close(saved)
        with contextlib.suppress(OSError):
            os.chdir(self.cwd)
        os.environ.clear()
        os.environ.update(self.environ)
        sys.path[:] = self.path
        sys.argv[:] = self.argv
        hooks = [finder for finder in sys.meta_path if finder not in self.meta_path]
        sys.meta_path[:] = self.meta_path
        roots = tuple(os.path.join(os.path.abspath(d), "") for d in code_dirs if d)
        for name in [n for n in sys.modules if n not in self.modules]:
            module = sys.modules.get(name)
            origin = getattr(module, "__file__", None) or ""
            loader = getattr(getattr(module, "__spec__", None), "loader", None)
            if (roots and origin and os.path.abspath(origin).startswith(roots)) or \
                    any(loader is hook for hook in hooks):
                sys.modules.pop(name, None)


__all__ = ["ProcessState"]
