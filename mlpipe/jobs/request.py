"""What a job needs to run: one frozen :class:`JobRequest`, built once by the command line
(``job create``, ``job rerun``: ``mlpipe.cli.jobs``) and once by the SDK (``mlpipe.run``,
``job.run()``, ``ml_client.jobs.create_or_update``: ``mlpipe.sdk.running``), and handed to
:func:`mlpipe.jobs.front_door.submit`.

The request holds the job's data and the decisions the caller took (its file or loaded
data, runs folder, name, ``--set`` overrides, backend with its own options, flags); what
the caller watches while the job runs (a cancel event, the console, the callbacks) is
handed to ``submit`` beside it (:class:`mlpipe.jobs.front_door.JobHooks`). A new way to
start a job is a field here, not a sixteenth keyword argument.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mlpipe.jobs.record import JobRecord
from mlpipe.runtime.backends import BackendChoice

if TYPE_CHECKING:  # the command line builds a request before it loads the models
    from mlpipe.schema import Loaded

class Mode(enum.Enum):
    """What to do when the job name is already in the runs folder."""

    AUTO = "auto"  # a new job; an unfinished job of that name is resumed


@dataclass(frozen=True)
class JobRequest:
    """One job to run.

    ``source`` is a job YAML's path or job data already loaded (the SDK's); ``name`` the
    job's (``None``: generated from the YAML); ``overrides`` are ``--set`` items;
    ``backend`` the backend and its own options (a :class:`BackendChoice`);
    ``allow_external_outputs`` lets declared output paths lie outside the runs folder;
    ``skip_steps`` are not run (their outputs given as local paths); ``rerun_of`` is the
    record a rerun resumes from (:func:`mlpipe.jobs.rerun.plan_rerun`); ``progress`` draws
    the progress bars; ``max_workers`` caps the worker processes of steps running at once.

    Its shape, for whoever adds to it::

        JobRequest(source, runs_dir=None, name=None, overrides=(),
                   backend=BackendChoice(name="local", options={}), mode=Mode.AUTO,
                   allow_external_outputs=False, skip_steps=(), rerun_of=None,
                   progress=False, max_workers=None)

    A backend's own option (Dask's ``--scheduler ADDRESS`` and ``--scheduler-file PATH``)
    is no field here: declare it as a ``BackendOption`` on the backend's ``BackendSpec``
    row in :data:`mlpipe.runtime.backends.BACKENDS` (with ``read_options`` making the
    backend's object of the values). ``mlpipe.cli.arguments.add_backend`` then adds the
    ``--flag`` to ``job create`` and ``job rerun``, ``mlpipe.run(...,
    backend_options={...})`` takes it in Python, both put it in ``backend.options``, and
    ``submit``'s pre-run checks bind it (``jobs/preflight.py``: ``BackendSpec.configured``,
    an unknown option refused with a "did you mean") and the runner hands the bound values
    to the backend's job scope.
    """

    source: str | os.PathLike[str] | Loaded[Any]  # the Loaded of mlpipe.schema
    runs_dir: str | os.PathLike[str] | None = None
    name: str | None = None
    overrides: tuple[str, ...] = ()
    backend: BackendChoice = BackendChoice()
    mode: Mode = Mode.AUTO
    allow_external_outputs: bool = False
    skip_steps: tuple[str, ...] = ()
    rerun_of: JobRecord | None = None
    progress: bool = False
    max_workers: int | None = None

    @property
    def shown(self) -> str:
        """The job's file as the caller named it (for messages)."""
        source = self.source
        if isinstance(source, (str, os.PathLike)):
            return os.fspath(source)
        return str(source.source)


__all__ = ["JobRequest", "Mode"]
