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
A process can clear its environment (``env -i``, ``execve`` with none): the driver also
notes, twice a second, every process below each worker and command shell by its pid and
start time (:func:`remember_tree`; they are subreapers, so a double-forked daemon stays
below them while they live), and ends those too, tag or not, once they outlived them.
A driver killed with ``kill -9`` cleans nothing up itself, so: every process it starts
directly dies with it (:func:`die_with_parent`: Linux's parent-death signal), and a small
watchdog of the job (:class:`Watchdog`, in a session of its own) ends, when the driver is
gone, every process tagged below the job's folder or noted as one of its steps' (the driver
tells it each, :func:`end_tagged_under`): a command's ``sleep``, a double-forked ``setsid``
daemon, one that cleared its environment. ``job cancel`` of a job whose driver is dead
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
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mlpipe.runs import JOB_PROCESSES_FILE

if TYPE_CHECKING:  # psutil loads on first use: a worker imports this module at start
    import psutil

TAG_ENV = "MLPIPE_PROCESS_TAG"
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
REAP_INTERVAL_SECONDS = 1.0
KILL_WAIT_SECONDS = 3.0
REMEMBER_INTERVAL_SECONDS = 0.5  # how often the driver notes the processes below its steps'
_REMEMBERED_PRUNED_AT = 1000  # noted processes of one step before the ended ones are dropped
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
    tagged = _with_remembered(tagged, lambda known: known == tag, {me, *spare})
    if not tagged:
        return []
    frozen = [proc for proc in _freeze(tagged) if proc.pid != me and proc.pid not in spare]
    return _kill(frozen)


def end_tagged_under(prefix: str, *, spare: Collection[int] = ()) -> list[Ended]:
    """End every process of this user whose tag lies below the folder ``prefix`` (every
    step of a job: tags are step folders), but this process and ``spare``."""
    root = os.path.join(os.path.realpath(prefix), "")
    me = os.getpid()
    _read_ledger(prefix)
    tagged = [proc for proc in _own_processes() if proc.pid != me and proc.pid not in spare
              and (_tag_of(proc) or "").startswith(root)]
    tagged = _with_remembered(tagged, lambda known: known.startswith(root), {me, *spare})
    if not tagged:
        return []
    return _kill([proc for proc in _freeze(tagged) if proc.pid != me and proc.pid not in spare])


def tagged_under(prefix: str) -> list[int]:
    """Pids of this user's processes tagged below ``prefix`` (still running)."""
    import psutil  # noqa: PLC0415

    root = os.path.join(os.path.realpath(prefix), "")
    _read_ledger(prefix)
    found = []
    procs = [proc for proc in _own_processes() if (_tag_of(proc) or "").startswith(root)]
    for proc in _with_remembered(procs, lambda known: known.startswith(root), ()):
        with contextlib.suppress(psutil.Error):
            if proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
    return found


# tag -> {pid: start time}: the processes noted below a step's workers and command shells
_remembered: dict[str, dict[int, int]] = {}
_watchdogs: list[Watchdog] = []  # the running jobs' watchdogs, told of each noted process


def remember_tree(tag: str, root: int) -> None:
    """Note every process now below ``root`` (a step's worker or command shell, a subreaper)
    as one the step ``tag`` started, and tell the jobs' watchdogs: one that cleared its
    environment (its tag gone) is still ended with the step (:func:`end_tagged`) and after
    a driver ``kill -9`` (:func:`end_tagged_under`). Reads ``/proc/<pid>/task/*/children``
    of ``root``'s tree only, no scan of every process."""
    known = _remembered.setdefault(tag, {})
    new = [(pid, start, tag) for pid, start in _tree(root).items() if known.get(pid) != start]
    if not new:
        return
    if len(known) >= _REMEMBERED_PRUNED_AT:  # keep those still running
        for pid, start in list(known.items()):
            if _start_time(pid) != start:
                del known[pid]
    known.update((pid, start) for pid, start, _tag in new)
    for watchdog in list(_watchdogs):
        watchdog.tell(new)


def _tree(root: int) -> dict[int, int]:
    """The processes below ``root`` and their start times (Linux; none elsewhere)."""
    found: dict[int, int] = {}
    frontier = [root]
    while frontier:
        for child in _children_of(frontier.pop()):
            start = _start_time(child)
            if start is not None and child not in found:
                found[child] = start
                frontier.append(child)
    return found


def _children_of(pid: int) -> list[int]:
    children: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return children
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as file:
                children.extend(int(text) for text in file.read().split())
        except (OSError, ValueError):
            continue
    return children


def _start_time(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (a reused pid's differs)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            text = file.read()
        return int(text[text.rindex(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _with_remembered(procs: list[psutil.Process], match: Callable[[str], bool],
                     spare: Collection[int]) -> list[psutil.Process]:
    """``procs`` and the noted processes of the tags ``match`` accepts that still run (the
    same pid with the same start time), but ``spare``."""
    import psutil  # noqa: PLC0415

    seen = {proc.pid for proc in procs} | set(spare)
    found = list(procs)
    for tag, known in list(_remembered.items()):
        if not match(tag):
            continue
        for pid, start in list(known.items()):
            if pid not in seen and _start_time(pid) == start:
                with contextlib.suppress(psutil.Error):
                    found.append(psutil.Process(pid))
                    seen.add(pid)
    return found


class Watchdog:
    """A process, in a session of its own, that ends the processes tagged below a job's
    folder once the driver that started it is gone (killed with ``kill -9`` too): it waits
    for the end of a pipe only the driver holds. :meth:`stop` lets it go when the job ended
    in order."""

    def __init__(self, prefix: str):
        self.prefix = os.path.join(os.path.realpath(prefix), "")
        self.ledger = os.path.join(prefix, JOB_PROCESSES_FILE)
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
        _watchdogs.append(self)
        self.tell([(pid, start, tag) for tag, known in _remembered.items()
                   for pid, start in known.items()])

    def tell(self, noted: Iterable[tuple[int, int, str]]) -> None:
        """Hand the watchdog processes noted as a step's (``(pid, start time, tag)``) of this
        job: it ends them too when the driver is gone."""
        lines = [f"{pid} {start} {tag}\n".encode("utf-8", "surrogateescape")
                 for pid, start, tag in noted
                 if tag.startswith(self.prefix) and "\n" not in tag]
        if not lines or self._write < 0:
            return
        for line in lines:  # each shorter than a pipe's atomic write (PIPE_BUF)
            with contextlib.suppress(OSError):
                os.write(self._write, line)
        with contextlib.suppress(OSError), open(self.ledger, "ab") as ledger:
            ledger.writelines(lines)  # for `job cancel` when the watchdog is gone too

    def stop(self) -> None:
        """The job ended in order (its steps ended their processes): the watchdog exits."""
        if self in _watchdogs:
            _watchdogs.remove(self)
        if self._write >= 0:
            with contextlib.suppress(OSError):
                os.write(self._write, b"q\n")
            os.close(self._write)
            self._write = -1
            with contextlib.suppress(OSError):  # the steps ended what they started
                os.unlink(self.ledger)

    def __enter__(self) -> Watchdog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _watch() -> None:
    """The watchdog's body: note the processes the driver tells it of (``PID START TAG``
    lines) until the driver's end of the pipe closes, then end them and what is tagged;
    a ``q`` line: the driver ended the job itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    pending = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(0, 4096):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                if line == b"q":
                    return
                _note(line.decode("utf-8", "surrogateescape"))
    end_tagged_under(sys.argv[1])


def _read_ledger(prefix: str) -> None:
    """Note the processes a job's driver wrote to its ``processes.txt`` (a driver that is
    gone cannot tell them any more)."""
    with contextlib.suppress(OSError), open(os.path.join(prefix, JOB_PROCESSES_FILE), "rb") as file:
        for line in file:
            _note(line.rstrip(b"\n").decode("utf-8", "surrogateescape"))


def _note(line: str) -> None:
    with contextlib.suppress(ValueError):
        pid, start, tag = line.split(" ", 2)
        _remembered.setdefault(tag, {})[int(pid)] = int(start)


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
           "is_subreaper", "package_root", "remember_tree", "step_tag", "stop_being_subreaper",
           "tagged_environment", "tagged_under"]
