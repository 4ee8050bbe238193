"""The total of a parallel step, counted in the background while the first mini-batches run.

The driver pulls mini-batches from the data layer lazily, so it only knows how
many there are once the stream ends. :class:`InputCounter` runs the data layer's
cheap counting pass (:func:`mlpipe.data.batches.count_mini_batches`) on a
daemon thread as soon as the step starts and tells every observer the result
through ``mini_batches_counted`` (see :class:`~mlpipe.runtime.records.StepObserver`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from datetime import datetime

from mlpipe.plan import ParallelStep
from mlpipe.runtime.records import StepObserver, WorkerInfo

log = logging.getLogger("mlpipe.runtime")


class InputCounter(StepObserver):
    """Counts ``step``'s mini-batches on a thread started by ``step_started``.

    Put it after the observers it informs, so that their ``step_started`` (which
    resets their counts) has run before the total can arrive. A counting error is
    logged at DEBUG and otherwise ignored: the stream itself reports bad input.
    """

    def __init__(self, step: ParallelStep, observers: Sequence[StepObserver]) -> None:
        self.step = step
        self.observers = list(observers)
        self.total: int | None = None
        self._thread: threading.Thread | None = None

    def step_started(self, step: ParallelStep, workers: list[WorkerInfo], at: datetime) -> None:
        self._thread = threading.Thread(target=self._count, name="mlpipe-input-count",
                                        daemon=True)
        self._thread.start()

    def _count(self) -> None:
        from mlpipe.data.batches import count_mini_batches  # noqa: PLC0415

        try:
            self.total = count_mini_batches(self.step)
        except Exception as error:  # noqa: BLE001 - the stream reports bad input, not us
            log.debug("counting the input of %s failed: %s", self.step.name, error)
            return
        for observer in self.observers:
            try:
                observer.mini_batches_counted(self.total)
            except Exception:  # noqa: BLE001 - a display must not break the count
                log.exception("observer %r failed on mini_batches_counted", observer)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the count (tests, and the end of a step)."""
        if self._thread is not None:
            self._thread.join(timeout)
