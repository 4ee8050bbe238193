"""The worker side of the Dask backend: the task functions that run inside Dask workers.

:class:`~mlpipe.runtime.backends.dask.DaskBackend` submits :func:`start_worker`,
:func:`run_tasks`, :func:`stop_worker` and :func:`drain_worker` as Dask tasks pinned to
one Dask worker, and calls :func:`probe_workers` and :func:`halt_worker` through
``client.run`` (on the worker's event loop, answered while a task runs); they are
pickled by reference, so each Dask worker process imports this module (and
:mod:`mlpipe.runtime.worker`), never the driver side. The
:class:`~mlpipe.runtime.worker.WorkerRuntime` lives in this module's ``_HOSTED``
between tasks; one Dask worker process hosts at most one mlpipe worker.

A worker **sees the run folder** (a shared file system: the preflight found the
driver's token there) or **does not** (another machine): then its code comes from its
own cache (:mod:`.dask_code`), and its logs, outputs and working files go to a scratch
folder of its own (:func:`relocated`), from where an :class:`~.dask_transfer.Outbox`
sends what is new back with each bundle's results, at shutdown() and when drained
(the driver writes it: :class:`~.dask_transfer.Inbox`).

One ``run_tasks`` task runs a *bundle* of mini-batches one after the other, each
exactly as a single task would (its own TaskResult, phase records, failures); the
marker file (:class:`SlotFiles`) says which of them is running and since when, for
the driver's timeouts and for a worker that dies mid-bundle.

A Dask worker outlives the step: :func:`stop_worker` ends the processes run() left
running (:func:`~mlpipe.runtime.process_tree.end_tagged`, named in the driver log) and
gives the process back as it found it (standard streams, working folder, environment,
``sys.path``, ``sys.argv``, Dask's log streams and the modules imported from the
step's code), so a worker of a cluster mlpipe did not start is never restarted to be
cleaned. A start that fails, at any point and for any reason, gives it back the same way.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import re
import shutil
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from mlpipe.data.cloud.reader import read_into
from mlpipe.frozen import freeze
from mlpipe.runtime.backends.dask_code import cached_code, unpack_code
from mlpipe.runtime.backends.dask_isolated import IsolatedRuntime
from mlpipe.runtime.backends.dask_transfer import Outbox, Shipment
from mlpipe.runtime.phases import RECORD, PhaseWriter
from mlpipe.runtime.process_state import ProcessState
from mlpipe.runtime.process_tree import (
    TAG_ENV,
    OrphanReaper,
    become_subreaper,
    descendants,
    end_descendants,
    end_tagged,
    is_subreaper,
    step_tag,
    stop_being_subreaper,
)
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.tasks import Task, TaskResult
from mlpipe.runtime.worker import InitError, WorkerConfig, WorkerRuntime

_MARKER = "{:020d} {} {:014.4f} {:014.4f}\n"
SHIP_SECONDS = 0.2  # a bundle ships what its worker wrote at most this often (and at the end)
WORK_FOLDER = "mlpipe-work"


@dataclass(frozen=True)
class SlotFiles:
    """The files one mlpipe worker (one generation of it) shares with the driver.

    ``marker``: the mini-batch it runs (``task id``, ``R``unning or ``D``one, and the
    seconds from the start of its bundle to that mini-batch's start and end);
    ``phase``: the :mod:`~mlpipe.runtime.phases` record; ``halt``: created by the driver
    when the bundle running must end after its current mini-batch (the step stops, the
    worker is given back, or the driver gave up on a run() it may not kill), so what is
    left of it is returned as if it had been queued; ``results``: the stem of each
    bundle's results file (:func:`bundle_results`), where each mini-batch's result is
    written as it ends, so a bundle whose worker dies keeps what it finished.
    Each generation has its own, so a process left to finish a run() never writes
    over its successor's. They live in the step's own state folder when the worker sees
    it, else in the worker's scratch folder (read through :func:`probe_workers`).
    """

    marker: str
    phase: str
    halt: str
    results: str


def slot_files(config: WorkerConfig, worker: WorkerInfo, tag: str) -> SlotFiles:
    """The files of ``worker`` in generation ``tag``: ``<state>/dask/<node>-<process>-<tag>.*``."""
    stem = Path(config.working_root).parent / "dask" / f"{worker.node_name}-{worker.process}-{tag}"
    return SlotFiles(f"{stem}.task", f"{stem}.phase", f"{stem}.halt", f"{stem}-bundle")


class Marker(NamedTuple):
    """A marker file's record: ``task_id`` runs (``state`` "R") or ran ("D"); ``start`` and
    ``end`` are seconds from the start of its bundle (``end`` is 0 while it runs)."""

    task_id: int
    state: str
    start: float
    end: float


def parse_marker(text: str | None) -> Marker | None:
    """A marker file's text as a :class:`Marker`, if it holds one."""
    try:
        task_id, state, start, end = (text or "").split()
        return Marker(int(task_id), state, float(start), float(end))
    except ValueError:
        return None


def read_task_marker(path: str | Path) -> Marker | None:
    """The marker file's record, if there is a readable one."""
    try:
        return parse_marker(Path(path).read_text(encoding="ascii"))
    except (OSError, UnicodeDecodeError):
        return None


def bundle_results(files: SlotFiles, first_task_id: int) -> str:
    """The results file of the bundle that starts with ``first_task_id``."""
    return f"{files.results}-{first_task_id:09d}.results"


def read_bundle_results(path: str) -> list[TaskResult]:
    """The results a bundle wrote before it ended or its worker died (a torn last one is
    left out); ``[]`` when the file cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return []
    found, offset = [], 0
    while offset + 4 <= len(data):
        size = int.from_bytes(data[offset:offset + 4], "little")
        if offset + 4 + size > len(data):
            break
        with contextlib.suppress(Exception):
            found.append(pickle.loads(data[offset + 4:offset + 4 + size]))
        offset += 4 + size
    return [result for result in found if isinstance(result, TaskResult)]


def _note(fd: int, task_id: int, state: str, start: float, end: float) -> None:
    os.pwrite(fd, _MARKER.format(task_id, state, start, end).encode(), 0)


# -- another machine's view of the step's folders -------------------------------------------
def relocated(config: WorkerConfig, scratch: str, code_dir: str) -> WorkerConfig:
    """``config`` for a worker that does not see the run folder: the code from its cache,
    logs, outputs and working folders in ``scratch``; the output folders named in the
    program arguments and environment variables are those in ``scratch``."""
    mapping = {folder: str(Path(scratch, "outputs", str(index)))
               for index, folder in enumerate(transfer_folders(config))}
    for folder in mapping.values():
        Path(folder).mkdir(parents=True, exist_ok=True)
    pattern = re.compile("|".join(re.escape(folder) + r"(?=$|/|[^\w.\-])"
                                  for folder in sorted(mapping, key=len, reverse=True))) \
        if mapping else None

    def moved(text: str) -> str:
        return pattern.sub(lambda match: mapping[match.group(0)], text) if pattern else text

    return replace(config, code_dir=code_dir, logs_dir=str(Path(scratch, "logs")),
                   output_dir=moved(config.output_dir),
                   output_folders=tuple(mapping[folder] for folder in config.output_folders),
                   working_root=str(Path(scratch, "state", "working")),
                   # a streamed cloud input's blobs: on this machine's disk, not at the run
                   # folder's path (in the step's own process too, :mod:`.dask_isolated`)
                   blobs_dir=str(Path(scratch, "inputs")),
                   program_arguments=tuple(moved(a) for a in config.program_arguments),
                   environment_variables=freeze({k: moved(v) for k, v
                                                 in config.environment_variables.items()}))


def transfer_folders(config: WorkerConfig) -> tuple[str, ...]:
    """The step's folders a worker on another machine writes on its own disk, besides the
    logs: its outputs (``AZUREML_BI_OUTPUT_PATH``'s among them)."""
    return tuple(dict.fromkeys((*config.output_folders, config.output_dir)))


def transfer_roots(config: WorkerConfig) -> dict[str, str]:
    """The folders that travel, by root name: ``logs`` and ``out0``, ``out1``... (the
    driver's paths for its config, a worker's scratch paths for a :func:`relocated` one)."""
    return {"logs": config.logs_dir,
            **{f"out{index}": folder for index, folder in enumerate(transfer_folders(config))}}


# -- the hosted mlpipe worker -----------------------------------------------------------------
@dataclass
class _Hosted:
    """An mlpipe worker kept in a Dask worker process between tasks."""

    runtime: WorkerRuntime | IsolatedRuntime
    lock: threading.Lock
    state: ProcessState
    files: SlotFiles
    marker: int  # file descriptor of its marker file
    run_id: str
    tag: str  # MLPIPE_PROCESS_TAG of what its run() starts
    code_dirs: tuple[str, ...]
    log_streams: list[tuple[logging.StreamHandler[Any], Any]]
    reaping: tuple[bool, frozenset[int]]  # subreaper before, descendants before
    outbox: Outbox | None = None  # a worker that does not see the run folder
    scratch: str | None = None
    blobs_before: str | None = None  # where the process read streamed blobs before
    busy_since: float | None = None
    shipped_at: float = field(default_factory=time.monotonic)
    reaper: OrphanReaper = field(default_factory=OrphanReaper)


_HOSTED: dict[str, _Hosted] = {}
_DRAINING: dict[str, tuple[Outbox, str]] = {}  # stopped workers whose files are still leaving


def hosted_workers() -> list[tuple[str, str, float | None]]:
    """``(key, run id, seconds in run() or None)`` of the mlpipe workers this process hosts."""
    now = time.monotonic()
    return [(key, hosted.run_id, None if hosted.busy_since is None else now - hosted.busy_since)
            for key, hosted in list(_HOSTED.items())]


def start_worker(key: str, config: WorkerConfig, worker: WorkerInfo, files: SlotFiles | None,
                 run_id: str = "", digest: str | None = None, archive: bytes | None = None,
                 evict: Sequence[str] = ()) -> tuple[Any, ...]:
    """Build the WorkerRuntime and run init(): ``("ready", pid, shipment)``,
    ``("init_failed", message, traceback, stage, shipment, processes ended)`` (whatever
    stopped it, the process is given back as it was), ``("busy", key)`` when this process
    already hosts an mlpipe worker, or ``("no_code", digest)``.

    ``files`` is ``None`` for a worker that does not see the run folder: it then runs the
    code snapshot ``digest`` from its cache, or unpacked from ``archive`` (else
    ``no_code``), in a scratch folder of its own. ``evict``: mlpipe workers of runs whose
    driver is gone, stopped here first when idle."""
    for stale in evict:
        _evict(stale)
    for other in _HOSTED:
        return ("busy", other)
    scratch = None
    blobs_before = None
    if files is None:
        assert digest is not None
        local = _local_directory()
        cache = code_cache_directory(local)
        code_dir = cached_code(cache, digest)
        if code_dir is None and archive is None:
            return ("no_code", digest)
        try:
            if code_dir is None:
                assert archive is not None
                code_dir = unpack_code(cache, digest, archive)
            root = Path(local, WORK_FOLDER)
            root.mkdir(parents=True, exist_ok=True)
            scratch = tempfile.mkdtemp(prefix=f"{_safe(key)}-", dir=root)
            config = relocated(config, scratch, code_dir)
            blobs_before = read_into(config.blobs_dir)  # given back with the process
        except Exception as error:  # noqa: BLE001 - a full disk, a damaged archive
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
            message = (f"the step's code could not be placed on this Dask worker: "
                       f"{type(error).__name__}: {error}")
            return ("init_failed", message, traceback.format_exc(), "start", None)
        files = slot_files(config, worker, "x")
    assert files is not None
    state = ProcessState.save()
    streams = _keep_dask_logs_on(state.fds[1])
    runtime: WorkerRuntime | IsolatedRuntime = (  # read-only inputs: a process of its own
        IsolatedRuntime(config, worker, files.phase, scratch) if config.read_only
        else WorkerRuntime(config, worker))
    code_dirs = (config.code_dir, str(Path(config.entry_script_path).parent))
    tag = f"{step_tag(config.working_root)}#{worker.node_name}/{worker.process}"
    outbox = Outbox(transfer_roots(config)) if scratch is not None else None
    marker = -1
    reaping = (is_subreaper(), frozenset(descendants()))
    try:
        os.environ[TAG_ENV] = tag  # what run() starts carries it: ended at stop_worker
        become_subreaper()  # what it orphans (a double fork) stays below this process
        runtime.start()
        if isinstance(runtime, WorkerRuntime):
            runtime.phases = PhaseWriter(Path(files.phase), memory_map=False)
        Path(files.marker).parent.mkdir(parents=True, exist_ok=True)
        marker = os.open(files.marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except BaseException as error:  # noqa: BLE001 - the process is given back whatever happened
        if runtime.phases is not None:
            runtime.phases.close()
        ended = _end_leftovers(tag, reaping)
        _give_back(state, code_dirs, streams)
        if scratch is not None:
            read_into(blobs_before)
        shipment = outbox.collect() if outbox is not None else None
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        if isinstance(error, InitError):
            return ("init_failed", str(error), error.traceback, error.stage, shipment, ended)
        message = f"the worker could not be prepared: {type(error).__name__}: {error}"
        return ("init_failed", message, traceback.format_exc(), "start", shipment, ended)
    _HOSTED[key] = _Hosted(runtime, threading.Lock(), state, files, marker, run_id, tag,
                           code_dirs, streams, reaping, outbox, scratch, blobs_before)
    return ("ready", os.getpid(), outbox.collect() if outbox is not None else None)


def run_tasks(key: str, tasks: Sequence[Task], after: Any = None,
              ) -> tuple[list[TaskResult], Shipment | None] | None:
    """Run a bundle of mini-batches, in order, on the mlpipe worker ``key`` of this process.

    One TaskResult per mini-batch, fewer when the driver halted the bundle (its halt file,
    looked at before each mini-batch), with what the worker wrote since the last
    shipment when it does not see the run folder; ``None`` when the worker is not here.
    ``after`` is the bundle's predecessor on a Dask worker with several threads (a
    dependency that keeps the bundles in order).
    """
    hosted = _HOSTED.get(key)
    if hosted is None:
        return None
    results: list[TaskResult] = []
    with hosted.lock:  # a Dask worker with several threads still runs one mini-batch at a time
        began = time.perf_counter()
        hosted.busy_since = time.monotonic()
        kept = os.open(bundle_results(hosted.files, tasks[0].task_id),
                       os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if tasks else -1
        try:
            for task in tasks:
                if os.path.exists(hosted.files.halt):
                    break
                start = time.perf_counter() - began
                _note(hosted.marker, task.task_id, "R", start, 0.0)
                result = hosted.runtime.run_task(task)
                data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
                os.write(kept, len(data).to_bytes(4, "little") + data)
                _note(hosted.marker, task.task_id, "D", start, time.perf_counter() - began)
                results.append(result)
                hosted.reaper.maybe_reap()
        finally:
            hosted.busy_since = None
            if kept >= 0:
                os.close(kept)
        shipment = None
        if hosted.outbox is not None and time.monotonic() - hosted.shipped_at >= SHIP_SECONDS:
            hosted.shipped_at = time.monotonic()
            shipment = hosted.outbox.collect()
    return results, shipment


def stop_worker(key: str, after: Any = None) -> tuple[Any, ...] | None:
    """Call shutdown(), end what run() left running and give the process back as it was
    before: ``(shutdown()'s traceback or None, the processes ended, shipment, more)``
    (``more``: files are still to be sent, :func:`drain_worker`); ``after``: as for
    :func:`run_tasks`."""
    hosted = _HOSTED.get(key)
    if hosted is None:
        return None
    with hosted.lock:
        try:
            error = hosted.runtime.stop()
        finally:
            ended = _release(key, hosted)
    shipment, more = _ship_rest(key, hosted.outbox, hosted.scratch)
    return error, ended, shipment, more


def drain_worker(key: str) -> tuple[Shipment | None, bool]:
    """The next files of a stopped mlpipe worker that had more to send than one shipment:
    ``(shipment, more)``."""
    outbox, scratch = _DRAINING.pop(key, (None, None))
    return _ship_rest(key, outbox, scratch)


def _ship_rest(key: str, outbox: Outbox | None, scratch: str | None,
               ) -> tuple[Shipment | None, bool]:
    if outbox is None or scratch is None:
        return None, False
    shipment = outbox.collect()
    if shipment is not None and shipment.more:
        _DRAINING[key] = (outbox, scratch)
        return shipment, True
    shutil.rmtree(scratch, ignore_errors=True)
    return shipment, False


def _release(key: str, hosted: _Hosted) -> list[str]:
    """End the processes ``hosted``'s run() left, give the process back, forget it."""
    ended = _end_leftovers(hosted.tag, hosted.reaping)
    if hosted.runtime.phases is not None:
        hosted.runtime.phases.close()
    _give_back(hosted.state, hosted.code_dirs, hosted.log_streams)
    if hosted.scratch is not None:
        read_into(hosted.blobs_before)
    with contextlib.suppress(OSError):
        os.close(hosted.marker)
    _HOSTED.pop(key, None)
    return ended


def _end_leftovers(tag: str, reaping: tuple[bool, frozenset[int]]) -> list[str]:
    """End what the hosted worker's code left running (its tag, or re-parented below this
    process since it started) and stop being a subreaper unless this process was one."""
    was_subreaper, before = reaping
    try:
        ended = end_tagged(tag) + end_descendants(spare=before)
    except Exception:  # noqa: BLE001 - psutil refused: the process is still given back
        ended = []
    if not was_subreaper:
        stop_being_subreaper()
    return list(dict.fromkeys(e.describe() for e in ended))


def _evict(key: str) -> None:
    """Stop the idle mlpipe worker ``key`` of a run whose driver is gone (no shutdown():
    its step is over), and give the process back."""
    hosted = _HOSTED.get(key)
    if hosted is None or not hosted.lock.acquire(blocking=False):
        return
    try:
        _release(key, hosted)
    finally:
        hosted.lock.release()
    if hosted.scratch is not None:
        shutil.rmtree(hosted.scratch, ignore_errors=True)


def probe_workers(keys: Sequence[str]) -> dict[str, tuple[str | None, bytes | None]]:
    """For ``client.run``: the marker text and phase record of each hosted ``key`` here
    (a worker that does not see the run folder keeps them on its own disk)."""
    found: dict[str, tuple[str | None, bytes | None]] = {}
    for key in keys:
        hosted = _HOSTED.get(key)
        if hosted is None:
            continue
        found[key] = (_read(hosted.files.marker, text=True), _read(hosted.files.phase))
    return found


def halt_worker(key: str) -> bool:
    """For ``client.run``: end ``key``'s running bundle after its current mini-batch."""
    hosted = _HOSTED.get(key)
    if hosted is None:
        return False
    with contextlib.suppress(OSError):
        Path(hosted.files.halt).touch()
    return True


def _read(path: str, text: bool = False) -> Any:
    try:
        data = Path(path).read_bytes()[:max(RECORD.size, 128)]
    except OSError:
        return None
    return data.decode("ascii", "replace") if text else data


def _local_directory() -> str:
    """The Dask worker's own folder (``--local-directory``), else the temporary folder."""
    try:
        from distributed import get_worker  # noqa: PLC0415

        return str(get_worker().local_directory)
    except (ImportError, ValueError, AttributeError):
        return tempfile.gettempdir()


def code_cache_directory(local_directory: str) -> str:
    """Where a Dask worker keeps code snapshots: beside its own folder when that is one of
    Dask's ``worker-*`` folders (shared by the workers of one ``--local-directory``, kept
    when a worker restarts), else in it."""
    folder = Path(local_directory)
    return str(folder.parent if folder.name.startswith("worker-") else folder)


def _safe(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", key)[:80]


def _give_back(state: ProcessState, code_dirs: Sequence[str],
               streams: list[tuple[logging.StreamHandler[Any], Any]]) -> None:
    state.restore(code_dirs)
    for handler, stream in streams:
        with contextlib.suppress(Exception):
            previous = handler.setStream(stream)
            if previous is not None and previous is not stream:
                previous.close()


def _keep_dask_logs_on(fd: int) -> list[tuple[logging.StreamHandler[Any], Any]]:
    """Point the stream handlers of Dask's own logs at ``fd`` (the worker's real stderr);
    the handlers and their streams before, to give back.

    The WorkerRuntime redirects file descriptors 1 and 2 to the user's log files;
    Dask's messages belong in the Dask worker's log, not in the user's stderr.
    """
    changed: list[tuple[logging.StreamHandler[Any], Any]] = []
    stream = None
    for name in ("", "distributed", "dask"):
        for handler in logging.getLogger(name).handlers:
            if isinstance(handler, logging.StreamHandler) and not isinstance(
                    handler, logging.FileHandler) and handler.stream in (
                    sys.stderr, sys.stdout, sys.__stderr__, sys.__stdout__):
                if stream is None:
                    stream = os.fdopen(os.dup(fd), "w", buffering=1, encoding="utf-8",
                                       errors="replace")
                changed.append((handler, handler.setStream(stream)))
    return changed


__all__ = ["Marker", "SlotFiles", "bundle_results", "code_cache_directory", "drain_worker",
           "halt_worker", "hosted_workers", "parse_marker", "probe_workers",
           "read_bundle_results", "read_task_marker", "relocated",
           "run_tasks", "slot_files", "start_worker", "stop_worker", "transfer_folders",
           "transfer_roots"]
