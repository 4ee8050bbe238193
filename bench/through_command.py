"""What the benchmarks share: a job run as users run it, ``mlpipe job create`` (or a script
calling ``mlpipe.run()``) in a child process, and that process measured from outside.

:func:`measure` starts a command and waits for it without reaping it first
(``waitid(WNOWAIT)``), so the finished process's own CPU time (user + system, its threads
included, its children not) can still be read from ``/proc/<pid>/stat``; its peak RSS is
the kernel's high-water mark (``VmHWM``), read every 20 ms while it runs (the mark only
grows: what is missed is growth in its last 20 ms). Its children's CPU (the workers, once
reaped by it) is reported apart.

:func:`write_job` writes a pipeline of one parallel step over a folder of files, as a user
would; :func:`attempts_window` reads the step's ``processed_mini-batches.csv`` afterwards
(in the benchmark's process, never in the measured one) for the first attempt's start and
the last one's end, the times a user sees as "start-up" and "teardown" around them.

Every child runs with Python's bytecode cached, as a user's does (:func:`user_environment`):
``pip install`` compiles each module it installs, while this shared machine sets
``PYTHONDONTWRITEBYTECODE``, which would make every measured process (and each of its worker
processes) compile mlpipe's 270 modules from source again: about 0.4 s of CPU per process
that no user pays.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parents[1]
# the user's command: the ``mlpipe`` script installed beside this Python (else ``python -m``)
_SCRIPT = Path(sys.executable).with_name("mlpipe")
MLPIPE = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "mlpipe"]
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Measured:
    """One finished child process, measured from outside."""

    returncode: int
    wall: float  # start to exit, seconds
    started: float  # epoch seconds, just before the process was started
    ended: float  # epoch seconds, when it was seen to exit
    peak_rss_mb: float  # the process's own VmHWM (its children not included)
    cpu: float  # its own user + system seconds (all its threads, not its children)
    children_cpu: float  # user + system seconds of the children it reaped (workers)
    stdout: str
    stderr: str


_COMPILED: set[Path] = set()


def user_environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) as a user's command runs in it: bytecode
    written and read (``PYTHONDONTWRITEBYTECODE`` dropped), in ``.mlpipe-bench/pycache`` of
    the checkout (``PYTHONPYCACHEPREFIX``: nothing written beside the sources), compiled
    once here for mlpipe itself (the installed libraries have theirs from pip)."""
    cache = REPO / ".mlpipe-bench" / "pycache"
    if cache not in _COMPILED:  # once per benchmark: an up-to-date module is skipped
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-X", f"pycache_prefix={cache}", "-m", "compileall",
                        "-q", str(REPO / "mlpipe")], check=True, stdout=subprocess.DEVNULL)
        _COMPILED.add(cache)
    out = {key: value for key, value in (os.environ if env is None else env).items()
           if key != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPYCACHEPREFIX"] = str(cache)
    return out


def measure(command: list[str], *, cwd: str | Path | None = None,
            env: dict[str, str] | None = None, terminal: bool = False) -> Measured:
    """Run ``command`` to its end and measure it (see the module docstring), in
    :func:`user_environment` of ``env``. With ``terminal`` its stdout and stderr are a
    pseudo-terminal (a user's terminal: the live progress bar is drawn), read and kept by a
    thread of this process."""
    env = user_environment(env)
    with open(os.devnull, "rb") as stdin, _spool() as out, _spool() as err:
        reader = None
        if terminal:
            import pty  # noqa: PLC0415

            master, slave = pty.openpty()
            reader = threading.Thread(target=_drain, args=(master, out), daemon=True)
            reader.start()
        started = time.time()
        began = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdin=stdin,
                                   stdout=slave if terminal else out,
                                   stderr=slave if terminal else err)
        if terminal:
            os.close(slave)
        peak = [0]
        done = threading.Event()
        sampler = threading.Thread(target=_sample_hwm, args=(process.pid, peak, done),
                                   daemon=True)
        sampler.start()
        os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
        wall = time.perf_counter() - began
        ended = time.time()
        done.set()
        sampler.join()
        cpu, children = _cpu_of_zombie(process.pid)
        returncode = process.wait()
        if reader is not None:
            reader.join()
        out.seek(0)
        err.seek(0)
        return Measured(returncode, wall, started, ended, peak[0] / 1024, cpu, children,
                        out.read().decode(errors="replace"), err.read().decode(errors="replace"))


def _spool() -> IO[bytes]:
    import tempfile  # noqa: PLC0415

    return tempfile.TemporaryFile()


def _drain(master: int, into: Any) -> None:
    """Keep what the child writes to its terminal (until it closes it)."""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child's side is closed
            break
        if not data:
            break
        into.write(data)
    os.close(master)


def _sample_hwm(pid: int, peak: list[int], done: threading.Event) -> None:
    path = f"/proc/{pid}/status"
    while not done.is_set():
        try:
            with open(path, "rb") as handle:
                for line in handle:
                    if line.startswith(b"VmHWM:"):
                        peak[0] = max(peak[0], int(line.split()[1]))
                        break
        except OSError:
            return
        done.wait(0.02)


def _cpu_of_zombie(pid: int) -> tuple[float, float]:
    """(own, reaped children's) user + system seconds of a process that exited but is not
    reaped yet."""
    with open(f"/proc/{pid}/stat", "rb") as handle:
        fields = handle.read().rsplit(b")", 1)[1].split()
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return (utime + stime) / TICKS, (cutime + cstime) / TICKS


def check(measured: Measured, what: str) -> Measured:
    """``measured``, or exit with what the failed command printed."""
    if measured.returncode:
        sys.exit(f"{what} failed (exit {measured.returncode}):\n"
                 f"{measured.stdout[-2000:]}\n{measured.stderr[-3000:]}")
    return measured


def job_create(pipeline: Path, runs: Path, *extra: str, env: dict[str, str] | None = None,
               terminal: bool = False) -> Measured:
    """``mlpipe job create --file PIPELINE --runs-dir RUNS --name bench EXTRA...``, measured
    (on a pseudo-terminal with ``terminal``: the progress bar a user sees)."""
    return check(measure([*MLPIPE, "job", "create", "--file", str(pipeline), "--runs-dir",
                          str(runs), "--name", "bench", *extra],
                         cwd=pipeline.parent, env=env, terminal=terminal), "mlpipe job create")


STEP = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
display_name: bench
settings:
  default_compute: azureml:cpu-cluster
inputs:
  data:
    type: uri_folder
    path: {input}
jobs:
  bench:
    type: parallel
    inputs:
      data: ${{{{parent.inputs.data}}}}
    outputs:
      out:
        type: uri_folder
    input_data: ${{{{inputs.data}}}}
    mini_batch_size: "{mini_batch_size}"
    resources:
      instance_count: 1
    max_concurrency_per_instance: {workers}
    environment_variables:
{environment}
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      environment:
        image: mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04
      append_row_to: ${{{{outputs.out}}}}
"""


def write_job(folder: Path, input_folder: Path, script: str, *, workers: int = 2,
              mini_batch_size: str = "1", environment: dict[str, str] | None = None) -> Path:
    """A pipeline of one parallel step over ``input_folder`` (one file per mini-batch by
    default, append_row on), its entry script ``script``; returns the YAML's path."""
    (folder / "src").mkdir(parents=True, exist_ok=True)
    (folder / "src" / "score.py").write_text(script)
    variables = {"BENCH": "1", **(environment or {})}
    pipeline = folder / "pipeline.yml"
    pipeline.write_text(STEP.format(
        input=input_folder, mini_batch_size=mini_batch_size, workers=workers,
        environment="\n".join(f"      {key}: \"{value}\"" for key, value in variables.items())))
    return pipeline


def make_files(folder: Path, count: int) -> Path:
    """``count`` empty files in ``folder`` (made once, reused)."""
    marker = folder / ".complete"
    if marker.is_file() and marker.read_text() == str(count):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        os.close(os.open(folder / f"f{index:07d}.dat", os.O_CREAT | os.O_WRONLY, 0o644))
    marker.write_text(str(count))
    return folder


@dataclass
class Window:
    """What the step's processed_mini-batches.csv says of its attempts."""

    count: int
    first_start: float  # epoch seconds
    last_end: float
    busy: float  # sum of Run Method Seconds
    marks: list[float]  # the end of every ``every``-th attempt, in end order

    @property
    def seconds(self) -> float:
        return self.last_end - self.first_start


def attempts_window(step_logs: Path, every: int = 0) -> Window:
    """Read ``<step logs>/sys/job_report/processed_mini-batches.csv``."""
    path = step_logs / "sys" / "job_report" / "processed_mini-batches.csv"
    first, last, busy, count = float("inf"), 0.0, 0.0, 0
    ends = []
    with open(path, newline="", encoding="utf-8") as handle:
        rows = csv.reader(handle)
        header = next(rows)
        at_start, at_elapsed = header.index("Process Start Time"), header.index("Elapsed Seconds")
        at_run = header.index("Run Method Seconds")
        for row in rows:
            start = datetime.fromisoformat(row[at_start]).replace(tzinfo=timezone.utc).timestamp()
            end = start + float(row[at_elapsed])
            first, last = min(first, start), max(last, end)
            busy += float(row[at_run])
            count += 1
            if every:
                ends.append(end)
    marks: list[float] = []
    if every:
        ends.sort()
        marks = ends[every - 1::every]
    return Window(count, first, last, busy, marks)


def step_logs(runs: Path, job: str = "bench", step: str = "bench") -> Path:
    return runs / job / step / "logs"


def load() -> str:
    """The machine's load averages, for every figure's context."""
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def rates_per_window(marks: list[float], first: float, every: int) -> list[float]:
    """Mini-batches per second in each window of ``every`` attempts."""
    edges = [first, *marks]
    return [every / (b - a) for a, b in zip(edges, edges[1:], strict=False) if b > a]
