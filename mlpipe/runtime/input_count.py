"""The total of a parallel step, counted in the background while the first mini-batches run,
and the step's final totals taken from it.

The driver pulls mini-batches from the data layer lazily, so it only knows how
many there are once the stream ends. :class:`InputCounter` runs the data layer's
cheap counting pass (:func:`mlpipe.data.batches.count_input`) on a daemon thread that
the driver starts with the step; the driver tells its observers the result
(``mini_batches_counted``, from its own thread) as soon as it is there.
:func:`settle_totals` is the one rule for a step's totals: the listing's when it
reached the input's end, else the counting pass's (what did not run is "not processed").
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from mlpipe.plan import ParallelStep
from mlpipe.runtime.records import StepSummary

if TYPE_CHECKING:
    from mlpipe.data.batches import InputCount

log = logging.getLogger("mlpipe.runtime")
COUNT_WAIT_SECONDS = 60.0  # how long a step that stopped early waits for its input's count


class InputCounter:
    """Counts ``step``'s input on a thread (:meth:`start`); :attr:`count` once done.

    A counting error is logged at DEBUG and otherwise ignored: the stream itself reports
    bad input (the count stays ``None``). :meth:`given` is a count known up front (a list
    of mini-batches handed to the step)."""

    def __init__(self, step: ParallelStep | None) -> None:
        self.step = step
        self.count: InputCount | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def given(cls, count: InputCount) -> InputCounter:
        counter = cls(None)
        counter.count = count
        return counter

    @property
    def total(self) -> int | None:
        """The input's mini-batches, once counted."""
        return self.count.mini_batches if self.count is not None else None

    def start(self) -> None:
        if self.step is None or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._count, name="mlpipe-input-count",
                                        daemon=True)
        self._thread.start()

    def _count(self) -> None:
        from mlpipe.data.batches import count_input  # noqa: PLC0415

        assert self.step is not None
        try:
            self.count = count_input(self.step)
        except Exception as error:  # noqa: BLE001 - the stream reports bad input, not us
            log.debug("counting the input of %s failed: %s", self.step.name, error)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the count (tests, and the end of a step)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def result(self) -> InputCount | None:
        """The count, waited for (at most :data:`COUNT_WAIT_SECONDS`); ``None`` when the
        input could not be counted."""
        self.join(COUNT_WAIT_SECONDS)
        return self.count


def settle_totals(summary: StepSummary, listed: int, listing_complete: bool,
                  count: InputCount | None) -> None:
    """Set ``summary``'s totals of the input: the listing's when it reached the input's end,
    else the counting pass's ``count``; the items of mini-batches that never ended come from
    the count (``items_known`` is False when it has none). Without a count the total is what
    was listed and ``total_known`` is False."""
    ended = summary.mini_batches_succeeded + summary.mini_batches_failed
    if listing_complete:
        summary.mini_batches_total = max(listed, ended)
    elif count is not None:
        summary.mini_batches_total = max(count.mini_batches, listed, ended)
    else:
        summary.mini_batches_total = max(listed, ended)
        summary.total_known = False
    if ended >= summary.mini_batches_total:
        return  # every mini-batch ended: their items are the input's
    if count is not None and count.items is not None:
        summary.items_total = max(count.items, summary.items_total)
    else:
        summary.items_known = False


__all__ = ["COUNT_WAIT_SECONDS", "InputCounter", "settle_totals"]
