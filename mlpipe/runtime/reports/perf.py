"""``logs/sys/perf/<node>/``: node and worker-process resource usage sampled with psutil.

A background thread takes a sample when the step starts, every
``resource_monitor_interval`` seconds, and one when it ends (each worker process
is also sampled as soon as it has started); an interval of 0
disables the monitor (no perf files at all), as in Azure. Every node of a local
run is the same machine, so each node folder gets the same machine-wide
``node_resource_usage.csv`` and its own workers in ``processes_resource_usage.csv``.
Disk and network counters are counted from the step's start.
"""

from __future__ import annotations

import csv
import threading
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import psutil

from mlpipe.runtime.faults import naming
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.textio import open_text

NODE_COLUMNS = (
    "Utc Time",
    "Cpu Percent",
    "Memory Total (MB)",
    "Memory Available (MB)",
    "Memory Used (MB)",
    "Memory Used Percent",
    "Disk Io Read Count",
    "Disk Io Write Count",
    "Disk Io Read (MB)",
    "Disk Io Write (MB)",
    "Network Sent (MB)",
    "Network Recv (MB)",
    "'#' of TCP Connections",
    "'#' of UDP Connections",
)
PROCESS_COLUMNS = (
    "Utc Time",
    "Process",
    "Pid",
    "Cpu Percent",
    "Memory Rss (MB)",
    "Memory Vms (MB)",
    "Memory Percent",
    "Threads",
    "Status",
)
MB = 1024 * 1024


def _mb(value: float) -> str:
    return f"{value / MB:.2f}"


def _connections(kind: str) -> int | str:
    """Open ``tcp``/``udp`` connections on the machine; "" when the OS refuses to tell."""
    try:
        return len(psutil.net_connections(kind=kind))
    except (psutil.AccessDenied, PermissionError, OSError):
        return ""


class ResourceMonitor:
    """Samples resource usage into the perf CSVs from a daemon thread."""

    def __init__(self, perf_dir: Path, interval: float, nodes: list[int]) -> None:
        self.perf_dir = perf_dir
        self.interval = interval
        self._nodes = sorted(set(nodes)) or [0]
        self._workers: dict[int, WorkerInfo] = {}  # pid -> worker; replaced, never mutated
        self._processes: dict[int, psutil.Process] = {}
        self._files: list[IO[str]] = []
        self._closing = ExitStack()  # owns the handles in _files
        self._node_writers: list[Any] = []
        self._process_writers: dict[int, Any] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.error: OSError | None = None  # why the sampling thread stopped early
        self._baseline_disk = psutil.disk_io_counters()
        self._baseline_net = psutil.net_io_counters()
        self.samples = 0

    @property
    def enabled(self) -> bool:
        return self.interval > 0

    def set_workers(self, workers: list[WorkerInfo]) -> None:
        """The worker processes to sample (called from the driver thread)."""
        self._workers = {w.pid: w for w in workers if w.pid is not None}

    def update_worker(self, worker: WorkerInfo, alive: bool) -> None:
        """A worker started (sampled at once, then with the others) or stopped/died."""
        workers = {pid: w for pid, w in self._workers.items()
                   if (w.node, w.process) != (worker.node, worker.process)}
        if alive and worker.pid is not None:
            workers[worker.pid] = worker
        self._workers = workers
        if alive and worker.pid is not None and self._thread is not None:
            self.sample_worker(worker)

    def sample_worker(self, worker: WorkerInfo) -> None:
        """Append one row for ``worker`` to its node's processes_resource_usage.csv."""
        with self._lock:
            now = datetime.now(timezone.utc).replace(tzinfo=None).isoformat(timespec="milliseconds")
            row = self._process_row(now, worker.pid, worker) if worker.pid is not None else None
            if row is not None and worker.node in self._process_writers:
                self._process_writers[worker.node].writerow(row)

    def start(self) -> None:
        """Open the CSVs and start the sampling thread (which takes the first sample at once)."""
        if not self.enabled or self._thread is not None:
            return
        psutil.cpu_percent(interval=None)  # prime: the first reading is meaningless
        for node in self._nodes:
            folder = self.perf_dir / str(node)
            folder.mkdir(parents=True, exist_ok=True)
            self._node_writers.append(self._open(folder / "node_resource_usage.csv", NODE_COLUMNS))
            self._process_writers[node] = self._open(
                folder / "processes_resource_usage.csv", PROCESS_COLUMNS)
        self._thread = threading.Thread(target=self._run, name="mlpipe-resource-monitor",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread, take the last sample and close the files (idempotent)."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        try:
            if self.error is None:
                self.sample()
        finally:
            with naming(self.perf_dir):
                self._closing.close()
            self._files.clear()

    def _open(self, path: Path, header: tuple[str, ...]) -> Any:
        # written by every sample until stop(), which closes it through _closing
        handle = self._closing.enter_context(
            open_text(path, "w", newline=""))
        self._files.append(handle)
        writer = csv.writer(handle)
        writer.writerow(header)
        return writer

    def _run(self) -> None:
        """Sample until stopped; a file that cannot be written ends the sampling and is kept
        in :attr:`error` for the reports to raise (a thread must not die with a traceback)."""
        try:
            self.sample()
            while not self._stop.wait(self.interval):
                self.sample()
        except OSError as error:
            self.error = error

    def sample(self) -> None:
        """Append one row to every perf CSV and flush them."""
        with self._lock, naming(self.perf_dir):
            now = datetime.now(timezone.utc).replace(tzinfo=None).isoformat(timespec="milliseconds")
            node_row = self._node_row(now)
            for writer in self._node_writers:
                writer.writerow(node_row)
            for pid, worker in sorted(self._workers.items(), key=lambda kv: kv[1].process):
                row = self._process_row(now, pid, worker)
                if row is not None and worker.node in self._process_writers:
                    self._process_writers[worker.node].writerow(row)
            for handle in self._files:
                handle.flush()
            self.samples += 1

    def _node_row(self, now: str) -> tuple[Any, ...]:
        memory = psutil.virtual_memory()
        disk = psutil.disk_io_counters()
        net = psutil.net_io_counters()
        disk_cols: tuple[Any, ...] = ("", "", "", "")
        if disk is not None:
            base = self._baseline_disk
            disk_cols = (
                disk.read_count - (base.read_count if base else 0),
                disk.write_count - (base.write_count if base else 0),
                _mb(disk.read_bytes - (base.read_bytes if base else 0)),
                _mb(disk.write_bytes - (base.write_bytes if base else 0)),
            )
        net_cols: tuple[Any, ...] = ("", "")
        if net is not None:
            base_net = self._baseline_net
            net_cols = (
                _mb(net.bytes_sent - (base_net.bytes_sent if base_net else 0)),
                _mb(net.bytes_recv - (base_net.bytes_recv if base_net else 0)),
            )
        return (
            now,
            f"{psutil.cpu_percent(interval=None):.1f}",
            _mb(memory.total),
            _mb(memory.available),
            _mb(memory.used),
            f"{memory.percent:.1f}",
            *disk_cols,
            *net_cols,
            _connections("tcp"),
            _connections("udp"),
        )

    def _process_row(self, now: str, pid: int, worker: WorkerInfo) -> tuple[Any, ...] | None:
        try:
            process = self._processes.get(pid)
            if process is None:
                process = self._processes[pid] = psutil.Process(pid)
                process.cpu_percent(interval=None)
            with process.oneshot():
                memory = process.memory_info()
                return (
                    now,
                    f"{worker.node}/{worker.process}",
                    pid,
                    f"{process.cpu_percent(interval=None):.1f}",
                    _mb(memory.rss),
                    _mb(memory.vms),
                    f"{process.memory_percent():.2f}",
                    process.num_threads(),
                    process.status(),
                )
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            self._processes.pop(pid, None)
            return None
