"""The worker side: load the entry script, call init(), run() per mini-batch, shutdown().

:class:`WorkerRuntime` holds no process or transport logic, so every backend
(the local process pool, Dask) runs the same code: build it from a picklable
:class:`WorkerConfig` in the worker process, call :meth:`WorkerRuntime.start`,
then :meth:`WorkerRuntime.run_task` per task and :meth:`WorkerRuntime.stop`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import mlpipe.runtime.entry_script as entry_script_module
from mlpipe.data import item_count
from mlpipe.data.minibatch import MiniBatch
from mlpipe.errors import MlpipeError
from mlpipe.frozen import FrozenDict, freeze
from mlpipe.import_mirrors import Mode, set_mode
from mlpipe.import_mirrors import install_from_environment as install_import_mirrors
from mlpipe.import_mirrors import mode as import_mirrors_mode
from mlpipe.runs import STAND_INS_ENV
from mlpipe.runtime.phases import RESULT, RUN, PhaseWriter
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.results import (
    FEWER_RESULTS_MESSAGE,
    MORE_RESULTS_WARNING,
    ReturnValueError,
    RowFormat,
    count_results,
    format_rows,
)
from mlpipe.runtime.source_paths import to_user_paths, user_traceback
from mlpipe.runtime.step_logs import StepLogs
from mlpipe.runtime.tasks import Task, TaskResult
from mlpipe.runtime.tuning.schedstat import thread_delay

SHIM_DIR = str(Path(__file__).resolve().parent / "shim")
DEFAULT_LOADER = "mlpipe.data:load_mini_batch"


@dataclass(frozen=True)
class WorkerConfig:
    """Everything a worker needs, picklable, with absolute paths.

    ``loader`` names the function (``"module:function"``) that turns a mini-batch
    descriptor into run()'s argument; ``row_format`` is ``None`` for a
    summary-only step. ``capture_output`` redirects the worker's stdout/stderr
    (file descriptors 1 and 2) to its files under ``logs/user/``. With
    ``profiling_module`` each worker profiles its run() calls into
    ``logs/sys/profile/<node>/<process>.prof`` (see :class:`RunProfiler`).
    """

    code_dir: str  # the snapshot
    entry_script: str  # relative to code_dir
    logs_dir: str
    output_dir: str  # AZUREML_BI_OUTPUT_PATH
    working_root: str  # per-process working folders are made below it
    program_arguments: tuple[str, ...] = ()
    environment_variables: FrozenDict[str, str] = field(default_factory=freeze)
    logging_level: str = "INFO"
    row_format: RowFormat | None = None
    loader: str = DEFAULT_LOADER
    capture_output: bool = True
    profiling_module: str | None = None  # "cProfile" or "profile": profile run() calls
    source_dir: str | None = None  # the folder code_dir is a snapshot of: tracebacks name it
    import_mirrors: Mode = "auto"  # the driver's mlpipe.import_mirrors mode, for every backend
    stand_ins: str | None = None  # the folder of the job's mlpipe.toml (URL stand-ins)
    # the step's output folders and data inputs (name, path): what a worker on another
    # machine writes into a folder of its own and sends back, and what it must see
    output_folders: tuple[str, ...] = ()
    inputs: tuple[tuple[str, str], ...] = ()
    # what the worker process sees read-only (ro_mount inputs) or as its own copy (download):
    # a runtime.read_only.ReadOnly, applied by the worker process before init() runs
    read_only: Any = None
    # where a streamed cloud input's blobs are read (a Dask worker on another machine: its
    # scratch folder; None: the input's own folder in the run folder)
    blobs_dir: str | None = None

    @property
    def entry_script_path(self) -> str:
        return str(Path(self.code_dir) / self.entry_script)


def worker_log_file(logs_dir: str, kind: str, worker: WorkerInfo) -> Path:
    """``logs/user/<kind>/<node>/<process>.<suffix>``, the layout Azure uses."""
    return StepLogs.of(logs_dir).worker_log(kind, worker)


class MiniBatchContext:
    """The second argument of ``run(mini_batch, mini_batch_context)``.

    ``dataset`` is v1's filtered dataset of the mini-batch: always ``None`` here (the
    mini-batch itself holds the data; v1 entry scripts that print it keep working).
    """

    __slots__ = ("partition_key_value", "minibatch_index", "mini_batch_id", "dataset")

    def __init__(self, partition_key_value: dict[str, Any], minibatch_index: int,
                 mini_batch_id: str):
        self.partition_key_value = partition_key_value
        self.minibatch_index = minibatch_index
        self.mini_batch_id = mini_batch_id
        self.dataset: Any = None

    def __repr__(self) -> str:
        return (f"MiniBatchContext(partition_key_value={self.partition_key_value!r}, "
                f"minibatch_index={self.minibatch_index})")


class InitError(MlpipeError):
    """The worker could not start; ``traceback`` says why and ``stage`` where it stopped:
    ``"start"`` (the process could not be prepared: its folders, its streams, the code),
    ``"load"`` (the entry script could not be imported or has no run()) or ``"init"``
    (init() ran and raised). Only the last is worded "init() failed"."""

    def __init__(self, message: str, traceback_text: str, stage: str = "init"):
        super().__init__(message)
        self.traceback = traceback_text
        self.stage = stage


def profile_file(logs_dir: str, worker: WorkerInfo) -> Path:
    """``logs/sys/profile/<node>/<process>.prof``: the worker's run() profile (pstats format)."""
    return StepLogs.of(logs_dir).profile_file(worker)


class RunProfiler:
    """Profiles run() calls only (``--profiling_module``) and dumps pstats files.

    ``cProfile`` keeps one profiler enabled around each run() call; the pure-Python
    ``profile`` cannot be re-entered, so it gets a fresh profiler per call whose
    numbers are added up. The dump is rewritten at most every ``DUMP_SECONDS`` and
    at shutdown(), so a worker killed later leaves its profile so far; a
    replacement worker adds its numbers to the dump of the process it replaces
    (same file name).
    """

    DUMP_SECONDS = 5.0

    def __init__(self, module_name: str, path: Path):
        self.module = importlib.import_module(module_name)  # "cProfile" or "profile"
        self.reusable = module_name == "cProfile"
        self.profiler = self.module.Profile() if self.reusable else None
        self.collected: Any = None  # pstats.Stats of the finished calls (``profile``)
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._earlier: Any = None  # a dead predecessor's numbers: kept, ours are added
        if path.is_file():
            import pstats  # noqa: PLC0415

            try:
                self._earlier = pstats.Stats(str(path))
            except Exception:  # noqa: BLE001 - a torn or foreign file: start afresh
                self._earlier = None
        self._next_dump = time.monotonic() + self.DUMP_SECONDS

    def call(self, function: Callable[..., Any], *args: Any) -> Any:
        if self.profiler is not None:
            value = self.profiler.runcall(function, *args)
        else:
            profiler = self.module.Profile()
            try:
                value = profiler.runcall(function, *args)
            finally:
                self._collect(profiler)
        if time.monotonic() >= self._next_dump:
            self.dump()
        return value

    def _collect(self, profiler: Any) -> None:
        import pstats  # noqa: PLC0415

        try:
            if self.collected is None:
                self.collected = pstats.Stats(profiler)
            else:
                self.collected.add(profiler)
        except TypeError:  # nothing was recorded
            pass

    def dump(self) -> None:
        """Write the profile so far (plus a predecessor's) to :attr:`path`, atomically."""
        import pstats  # noqa: PLC0415 - only workers that profile pay for it

        self._next_dump = time.monotonic() + self.DUMP_SECONDS
        stats = pstats.Stats()
        for part in (self.profiler if self.profiler is not None else self.collected,
                     self._earlier):
            if part is not None:
                with contextlib.suppress(TypeError):  # nothing profiled yet
                    stats.add(part)
        if not stats.stats:  # type: ignore[attr-defined]
            return
        temporary = Path(str(self.path) + ".tmp")
        try:
            stats.dump_stats(str(temporary))
            os.replace(temporary, self.path)
        except BaseException:
            temporary.unlink(missing_ok=True)  # a full disk keeps no torn profile
            raise


class WorkerRuntime:
    """One worker's entry script: :meth:`start`, :meth:`run_task` per task, :meth:`stop`.

    A backend may set :attr:`phases` (a :class:`~mlpipe.runtime.phases.PhaseWriter`)
    before tasks run, so the driver can tell time in run() from the overhead around it.
    """

    def __init__(self, config: WorkerConfig, worker: WorkerInfo):
        self.config = config
        self.worker = worker
        self.module: ModuleType | None = None
        self.phases: PhaseWriter | None = None
        self.profiler: RunProfiler | None = None
        self._run: Callable[..., Any] | None = None
        self._pass_context = False
        self._load: Callable[[Any], Any] | None = None

    # -- start -------------------------------------------------------------------------
    def start(self) -> None:
        """Prepare the process, import the entry script and call its init().

        Raises :class:`InitError` (with the full traceback) when the script cannot
        be loaded, has no run(), or init() raises anything, ``SystemExit`` from
        argparse included.
        """
        try:
            self._prepare()
        except Exception as error:  # noqa: BLE001 - a missing folder, a full disk, ...
            raise InitError(f"{PREPARE_FAILED}: {_describe(error)}",
                            traceback.format_exc(), "start") from None
        config = self.config
        try:
            self._load = _resolve(config.loader)
            self.module = _import_script(config.entry_script_path)
        except BaseException as error:  # noqa: BLE001 - SyntaxError, ImportError, SystemExit, ...
            raise InitError(f"{LOAD_FAILED} {config.entry_script}: {_describe(error)}",
                            self.user_traceback(error), "load") from None
        finally:
            _flush_std()
        run = getattr(self.module, "run", None)
        if not callable(run):
            raise InitError(f"{LOAD_FAILED} {config.entry_script}: it defines no "
                            "run(mini_batch) function", "", "load")
        try:
            self._run = run
            self._pass_context = _wants_context(run)
            if config.profiling_module:
                self.profiler = RunProfiler(config.profiling_module,
                                            profile_file(config.logs_dir, self.worker))
            init = getattr(self.module, "init", None)
            if callable(init):
                init()
        except BaseException as error:  # noqa: BLE001 - SystemExit from argparse included
            raise InitError(_describe(error), self.user_traceback(error)) from None
        finally:
            _flush_std()

    def _prepare(self) -> None:
        """Streams, environment, folders, ``sys.path``, import hooks, working folder and
        ``sys.argv`` as the entry script expects them."""
        config = self.config
        if config.capture_output:
            self._capture_output()
        os.environ.update(config.environment_variables)
        os.environ["AZUREML_BI_OUTPUT_PATH"] = config.output_dir
        working_dir = Path(config.working_root) / self.worker.node_name / self.worker.process
        working_dir.mkdir(parents=True, exist_ok=True)
        log_file = worker_log_file(config.logs_dir, "entry_script_log", self.worker)
        entry_script_module.configure(entry_script_module.EntryScriptContext(
            log_file=str(log_file), log_dir=str(log_file.parent), output_dir=config.output_dir,
            working_dir=str(working_dir), agent_name=self.worker.process,
            logging_level=config.logging_level,
        ))
        script_dir = str(Path(config.entry_script_path).parent)
        for path in (SHIM_DIR, config.code_dir, script_dir):  # script_dir ends up first
            if path not in sys.path:
                sys.path.insert(0, path)
        set_mode(config.import_mirrors)
        install_import_mirrors()  # azureml.core is mlpipe's mirror unless installed (or forced)
        if config.stand_ins:  # the entry script's downloads read the job's URL stand-ins
            os.environ[STAND_INS_ENV] = config.stand_ins
        if config.stand_ins or import_mirrors_mode() == "force":  # run-script: every URL
            # here, not at the top: the driver imports this module too, and the URL stand-ins
            # (urllib.request, the compiler's mlpipe.toml reader) cost a job's start 0.1-0.3 s
            from mlpipe.url_stand_ins import install_url_stand_ins  # noqa: PLC0415

            install_url_stand_ins()
        if config.blobs_dir is not None:
            from mlpipe.data.cloud.reader import read_into  # noqa: PLC0415

            read_into(config.blobs_dir)
        os.chdir(config.code_dir)
        sys.argv = [config.entry_script_path, *config.program_arguments]

    def _capture_output(self) -> None:
        for fd, kind in ((1, "stdout"), (2, "stderr")):
            path = worker_log_file(self.config.logs_dir, kind, self.worker)
            path.parent.mkdir(parents=True, exist_ok=True)
            _flush_std()
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.dup2(target, fd)
            os.close(target)
        for stream in (sys.stdout, sys.stderr):
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                reconfigure(line_buffering=True)

    # -- run ---------------------------------------------------------------------------
    def run_task(self, task: Task) -> TaskResult:
        """Load the mini-batch, call run() and count the results; never raises. The result
        says how long the attempt waited for a core (``run_delay_seconds``, Linux)."""
        before = thread_delay()
        result = self._attempt(task)
        after = thread_delay() if before is not None else None
        if before is None or after is None:
            return result
        return result._replace(run_delay_seconds=after - before)

    def _attempt(self, task: Task) -> TaskResult:
        start_wall = time.time()
        start = time.perf_counter()
        cpu = time.process_time()
        mini_batch = task.mini_batch
        total = mini_batch.items or 0
        run_seconds = 0.0
        try:
            assert self._load is not None and self._run is not None
            try:
                data = self._load(mini_batch)
            except Exception as error:  # noqa: BLE001
                return self._failed(task, item_count(mini_batch), start_wall, start, cpu, 0.0,
                                    "DataError", _describe(error), self.user_traceback(error))
            if mini_batch.items is None:
                total = len(data)
            args = self._arguments(mini_batch, data)
            phases = self.phases
            run_start = time.perf_counter()
            load_seconds = run_start - start
            if phases is not None:
                phases.note(task.task_id, RUN, load_seconds, 0.0)
                run_start = time.perf_counter()  # Run Method Seconds: run() alone
            try:
                value = self._run(*args) if self.profiler is None \
                    else self.profiler.call(self._run, *args)
            except BaseException as error:  # noqa: BLE001 - SystemExit in run() fails the mini-batch
                run_seconds = time.perf_counter() - run_start
                if phases is not None:
                    phases.note(task.task_id, RESULT, run_start - start, run_seconds)
                return self._failed(task, total, start_wall, start, cpu, run_seconds, "UserError",
                                    _describe(error), self.user_traceback(error), load_seconds)
            run_seconds = time.perf_counter() - run_start
            if phases is not None:
                phases.note(task.task_id, RESULT, run_start - start, run_seconds)
            try:
                returned = count_results(value)
            except ReturnValueError as error:
                return self._failed(task, total, start_wall, start, cpu, run_seconds, "ReturnValue",
                                    str(error), None, load_seconds)
            succeeded = min(returned, total)
            failed = total - succeeded
            warning = (MORE_RESULTS_WARNING.format(returned=returned, items=total)
                       if returned > total else None)
            rows = header = None
            if self.config.row_format is not None:
                try:
                    rows, header = format_rows(value, self.config.row_format)
                except Exception as error:  # noqa: BLE001
                    return self._failed(task, total, start_wall, start, cpu, run_seconds,
                                        "ReturnValue", f"append_row could not write the results: "
                                        f"{_describe(error)}",
                                        self._user_paths(traceback.format_exc()), load_seconds)
            message = category = None
            if failed:
                category = "ReturnValue"
                message = FEWER_RESULTS_MESSAGE.format(returned=returned, items=total,
                                                       failed=failed)
            return TaskResult(
                task.task_id, "Failed" if failed else "Succeeded", total, succeeded, failed,
                start_wall, time.perf_counter() - start, time.process_time() - cpu, run_seconds,
                category, message, None, rows, header, warning, load_seconds=load_seconds,
            )
        finally:
            _flush_std()

    def call(self, mini_batch: MiniBatch) -> Any:
        """Load ``mini_batch`` and return what run() returns, as :meth:`run_task` calls it,
        but letting whatever the user's code raises propagate (``mlpipe job debug``)."""
        assert self._load is not None and self._run is not None, "start() first"
        data = self._load(mini_batch)
        return self._run(*self._arguments(mini_batch, data))

    def _arguments(self, mini_batch: MiniBatch, data: Any) -> tuple[Any, ...]:
        if not self._pass_context:
            return (data,)
        return (data, MiniBatchContext(dict(mini_batch.partition_key_value or {}),
                                       mini_batch.index, mini_batch.id))

    def _failed(self, task: Task, total: int, start_wall: float, start: float, cpu: float,
                run_seconds: float, category: str, message: str,
                traceback_text: str | None, load_seconds: float | None = None) -> TaskResult:
        elapsed = time.perf_counter() - start
        return TaskResult(
            task.task_id, "Failed", total, 0, total, start_wall, elapsed,
            time.process_time() - cpu, run_seconds, category, message, traceback_text,
            load_seconds=elapsed if load_seconds is None else load_seconds,
        )

    def user_traceback(self, error: BaseException) -> str:
        """The traceback of ``error`` from the user's first frame, at the user's files."""
        return self._user_paths(user_traceback(error))

    def _user_paths(self, text: str) -> str:
        return to_user_paths(text, self.config.code_dir, self.config.source_dir)

    # -- stop --------------------------------------------------------------------------
    def stop(self) -> str | None:
        """Call shutdown() when the script defines it; return its traceback if it raised."""
        shutdown = getattr(self.module, "shutdown", None) if self.module is not None else None
        try:
            if callable(shutdown):
                shutdown()
            return None
        except BaseException:  # noqa: BLE001
            return self._user_paths(traceback.format_exc())
        finally:
            _flush_std()
            if self.profiler is not None:
                with contextlib.suppress(OSError):
                    self.profiler.dump()
            if self.phases is not None:
                self.phases.close()


LOAD_FAILED = "cannot load the entry script"
PREPARE_FAILED = "the worker could not be prepared"


def _resolve(reference: str) -> Callable[[Any], Any]:
    module_name, _, attribute = reference.partition(":")
    found: Callable[[Any], Any] = getattr(importlib.import_module(module_name), attribute)
    return found


def _import_script(path: str) -> ModuleType:
    name = Path(path).stem
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the entry script {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _wants_context(run: Callable[..., Any]) -> bool:
    """run(mini_batch, mini_batch_context) when run() takes two positional arguments."""
    try:
        parameters = list(inspect.signature(run).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in parameters)
    return len(positional) >= 2 or (len(positional) == 1 and varargs)


def _describe(error: BaseException) -> str:
    if isinstance(error, SystemExit):
        return f"SystemExit: {error.code}"
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass


__all__ = [
    "DEFAULT_LOADER",
    "SHIM_DIR",
    "InitError",
    "MiniBatchContext",
    "RunProfiler",
    "WorkerConfig",
    "WorkerRuntime",
    "profile_file",
    "worker_log_file",
]
