"""Every process a step starts ends with the step.

A local worker runs in its own session and process group and is a *child subreaper*
(Linux ``prctl(PR_SET_CHILD_SUBREAPER)``): a process that run() starts and orphans (a
double fork, a ``setsid`` daemon) is re-parented to the worker, not to init, so while
the worker lives its process tree holds everything it started. The worker reaps those
adopted orphans when they exit (:class:`OrphanReaper`), never a child its own code
started and may still wait for.

Each worker also carries its step's *tag* in its environment (:data:`TAG_ENV`, one per
step of a job), inherited by everything it starts, so a descendant that outlived its
worker is still found. Killing a worker freezes (``SIGSTOP``) and kills its whole tree
(:func:`end_tree`); when the step ends, and before it starts again, every process of this
user carrying the step's tag is ended (:func:`end_tagged`) and the driver log names each.
A daemon that both clears its environment and outlives its worker is not found.
A driver killed with ``kill -9`` cleans nothing up itself, so: every process it starts
directly dies with it (:func:`die_with_parent`: Linux's parent-death signal), and a small
watchdog of the job (:class:`Watchdog`, in a session of its own) ends, when the driver is
gone, every process tagged below the job's folder (:func:`end_tagged_under`): a command's
``sleep``, a double-forked ``setsid`` daemon. ``job cancel`` of a job whose driver is dead
ends them too. Other backends' workers call the same functions.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import signal
import subprocess
import sys
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # psutil loads on first use: a worker imports this module at start
    import psutil

TAG_ENV = "MLPIPE_PROCESS_TAG"
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
REAP_INTERVAL_SECONDS = 1.0
KILL_WAIT_SECONDS = 3.0
_COMMAND_SHOWN = 200


@dataclass(frozen=True)
class Ended:
    """A process that was still running and was ended: its pid and command line."""

    pid: int
    command: str

    def describe(self) -> str:
        return f"process {self.pid} ({self.command})"


def step_tag(working_root: str) -> str:
    """The tag of the step whose working folder is ``working_root`` (unique per job step)."""
    return os.path.realpath(working_root)


def tagged_environment(tag: str) -> dict[str, str]:
    """This process's environment with ``tag`` set: what a worker is started with."""
    return {**os.environ, TAG_ENV: tag}


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux); ``False`` elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


PR_GET_CHILD_SUBREAPER = 37


def is_subreaper() -> bool:
    """True when this process is a child subreaper (Linux; ``False`` elsewhere)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        flag = ctypes.c_int(0)
        return int(libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)) == 0 \
            and bool(flag.value)
    except (OSError, AttributeError):
        return False


def stop_being_subreaper() -> None:
    """Undo :func:`become_subreaper` (a process that hosts a worker for a while, then is
    given back: a Dask worker)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def descendants() -> set[int]:
    """The pids of this process's descendants now."""
    import psutil  # noqa: PLC0415

    try:
        return {child.pid for child in psutil.Process().children(recursive=True)}
    except psutil.Error:
        return set()


def end_descendants(*, spare: Collection[int] = ()) -> list[Ended]:
    """Freeze and kill this process's descendants but ``spare`` (those it had before it
    hosted a worker): what a subreaper's worker left running, re-parented to it."""
    import psutil  # noqa: PLC0415

    procs = []
    for pid in descendants() - set(spare):
        with contextlib.suppress(psutil.Error):
            procs.append(psutil.Process(pid))
    if not procs:
        return []
    ended = _kill(_freeze(procs))
    deadline = time.monotonic() + KILL_WAIT_SECONDS
    for proc in procs:  # re-parented to this process: reap them
        while time.monotonic() < deadline:
            try:
                if os.waitpid(proc.pid, os.WNOHANG)[0]:
                    break
            except (ChildProcessError, OSError):
                break
            time.sleep(0.01)
    return ended


def die_with_parent(parent: int | None = None) -> bool:
    """Have the kernel SIGKILL this process when the thread that started it ends (Linux's
    ``PR_SET_PDEATHSIG``; kept across ``exec``); if ``parent`` is already gone, exit now.
    ``False`` where the kernel has no such signal."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        done = int(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False
    if parent is not None and os.getppid() != parent:  # it died before the signal was set
        os._exit(1)
    return done


def end_tree(pid: int) -> list[Ended]:
    """Freeze and kill process ``pid`` and every descendant (its process group too); the
    descendants that were running (``pid`` itself is not listed)."""
    import psutil  # noqa: PLC0415

    try:
        root = psutil.Process(pid)
    except psutil.Error:
        return []
    frozen = _freeze([root])
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    return _kill([proc for proc in frozen if proc.pid != pid], also=[root])


def end_tagged(tag: str, *, spare: Collection[int] = ()) -> list[Ended]:
    """End every process of this user whose environment carries ``tag`` (and what they
    started), but this process and ``spare``; the processes ended."""
    me = os.getpid()
    tagged = [proc for proc in _own_processes() if proc.pid != me and proc.pid not in spare
              and _tag_of(proc) == tag]
    if not tagged:
        return []
    frozen = [proc for proc in _freeze(tagged) if proc.pid != me and proc.pid not in spare]
    return _kill(frozen)


def end_tagged_under(prefix: str, *, spare: Collection[int] = ()) -> list[Ended]:
    """End every process of this user whose tag lies below the folder ``prefix`` (every
    step of a job: tags are step folders), but this process and ``spare``."""
    root = os.path.join(os.path.realpath(prefix), "")
    me = os.getpid()
    tagged = [proc for proc in _own_processes() if proc.pid != me and proc.pid not in spare
              and (_tag_of(proc) or "").startswith(root)]
    if not tagged:
        return []
    return _kill([proc for proc in _freeze(tagged) if proc.pid != me and proc.pid not in spare])


def tagged_under(prefix: str) -> list[int]:
    """Pids of this user's processes tagged below ``prefix`` (still running)."""
    import psutil  # noqa: PLC0415

    root = os.path.join(os.path.realpath(prefix), "")
    found = []
    for proc in _own_processes():
        if (_tag_of(proc) or "").startswith(root):
            with contextlib.suppress(psutil.Error):
                if proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(proc.pid)
    return found


class Watchdog:
    """A process, in a session of its own, that ends the processes tagged below a job's
    folder once the driver that started it is gone (killed with ``kill -9`` too): it waits
    for the end of a pipe only the driver holds. :meth:`stop` lets it go when the job ended
    in order."""

    def __init__(self, prefix: str):
        read, self._write = os.pipe()  # the write end is close-on-exec: only the driver's
        try:
            code = (f"import sys; sys.path.insert(0, {package_root()!r}); "
                    f"from {__name__} import _watch; _watch()")
            self.process = subprocess.Popen(  # isolated: no module of the cwd shadows its own
                [sys.executable, "-I", "-c", code, prefix],
                stdin=read, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True)
        finally:
            os.close(read)

    def stop(self) -> None:
        """The job ended in order (its steps ended their processes): the watchdog exits."""
        if self._write >= 0:
            with contextlib.suppress(OSError):
                os.write(self._write, b"q")
            os.close(self._write)
            self._write = -1

    def __enter__(self) -> Watchdog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _watch() -> None:
    """The watchdog's body: wait for the driver's end of the pipe, then end what is tagged."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        while chunk := os.read(0, 4096):
            if b"q" in chunk:  # the driver ended the job itself
                return
    end_tagged_under(sys.argv[1])


def package_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class OrphanReaper:
    """Reaps the exited orphans a subreaper adopted (at most once a second): a zombie child
    is reaped only when no ``subprocess.Popen`` or ``multiprocessing`` child of this process
    has its pid, so user code that waits for its own children is never robbed."""

    def __init__(self) -> None:
        self._next = 0.0

    def maybe_reap(self) -> None:
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + REAP_INTERVAL_SECONDS
        try:
            if os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
                return  # no child has exited: nothing to look at
        except (ChildProcessError, AttributeError, OSError):
            return
        zombies = [child.pid for child in _children() if _is_zombie(child)]
        if not zombies:
            return
        waited_for = _children_python_waits_for()
        for pid in zombies:
            if pid not in waited_for:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)


def _freeze(roots: Iterable[psutil.Process]) -> list[psutil.Process]:
    """SIGSTOP ``roots`` and, until no new one appears, their descendants (a frozen process
    cannot fork again); every process frozen, roots first."""
    import psutil  # noqa: PLC0415

    seen: dict[int, psutil.Process] = {}
    frontier = list(roots)
    while frontier:
        for proc in frontier:
            seen[proc.pid] = proc
            with contextlib.suppress(psutil.Error):
                proc.send_signal(signal.SIGSTOP)
        frontier = []
        for proc in list(seen.values()):
            with contextlib.suppress(psutil.Error):
                frontier.extend(child for child in proc.children(recursive=True)
                                if child.pid not in seen and child.pid not in
                                {f.pid for f in frontier})
    return list(seen.values())


def _kill(procs: list[psutil.Process], also: Iterable[psutil.Process] = ()) -> list[Ended]:
    """SIGKILL ``procs`` (and ``also``, not reported); the ones that were alive."""
    import psutil  # noqa: PLC0415

    ended = []
    for proc in procs:
        command = _command(proc)
        try:
            proc.kill()
        except psutil.Error:
            continue
        ended.append(Ended(proc.pid, command))
    for proc in also:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    others = [proc for proc in [*procs, *also] if not _child_of_this_process(proc)]
    with contextlib.suppress(psutil.Error, ChildProcessError):  # our children: Popen reaps them
        psutil.wait_procs(others, timeout=KILL_WAIT_SECONDS)
    return ended


def _child_of_this_process(proc: psutil.Process) -> bool:
    import psutil  # noqa: PLC0415

    try:
        return bool(proc.ppid() == os.getpid())
    except psutil.Error:
        return False


def _own_processes() -> list[psutil.Process]:
    import psutil  # noqa: PLC0415

    uid = os.getuid() if hasattr(os, "getuid") else None
    found = []
    for proc in psutil.process_iter(["uids"]):
        uids = proc.info.get("uids")
        if uid is None or (uids is not None and uids.real == uid):
            found.append(proc)
    return found


def _tag_of(proc: psutil.Process) -> str | None:
    import psutil  # noqa: PLC0415

    try:
        tag: str | None = proc.environ().get(TAG_ENV)
        return tag
    except psutil.Error:
        return None


def _command(proc: psutil.Process) -> str:
    import psutil  # noqa: PLC0415

    try:
        text = " ".join(proc.cmdline()) or proc.name()
    except psutil.Error:
        text = "?"
    return text if len(text) <= _COMMAND_SHOWN else text[:_COMMAND_SHOWN] + "..."


def _children() -> list[psutil.Process]:
    import psutil  # noqa: PLC0415

    try:
        children: list[psutil.Process] = psutil.Process().children()
        return children
    except psutil.Error:
        return []


def _is_zombie(proc: psutil.Process) -> bool:
    import psutil  # noqa: PLC0415

    try:
        return bool(proc.status() == psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def _children_python_waits_for() -> set[int]:
    """Pids of this process's children that Python objects will wait for."""
    pids = {obj.pid for obj in gc.get_objects()
            if isinstance(obj, subprocess.Popen) and obj.returncode is None}
    if "multiprocessing" in sys.modules:
        import multiprocessing  # noqa: PLC0415 - only when user code uses it

        with contextlib.suppress(Exception):
            pids.update(child.pid for child in multiprocessing.active_children()
                        if child.pid is not None)
    return pids


__all__ = ["TAG_ENV", "Ended", "OrphanReaper", "Watchdog", "become_subreaper", "descendants",
           "die_with_parent", "end_descendants", "end_tagged", "end_tagged_under", "end_tree",
           "is_subreaper", "package_root", "step_tag", "stop_being_subreaper",
           "tagged_environment", "tagged_under"]
