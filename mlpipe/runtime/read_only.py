"""Read-only inputs for real: a step's processes cannot change its ``ro_mount`` inputs.

File permissions do not stop root, so the operating system is asked instead: the process
that runs a step's code (a local worker, a command step's shell) first enters a private
mount namespace of its own and bind-mounts each read-only input over itself, read-only;
the step's own folder and its outputs are bound again, writable, where they lie inside one.
Every process it starts inherits that view; the rest of the machine never sees it. A write,
a move or a delete of an input's file then fails as it does in Azure ML, whose ``ro_mount``
is a read-only mount: ``OSError: [Errno 30] Read-only file system`` (EROFS; renaming the
mounted folder or file itself is ``EBUSY``), and the user's bytes are untouched.

- as root (CAP_SYS_ADMIN): ``unshare(CLONE_NEWNS)``;
- otherwise: ``unshare(CLONE_NEWUSER | CLONE_NEWNS)``, the user mapped to itself (files it
  writes keep their owner);
- where neither is allowed (a container without those rights, user namespaces turned off,
  not Linux), :func:`support` says why, once, and the job says it loudly: those inputs are
  then not protected.

A process applies a :class:`ReadOnly` to itself with :func:`apply` (a Python worker, while it
is still single-threaded) or is started through :func:`launch_command`
(``python -m mlpipe.runtime.read_only SPEC -- program args...``: apply, then exec), which also
ties it to its parent (:func:`mlpipe.runtime.process_tree.die_with_parent`). Any backend's
worker can do the same (the Dask worker: its task process, before it runs user code).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field

from mlpipe.plan import Step, streams

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_RDONLY = 1
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
READ_ONLY_MODES = (None, "ro_mount", "eval_mount", "direct")
COPIED_MODES = ("download", "eval_download")  # the step gets a copy of its own
COPIES_FOLDER = "inputs"  # <step>/.mlpipe/inputs/<name>/: the copies


class ReadOnlyError(OSError):
    """The read-only view could not be made (the process must not run user code then)."""


@dataclass(frozen=True)
class ReadOnly:
    """What a step's processes see: ``paths`` read-only, ``writable`` (the step's folder, its
    outputs) writable again where they lie inside one, and each ``(copy, original)`` of
    ``copies`` (a ``download`` input) in the original's place, writable: the step changes
    its copy, never the user's files. Nothing to do when ``paths`` and ``copies`` are empty."""

    paths: tuple[str, ...] = ()
    writable: tuple[str, ...] = field(default=())
    copies: tuple[tuple[str, str], ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.paths or self.copies)

    def to_text(self) -> str:
        return json.dumps({"paths": list(self.paths), "writable": list(self.writable),
                           "copies": [list(pair) for pair in self.copies]})

    @classmethod
    def from_text(cls, text: str) -> ReadOnly:
        data = json.loads(text)
        return cls(tuple(data.get("paths") or ()), tuple(data.get("writable") or ()),
                   tuple((str(a), str(b)) for a, b in data.get("copies") or ()))


def apply(spec: ReadOnly) -> None:
    """Enter a private mount namespace where ``spec.paths`` are read-only; raises
    :class:`ReadOnlyError` saying why it could not (call it single-threaded)."""
    if not spec:
        return
    libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    if uid == 0:
        _call(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    else:
        _call(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare(CLONE_NEWUSER | CLONE_NEWNS)")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _call(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "making / private")
    real = [os.path.realpath(path) for path in spec.paths if os.path.lexists(path)]
    for path in real:
        _bind(libc, path, read_only=True)
    for path in spec.writable:
        path = os.path.realpath(path)
        if os.path.exists(path) and any(_within(path, ro) for ro in real):
            _bind(libc, path, read_only=False)
    for copy, original in spec.copies:
        _bind(libc, os.path.realpath(original), read_only=False, source=copy)


def step_view(step: Step) -> ReadOnly:
    """What ``step``'s processes see (:class:`ReadOnly`): its data inputs read in place
    (``ro_mount``, the default) read-only, each ``download`` input a copy in the step's
    state folder (:func:`make_copies` makes them); empty where this machine cannot make such
    a view (:func:`support`; the job says so)."""
    paths: list[str] = []
    copies: list[tuple[str, str]] = []
    major = getattr(step, "input_data", None)
    for data in step.inputs.values():
        if not data.is_data or data.path is None or not os.path.lexists(data.path):
            continue
        if streams(data, major=data.name == major):
            continue  # a cloud input read a mini-batch at a time: read-only by construction
        if data.mode in READ_ONLY_MODES:
            paths.append(data.path)
        elif data.mode in COPIED_MODES:
            copies.append((os.path.join(step.state_dir, COPIES_FOLDER, data.name,
                                        os.path.basename(data.path)), data.path))
    if (not paths and not copies) or support() is not None:
        return ReadOnly()
    writable = [step.step_dir, *(output.folder for output in step.outputs.values()),
                tempfile.gettempdir()]
    return ReadOnly(tuple(dict.fromkeys(paths)), tuple(writable), tuple(copies))


def make_copies(view: ReadOnly) -> None:
    """Copy each ``download`` input of ``view`` afresh (a link's target is copied; a link
    loop once)."""
    for copy, original in view.copies:
        folder = os.path.dirname(copy)
        if os.path.lexists(folder):
            shutil.rmtree(folder)
        os.makedirs(folder)
        if os.path.isdir(original):
            _copy_tree(original, copy, set())
        else:
            shutil.copy2(original, copy)


def _copy_tree(source: str, target: str, seen: set[tuple[int, int]]) -> None:
    found = os.stat(source)
    if (found.st_dev, found.st_ino) in seen:
        return
    seen.add((found.st_dev, found.st_ino))
    os.makedirs(target, exist_ok=True)
    for entry in os.scandir(source):
        destination = os.path.join(target, entry.name)
        try:
            if entry.is_dir():
                _copy_tree(entry.path, destination, seen)
            elif entry.is_file():
                shutil.copy2(entry.path, destination)
        except FileNotFoundError:  # a dangling link
            continue


_SUPPORT: list[str | None] = []


def support() -> str | None:
    """``None`` when this machine can make read-only views, else why not (asked once per
    process, in a child process of its own)."""
    if not _SUPPORT:
        _SUPPORT.append(_probe())
    return _SUPPORT[0]


def _probe() -> str | None:
    """Make a read-only view of an empty folder in a child process and try to write there
    (a child of its own: a fork of a threaded driver would disturb its native threads)."""
    if not sys.platform.startswith("linux"):
        return f"read-only mounts need Linux (this is {sys.platform})"
    import subprocess  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="mlpipe-ro-") as folder:
        probe = os.path.join(folder, "x")
        try:
            proc = subprocess.run(
                launch_command(ReadOnly((folder,)), ["sh", "-c", f"echo x > '{probe}'"]),
                capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError) as error:
            return f"the check could not run: {error}"
        if proc.returncode != 0 and "Read-only file system" in proc.stderr:
            return None
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        return (lines[-1].removeprefix("mlpipe: ") if lines
                else "a write to a read-only view was not refused")


def launch_command(spec: ReadOnly, argv: list[str]) -> list[str]:
    """``argv`` started through this module: it dies with its parent, what it starts stays
    below it (a subreaper), and it sees ``spec``
    (this interpreter, isolated: the step's ``PYTHONPATH`` and its code folder's modules,
    a ``copy.py``, are the step's program's, not this module's)."""
    from mlpipe.runtime.process_tree import package_root  # noqa: PLC0415

    code = (f"import sys; sys.path.insert(0, {package_root()!r}); "
            f"from {__name__} import main; main(sys.argv[1:])")
    return [sys.executable, "-I", "-c", code, spec.to_text(), str(os.getpid()), "--", *argv]


def main(args: list[str]) -> None:
    """``SPEC PARENT_PID -- program args...`` (:func:`launch_command`): tie this process to
    its parent, make the view, become the subreaper of what the program starts (kept across
    ``exec``: a double-forked daemon stays below it), then become the program."""
    from mlpipe.runtime.process_tree import become_subreaper, die_with_parent  # noqa: PLC0415

    spec_text, parent, _dash, *argv = args
    die_with_parent(int(parent))
    try:
        apply(ReadOnly.from_text(spec_text))
    except ReadOnlyError as error:
        print(f"mlpipe: the step's read-only inputs could not be made read-only: {error}",
              file=sys.stderr, flush=True)
        os._exit(126)
    become_subreaper()
    os.execvp(argv[0], argv)


def _bind(libc: ctypes.CDLL, path: str, *, read_only: bool, source: str | None = None) -> None:
    target = os.fsencode(path)
    _call(libc.mount(os.fsencode(source or path), target, None, MS_BIND | MS_REC, None),
          f"binding {source or path} on {path}" if source else f"binding {path}")
    flags = MS_REMOUNT | MS_BIND | (MS_RDONLY if read_only else 0)
    _call(libc.mount(b"none", target, None, flags, None),
          f"making {path} {'read-only' if read_only else 'writable'}")


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _libc() -> ctypes.CDLL:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError as error:
        raise ReadOnlyError(f"no C library to ask: {error}") from None


def _call(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise ReadOnlyError(number, f"{what}: {os.strerror(number)}")


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="ascii") as out:
            out.write(text)
    except OSError as error:
        raise ReadOnlyError(error.errno, f"writing {path}: {error.strerror}") from None



__all__ = ["COPIED_MODES", "READ_ONLY_MODES", "ReadOnly", "ReadOnlyError", "apply",
           "launch_command", "main", "make_copies", "step_view", "support"]
