"""Helpers for the backend tests: a real Dask cluster of separate processes, and a small
in-process backend registered through the backends' table.

:class:`DaskProcesses` starts ``dask scheduler`` and ``dask worker`` processes (each in a
session of its own, so a test can kill one worker, and only what it started), and waits
for a *valid* scheduler file (a JSON document with the address), never for the file's
mere existence: the scheduler creates it before it writes it.

:class:`InlineBackend` runs every worker's entry script in the driver's own process, one
mini-batch per :meth:`~InlineBackend.events` call; with :data:`INLINE` (its one table row)
it is the whole of a new backend: ``register_backend(INLINE)`` makes ``--backend
inline`` and ``run_parallel_step(backend="inline")`` work, its job scope included.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mlpipe.plan import ExecutionPlan, ParallelStep
from mlpipe.runtime.backends import Backend, BackendSpec
from mlpipe.runtime.backends.base import (
    BackendEvent,
    TaskDone,
    TasksReturned,
    WorkerInitFailed,
    WorkerStarted,
    WorkerStopped,
)
from mlpipe.runtime.process_state import ProcessState
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.tasks import Task
from mlpipe.runtime.worker import InitError, WorkerConfig, WorkerRuntime

REPO = Path(__file__).resolve().parents[3]


# -- pipelines -------------------------------------------------------------------------
_STEP = """\
  {name}:
    type: parallel
    inputs:
      files: {{type: uri_folder, path: ./data}}
    outputs:
      rows: {{type: uri_file}}
    input_data: ${{{{inputs.files}}}}
    mini_batch_size: "{size}"
    max_concurrency_per_instance: 2
{extra}    task:
      type: run_function
      code: ./src
      entry_script: score.py
      append_row_to: ${{{{outputs.rows}}}}
"""


def pipeline_yaml(*names: str, mini_batch_size: int = 1, extra: str = "") -> str:
    """A pipeline of parallel steps ``names``, each over ``./data`` with ``./src/score.py``, two
    workers and its rows in ``outputs.rows``; ``extra``: more lines of each step's keys."""
    steps = "".join(_STEP.format(name=name, size=mini_batch_size, extra=extra) for name in names)
    return ("$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json\n"
            f"type: pipeline\njobs:\n{steps}")


# -- a Dask cluster of real processes ---------------------------------------------------
def wait_for_scheduler_file(path: Path, scheduler: subprocess.Popen[bytes],
                            timeout: float = 60.0) -> str:
    """The scheduler's address, once ``path`` holds a whole JSON document naming it."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            return str(json.loads(path.read_text(encoding="utf-8"))["address"])
        assert scheduler.poll() is None, f"the scheduler exited with {scheduler.returncode}"
        assert time.monotonic() < deadline, f"no scheduler address in {path} after {timeout} s"
        time.sleep(0.05)


@dataclass
class DaskProcesses:
    """A ``dask scheduler`` and its ``dask worker`` processes, started in ``folder``."""

    folder: Path
    address: str = ""
    scheduler: subprocess.Popen[bytes] | None = None
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    dashboard: bool = False

    def _popen(self, *args: str, hidden: Sequence[Path] = (), pythonpath: Sequence[Path] = (),
               read_only: bool = False) -> subprocess.Popen[bytes]:
        """``python -m ARGS``; with ``hidden`` folders, in a mount namespace of its own where
        each of them is an empty tmpfs (``read_only``: one nothing can be created in):
        "another machine", which has none of those files."""
        log = (self.folder / "cluster.log").open("a")
        command = [sys.executable, "-m", *args]
        if hidden:
            options = "-o ro " if read_only else ""
            mounts = " && ".join(f"mount -t tmpfs {options}none {shlex.quote(str(folder))}"
                                 for folder in hidden)
            command = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                       f"{mounts} && exec {shlex.join(command)}"]
        return subprocess.Popen(command, cwd=self.folder,
                                env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                    map(str, (REPO, *pythonpath)))},
                                start_new_session=True, stdout=subprocess.DEVNULL, stderr=log)

    def start_scheduler(self) -> str:
        scheduler_file = self.folder / "scheduler.json"
        dashboard = ["--dashboard-address", "127.0.0.1:0"] if self.dashboard \
            else ["--no-dashboard"]
        self.scheduler = self._popen("distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                     "--port", "0", *dashboard,
                                     "--scheduler-file", str(scheduler_file))
        self.address = wait_for_scheduler_file(scheduler_file, self.scheduler)
        return self.address

    def add_workers(self, count: int, *, nanny: bool, extra: Sequence[str] = (),
                    hidden: Sequence[Path] = (), pythonpath: Sequence[Path] = (),
                    read_only: bool = False) -> None:
        """Start ``count`` single-threaded workers (``--nworkers`` behind one Nanny process
        each when ``nanny``, else one ``--no-nanny`` process each) and wait for them.
        With ``hidden`` folders each ``--no-nanny`` worker is another machine: those folders
        are empty there (and read-only with ``read_only``: not even the driver's paths can
        be made there), and it has a local directory of its own."""
        before = len(self.worker_addresses())
        if nanny:
            self.workers.append(self._popen(
                "distributed.cli.dask_worker", self.address, "--nworkers", str(count),
                "--nthreads", "1", "--memory-limit", "2GB", "--no-dashboard",
                "--local-directory", str(self.folder), *extra, hidden=hidden,
                pythonpath=pythonpath))
        else:
            for _ in range(count):
                local = self.folder / f"host-{len(self.workers)}" if hidden else self.folder
                local.mkdir(exist_ok=True)
                self.workers.append(self._popen(
                    "distributed.cli.dask_worker", self.address, "--no-nanny", "--nthreads",
                    "1", "--memory-limit", "2GB", "--no-dashboard", "--local-directory",
                    str(local), *extra, hidden=hidden, pythonpath=pythonpath,
                    read_only=read_only))
        self.wait_for_workers(before + count)

    def worker_addresses(self) -> dict[str, int]:
        """The scheduler's workers: address -> pid."""
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as client:
            return dict(client.run(os.getpid))

    def wait_for_workers(self, count: int, timeout: float = 60.0) -> None:
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(count, timeout=timeout)

    def close(self) -> None:
        for process in [*self.workers, *([self.scheduler] if self.scheduler else [])]:
            with contextlib.suppress(ProcessLookupError):  # what this helper started, nothing else
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _hosted_here() -> int:
    from mlpipe.runtime.backends import dask_worker

    return len(dask_worker._HOSTED)


def wait_until_no_worker_hosts_mlpipe(address: str, timeout: float = 60.0) -> None:
    """Until no worker of the cluster at ``address`` hosts an mlpipe worker (a stop task left
    behind a run() has run)."""
    from distributed import Client

    deadline = time.monotonic() + timeout
    with Client(address, timeout=30, set_as_default=False) as client:
        while any(client.run(_hosted_here).values()):
            assert time.monotonic() < deadline, "a Dask worker still hosts an mlpipe worker"
            time.sleep(0.1)


@contextlib.contextmanager
def dask_processes(folder: Path, dashboard: bool = False) -> Iterator[DaskProcesses]:
    folder.mkdir(parents=True, exist_ok=True)
    cluster = DaskProcesses(folder, dashboard=dashboard)
    try:
        cluster.start_scheduler()
        yield cluster
    finally:
        cluster.close()


def wait_for(predicate: Callable[[], bool], what: str, job: subprocess.Popen[str],
             timeout: float = 120) -> None:
    """Until ``predicate()``, while ``job`` (an ``mlpipe job create``) still runs."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert job.poll() is None, f"the job ended before {what}: {job.communicate()[0]}"
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(0.05)


def finish(job: subprocess.Popen[str], timeout: float = 300) -> str:
    """``job``'s output once it ended (killed past ``timeout``)."""
    try:
        out, _ = job.communicate(timeout=timeout)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    return out


# -- a backend in one module and one row ----------------------------------------------
@dataclass
class InlineScope:
    """The inline backend's job scope: what the runner handed to each step."""

    job: str
    steps: list[str] = field(default_factory=list)
    open: bool = True


SCOPES: list[InlineScope] = []  # every scope the table's job_scope opened, in order


@contextlib.contextmanager
def inline_scope(plan: ExecutionPlan, say: Any, cores: int) -> Iterator[InlineScope]:
    """The job scope: opened once per job, closed when it ends; the process is given back
    then (its steps may run at once in this one process)."""
    scope = InlineScope(Path(plan.run_dir).name)
    SCOPES.append(scope)
    steps = [step for step in plan.steps if isinstance(step, ParallelStep)]
    say(f"inline backend: one scope for the job's {len(steps)} parallel steps")
    state = ProcessState.save()
    try:
        yield scope
    finally:
        scope.open = False
        state.restore([step.snapshot_dir for step in steps])


class InlineBackend(Backend):
    """Every worker's entry script in this process; a task runs inside :meth:`events`."""

    name = "inline"

    def __init__(self, scope: InlineScope | None = None) -> None:
        self.scope = scope
        self._config: WorkerConfig | None = None
        self._state: ProcessState | None = None
        self._runtimes: dict[tuple[int, str], tuple[WorkerInfo, WorkerRuntime]] = {}
        self._queue: deque[tuple[WorkerInfo, Task]] = deque()
        self._events: list[BackendEvent] = []
        self._stopping = False

    def start(self, workers: Sequence[WorkerInfo], config: WorkerConfig) -> None:
        if self.scope is not None:
            self.scope.steps.append(Path(config.logs_dir).parent.name)
        self._config = replace(config, capture_output=False)
        self._state = ProcessState.save() if self.scope is None else None  # else the scope's
        for info in workers:
            worker = replace(info, pid=os.getpid())
            runtime = WorkerRuntime(self._config, worker)
            try:
                runtime.start()
            except InitError as error:
                self._events.append(WorkerInitFailed(worker, str(error), error.traceback,
                                                     error.stage))
                continue
            self._runtimes[(worker.node, worker.process)] = (worker, runtime)
            self._events.append(WorkerStarted(worker))

    def free_slots(self) -> int:
        return 0 if self._stopping else max(0, len(self._runtimes) - len(self._queue))

    def submit(self, tasks: Sequence[Task]) -> None:
        workers = [worker for worker, _ in self._runtimes.values()]
        for index, task in enumerate(tasks):
            self._queue.append((workers[index % len(workers)], task))

    def events(self, timeout: float | None) -> list[BackendEvent]:
        out, self._events = self._events, []
        if self._queue:
            worker, task = self._queue.popleft()
            _, runtime = self._runtimes[(worker.node, worker.process)]
            out.append(TaskDone(worker, runtime.run_task(task)))
        elif self._stopping:
            for key, (worker, runtime) in list(self._runtimes.items()):
                out.append(WorkerStopped(worker, runtime.stop()))
                del self._runtimes[key]
        return out

    def running(self) -> list[tuple[int, WorkerInfo, float]]:
        return []  # a task runs within events(): none is running between two calls

    def kill(self, worker: WorkerInfo) -> None:
        raise AssertionError("the driver kills only workers with a running task")

    def stop(self) -> None:
        self._stopping = True
        returned: dict[WorkerInfo, list[int]] = {}
        for worker, task in self._queue:
            returned.setdefault(worker, []).append(task.task_id)
        self._queue.clear()
        self._events.extend(TasksReturned(worker, tuple(ids)) for worker, ids in returned.items())

    def active_workers(self) -> int:
        return len(self._runtimes)

    def close(self) -> None:
        for _, runtime in self._runtimes.values():
            runtime.stop()
        self._runtimes.clear()
        if self._state is not None and self._config is not None:
            self._state.restore((self._config.code_dir,
                                 str(Path(self._config.entry_script_path).parent)))
            self._state = None


INLINE = BackendSpec("inline", InlineBackend, job_scope=inline_scope,
                     summary="the entry script in the driver's own process (a test backend)")
