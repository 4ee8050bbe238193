"""Progress of a parallel step for people: a live rich bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from datetime import datetime
from typing import TextIO, TypedDict

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from mlpipe.plan import ParallelStep
from mlpipe.runtime.counters import StepCounters, attempt_failed, format_seconds
from mlpipe.runtime.error_keys import Signature, message_line, signature
from mlpipe.runtime.records import (
    AttemptRecord,
    StepObserver,
    StepSummary,
    WorkerInfo,
    totals_text,
)
from mlpipe.runtime.reports.job_report import process_label
from mlpipe.runtime.textio import encodable
from mlpipe.wording import duration

PLAIN_INTERVAL_SECONDS = 5.0
DISTINCT_ERRORS_SHOWN = 5
LIVE_UPDATE_SECONDS = 0.1


class _Fields(TypedDict):
    """The progress bar's text fields (``{task.fields[...]}``)."""

    done: str
    percent: str
    failed: str
    items_rate: str
    eta: str


class ProgressDisplay(StepObserver):
    """A :class:`~mlpipe.runtime.records.StepObserver` showing processed / failed / total
    mini-batches, items per second and ETA.

    On a terminal (or with ``console`` given) it drives a rich progress bar, fed
    at most every 0.1 s whatever the mini-batch rate; otherwise it writes one
    plain line to ``stream`` (default ``sys.stderr``) every ``interval`` seconds,
    from a timer thread while no mini-batch finishes, plus a line for each worker
    failure and a last line.
    """

    def __init__(self, step: ParallelStep, stream: TextIO | None = None, *,
                 console: Console | None = None, interval: float = PLAIN_INTERVAL_SECONDS) -> None:
        self.step = step
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.counters = StepCounters()
        if console is None and _is_terminal(self.stream):
            console = Console(file=self.stream)
        self.console = console
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._next = 0.0
        self._finished = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._last_line = 0.0
        self._errors_seen: set[Signature] = set()  # the first few kinds of error, said once
        self._muted = False  # the stream failed: print nothing more

    @property
    def live(self) -> bool:
        """True when drawing a rich bar, False when writing plain lines."""
        return self.console is not None

    # -- StepObserver -------------------------------------------------------------------
    def step_started(self, step: ParallelStep, workers: list[WorkerInfo], at: datetime) -> None:
        self.counters = StepCounters()
        if self.console is not None:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[percent]}"),
                TextColumn("{task.fields[done]} mini-batches"),
                TextColumn("[red]{task.fields[failed]} failed"),
                TextColumn("{task.fields[items_rate]} items/s"),
                TextColumn("ETA {task.fields[eta]}"),
                TimeElapsedColumn(),
                console=self.console,
                refresh_per_second=4,
            )
            self._task = self._progress.add_task(step.name, total=None, **self._fields())
            self._progress.start()
        else:
            self._print(f"[mlpipe] {step.name}: started with {len(workers)} worker process(es)")
            if self.interval >= 0.5:
                self._ticker = threading.Thread(target=self._tick, name="mlpipe-progress",
                                                daemon=True)
                self._ticker.start()
        self._next = time.monotonic() + (LIVE_UPDATE_SECONDS if self.live else self.interval)

    def mini_batches_scheduled(self, count: int, done: bool) -> None:
        self.counters.scheduled = count
        self.counters.listing_done = done
        self._changed(force=done)

    def mini_batches_reused(self, count: int) -> None:
        """Resume: ``count`` mini-batches succeeded in an earlier run; shown as done."""
        self.counters.reused = count

    def mini_batches_counted(self, total: int) -> None:
        """The counting pass's total: percentage and ETA from now on."""
        self.counters.counted = total
        if not self._finished:
            self._changed(force=True)

    def attempt_finished(self, record: AttemptRecord) -> None:
        self.attempts_finished((record,))

    def attempts_finished(self, records: Sequence[AttemptRecord]) -> None:
        """Count the attempts, note each new kind of failure, redraw at most once."""
        self.counters.add_all(records)
        for record in records:
            if not attempt_failed(record) or len(self._errors_seen) >= DISTINCT_ERRORS_SHOWN:
                continue
            message = record.error_message or record.status
            key = signature(record.error_category or record.status, message, record.traceback)
            if key not in self._errors_seen:  # a new kind of error, as the reports group them
                self._errors_seen.add(key)
                self._notice(f"mini-batch {record.mini_batch_id} attempt {record.picked_count} "
                             f"on {process_label(record.worker)}: [{key.category}] "
                             f"{message_line(message)}"
                             + ("" if record.final else " (will be retried)")
                             + (f"; further kinds of error in {self.step.logs_dir}/user/error.txt"
                                if len(self._errors_seen) == DISTINCT_ERRORS_SHOWN else ""))
        self._changed()

    def worker_event(self, worker: WorkerInfo, event: str, message: str) -> None:
        if event not in ("init_failed", "start_failed", "died"):
            return
        last = _last_line(message or "")
        what = "could not start" if event == "start_failed" else event
        self._notice(f"worker {process_label(worker)} {what}" + (f": {last}" if last else ""))

    def _notice(self, text: str) -> None:
        """A line above the bar (or a plain line) about a failure, as it happens."""
        if self._progress is not None:
            self._progress.console.print(f"{self.step.name}: {text}", style="yellow",
                                         markup=False, highlight=False)
        else:
            self._print(f"[mlpipe] {self.step.name}: {text}")

    def step_finished(self, summary: StepSummary) -> None:
        if self._finished:
            return
        self._stop_ticker()
        self._finished = True
        seconds = summary.seconds if summary.seconds is not None else self.counters.elapsed()
        text = (f"{self.step.name} {summary.status}"
                + (f" ({summary.reason.strip().splitlines()[0]})" if summary.reason else "")
                + f" in {duration(seconds)}: {totals_text(summary)}")
        if self._progress is not None and self._task is not None:
            self._push()
            self._progress.stop()
            style = "green" if summary.status == "Completed" else "red"
            self._progress.console.print(text, style=style, markup=False, highlight=False)
            self._progress = None
        else:
            self._print(f"[mlpipe] {text}")

    def close(self) -> None:
        """Stop the live display or the timer if the step never finished (idempotent)."""
        self._stop_ticker()
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    # -- drawing ------------------------------------------------------------------------
    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            if time.monotonic() - self._last_line >= self.interval:
                self._print(f"[mlpipe] {self.step.name}: {self.status_line()}")

    def _stop_ticker(self) -> None:
        if self._ticker is not None:
            self._stop.set()
            self._ticker.join()
            self._ticker = None

    def _changed(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now < self._next:
            return
        if self._progress is not None:
            self._push()
            self._next = now + LIVE_UPDATE_SECONDS
        elif not self._finished:
            self._print(f"[mlpipe] {self.step.name}: {self.status_line()}")
            self._next = now + self.interval

    def _push(self) -> None:
        if self._progress is None or self._task is None:
            return
        self._progress.update(self._task, total=self.counters.total,
                              completed=self.counters.done,
                              **self._fields())

    def _fields(self) -> _Fields:
        c = self.counters
        total, percent = c.total, c.percent()
        return {
            "done": f"{min(c.done, total) if total is not None else c.done}/"
                    f"{total if total is not None else '?'}"
                    + (f" ({c.reused} reused)" if c.reused else ""),
            "percent": f"{percent:3.0f}%" if percent is not None else "",
            "failed": str(c.failed),
            "items_rate": f"{c.items_rate():.1f}",
            "eta": format_seconds(c.eta()),
        }

    def status_line(self) -> str:
        """``120/3000 mini-batches (4%, 3 failed), 1200 items, 45.2 items/s, ETA 1m02s,
        elapsed 12s`` (``120/?``, no percentage and ``ETA ?`` until the total is known)."""
        fields = self._fields()
        percent = f"{fields['percent'].strip()}, " if fields["percent"] else ""
        return (f"{fields['done']} mini-batches ({percent}{fields['failed']} failed), "
                f"{self.counters.items_total} items, {fields['items_rate']} items/s, "
                f"ETA {fields['eta']}, elapsed {format_seconds(self.counters.elapsed())}")

    def _print(self, line: str) -> None:
        """Write one line; a console that cannot be written (closed pipe, full disk) only
        silences the display, never the step."""
        with self._lock:
            if self._muted:
                return
            try:
                self.stream.write(encodable(line) + "\n")
                self.stream.flush()
            except (OSError, ValueError):
                self._muted = True
            self._last_line = time.monotonic()


def _last_line(message: str) -> str:
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
