"""Know each Dask worker before a step uses it: the preflight.

Before an mlpipe worker is placed on a Dask worker, the driver asks that worker (one
``client.run`` on the workers' event loops: answered at once, even by a worker busy
with a task) what a step needs to know of it, with :func:`inspect_worker`:

- its host, mlpipe version and Python version (both must be the driver's);
- whether it sees the run folder: the driver wrote a random token into the step's
  state folder, and the worker reads it at the same path (a path that merely exists is
  no proof: another machine may have the same, empty, folder);
- which of the top-level modules the step's code imports (and the driver can import)
  it cannot import;
- whether each input folder or file is there: a sample file of it, with its size;
- which mlpipe workers it hosts now, and whether one is still in a run() (an earlier
  job's, left to finish there).

:func:`differences` turns a report into what stops the step from using the worker,
each said with the host and what differs; :class:`PreflightRequest` is built on the
driver by :func:`preflight_request`.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import socket
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlpipe.version import __version__

MAX_SOURCE_FILES = 500  # the step's Python files read for their imports


@dataclass(frozen=True)
class InputProbe:
    """An input the worker must see: ``path``, and one of its files (``sample``, relative,
    "" for a file input) with its ``size``; ``folder`` when the input is a folder."""

    name: str
    path: str
    folder: bool
    sample: str = ""
    size: int = -1


@dataclass(frozen=True)
class PreflightRequest:
    """What the driver asks each worker (picklable, built once per step)."""

    mlpipe: str
    python: tuple[int, int]
    token_path: str
    token: str
    imports: tuple[str, ...] = ()
    inputs: tuple[InputProbe, ...] = ()


@dataclass(frozen=True)
class Hosted:
    """An mlpipe worker hosted by a Dask worker: its ``key`` and run id, and for how long
    its run() has been running (``None``: idle)."""

    key: str
    run_id: str
    busy_seconds: float | None


@dataclass(frozen=True)
class PreflightReport:
    """A worker's answer."""

    host: str
    mlpipe: str
    python: tuple[int, int]
    shared: bool
    missing: tuple[str, ...] = ()
    unreachable: tuple[str, ...] = ()
    hosted: tuple[Hosted, ...] = ()


def preflight_request(*, token_path: str, token: str, code_dir: str,
                      inputs: Iterable[tuple[str, str]]) -> PreflightRequest:
    """The request of a step whose snapshot is ``code_dir`` and whose data inputs are
    ``(name, path)`` pairs."""
    return PreflightRequest(__version__, sys.version_info[:2], token_path, token,
                            code_imports(code_dir), tuple(_probe(n, p) for n, p in inputs))


def code_imports(code_dir: str) -> tuple[str, ...]:
    """The top-level modules the Python files of ``code_dir`` import that are neither in the
    folder itself nor in the standard library, and that this interpreter can import."""
    root = Path(code_dir)
    names: set[str] = set()
    local = {path.stem for path in root.rglob("*.py")} | {
        path.name for path in root.rglob("*") if path.is_dir()}
    for path in sorted(root.rglob("*.py"))[:MAX_SOURCE_FILES]:
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    stdlib: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())
    return tuple(sorted(name for name in names - local - set(stdlib)
                        if name and _importable(name)))


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _probe(name: str, path: str) -> InputProbe:
    target = Path(path)
    if target.is_file():
        return InputProbe(name, path, False, "", target.stat().st_size)
    if target.is_dir():
        for folder, _dirs, files in os.walk(target):
            for file in sorted(files):
                sample = Path(folder, file)
                try:
                    if sample.is_file():
                        return InputProbe(name, path, True, str(sample.relative_to(target)),
                                          sample.stat().st_size)
                except OSError:
                    continue
            break  # the top folder is enough: an empty one is probed as a folder
    return InputProbe(name, path, target.is_dir())


def inspect_worker(request: PreflightRequest, dask_worker: Any = None) -> PreflightReport:
    """The worker's side (run by ``client.run`` on its event loop: quick, no import of the
    step's code, only ``find_spec`` of top-level names)."""
    from mlpipe.runtime.backends.dask_worker import hosted_workers  # noqa: PLC0415

    try:
        shared = Path(request.token_path).read_text(encoding="ascii").strip() == request.token
    except (OSError, UnicodeDecodeError):
        shared = False
    return PreflightReport(
        socket.gethostname(), __version__, sys.version_info[:2], shared,
        tuple(name for name in request.imports if not _importable(name)),
        tuple(problem for probe in request.inputs if (problem := _unreachable(probe))),
        tuple(Hosted(key, run_id, busy) for key, run_id, busy in hosted_workers()))


def _unreachable(probe: InputProbe) -> str | None:
    path = Path(probe.path)
    kind = "folder" if probe.folder else "file"
    try:
        if probe.folder and not path.is_dir() or not probe.folder and not path.is_file():
            return f"input {probe.name!r}: {kind} {probe.path} is not there"
        if not probe.sample and probe.folder:
            return None
        sample = path / probe.sample if probe.sample else path
        if not sample.is_file():
            return (f"input {probe.name!r}: {probe.path} is there but its file {probe.sample} "
                    "is not (an empty folder in its place?)")
        size = sample.stat().st_size
    except OSError as error:
        return f"input {probe.name!r}: {probe.path}: {error.strerror or error}"
    if size != probe.size:
        return (f"input {probe.name!r}: {sample} has {size} bytes there, {probe.size} on the "
                "driver (another copy of the data?)")
    return None


def differences(report: PreflightReport, request: PreflightRequest) -> list[str]:
    """What keeps the step from using the worker that sent ``report`` (empty: nothing)."""
    found = []
    if report.mlpipe != request.mlpipe:
        found.append(f"mlpipe {report.mlpipe} there, {request.mlpipe} on the driver")
    if tuple(report.python) != tuple(request.python):
        found.append(f"Python {'.'.join(map(str, report.python))} there, "
                     f"{'.'.join(map(str, request.python))} on the driver")
    if report.missing:
        found.append(f"cannot import {', '.join(report.missing)} (the step's code imports "
                     f"{'it' if len(report.missing) == 1 else 'them'}; the driver can)")
    found.extend(report.unreachable)
    return found


def busy_elsewhere(report: PreflightReport, run_id: str,
                   alive: Sequence[str] = ()) -> Hosted | None:
    """The mlpipe worker of another run that keeps this Dask worker busy (in a run()), if any;
    ``alive``: run ids known to be running (their workers are claimed anyway)."""
    for hosted in report.hosted:
        if hosted.run_id != run_id and hosted.run_id not in alive \
                and hosted.busy_seconds is not None:
            return hosted
    return None


__all__ = ["Hosted", "InputProbe", "PreflightReport", "PreflightRequest", "busy_elsewhere",
           "code_imports", "differences", "inspect_worker", "preflight_request"]
