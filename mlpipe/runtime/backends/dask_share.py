"""Fair shares of one Dask cluster among the mlpipe steps that use it at once.

Each mlpipe worker needs a Dask worker process of its own for the whole step, so a
step that took every worker would leave a second job (or a parallel branch of the same
job) nothing until it ends. Steps on a shared cluster therefore publish, on the
scheduler, how many workers they want and hold (metadata ``("mlpipe-steps", <run id>)``)
and keep a liveness lock ``mlpipe-step-<run id>`` while they run (a lock's lease ends
with its client, so the entry of a driver that died is ignored within
``distributed.scheduler.locks.lease-timeout``). The share of each live step is the
max-min fair division of the workers mlpipe may use (:func:`fair_shares`): a step
holding more than its share gives workers back, after their current mini-batches,
while another step holds fewer than its share; a step below its share takes free
workers.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

BOARD = "mlpipe-steps"
CHECK_SECONDS = 1.0  # how often a step looks at the others
LIVENESS_CACHE_SECONDS = 5.0


@dataclass(frozen=True)
class Demand:
    """One step on the board: ``wanted`` Dask workers, ``held`` now, registered at ``since``."""

    run_id: str
    wanted: int
    held: int
    since: float
    label: str = ""


def fair_shares(demands: Sequence[Demand], pool: int) -> dict[str, int]:
    """Max-min fair shares of ``pool`` workers: each step gets as many as the others unless it
    wants fewer; what is left over goes to the earliest steps first."""
    shares = {demand.run_id: 0 for demand in demands}
    wanting = sorted((d for d in demands if d.wanted > 0), key=lambda d: (d.since, d.run_id))
    left = pool
    while left > 0 and wanting:
        each = max(1, left // len(wanting))
        for demand in wanting:
            give = min(each, demand.wanted - shares[demand.run_id], left)
            shares[demand.run_id] += give
            left -= give
            if not left:
                break
        wanting = [d for d in wanting if shares[d.run_id] < d.wanted]
    return shares


class ShareBoard:
    """This step's entry on the scheduler's board, and its view of the others."""

    def __init__(self, client: Any, run_id: str, label: str, logger: logging.Logger) -> None:
        self.client = client
        self.run_id = run_id
        self.label = label
        self.logger = logger
        self.since = time.time()
        self._lock: Any = None
        self._live: dict[str, tuple[bool, float]] = {}  # run id -> (alive, when looked)
        self._published: tuple[int, int] | None = None
        self.checked = 0.0

    def join(self, wanted: int, held: int) -> None:
        """Take the liveness lock and publish this step's demand."""
        from distributed import Lock  # noqa: PLC0415

        self._lock = Lock(f"mlpipe-step-{self.run_id}", scheduler_rpc=self.client.scheduler,
                          loop=self.client.loop)
        self._lock.acquire(blocking=False)
        self.publish(wanted, held)

    def publish(self, wanted: int, held: int) -> None:
        """Publish what this step wants and holds (when it changed)."""
        if self._published == (wanted, held):
            return
        self._published = (wanted, held)
        with contextlib.suppress(Exception):  # the board is advice; the claims are the truth
            self.client.set_metadata([BOARD, self.run_id], {
                "wanted": wanted, "held": held, "since": self.since, "label": self.label})

    def others(self) -> list[Demand]:
        """The live steps on the board other than this one."""
        try:
            board = self.client.get_metadata([BOARD], default={}) or {}
        except Exception:  # noqa: BLE001
            return []
        found = []
        for run_id, entry in board.items():
            if run_id == self.run_id or not isinstance(entry, dict) or not entry.get("wanted"):
                continue
            if self._alive(run_id):
                found.append(Demand(run_id, int(entry["wanted"]), int(entry.get("held", 0)),
                                    float(entry.get("since", 0.0)), str(entry.get("label", ""))))
        return found

    def _alive(self, run_id: str) -> bool:
        known = self._live.get(run_id)
        now = time.monotonic()
        if known is not None and now - known[1] < LIVENESS_CACHE_SECONDS:
            return known[0]
        alive = lock_held(self.client, f"mlpipe-step-{run_id}")
        self._live[run_id] = (alive, now)
        return alive

    def leave(self) -> None:
        """Take this step off the board and release its liveness lock."""
        with contextlib.suppress(Exception):
            self.client.set_metadata([BOARD, self.run_id], None)
        if self._lock is not None:
            with contextlib.suppress(Exception):
                self._lock.release()
            self._lock = None


def lock_held(client: Any, name: str) -> bool:
    """True when the cluster-wide lock ``name`` is held (one scheduler round trip, no lock
    object: those refresh their leases for as long as they live)."""
    try:
        return bool(client.sync(client.scheduler.semaphore_value, name=name))
    except Exception:  # noqa: BLE001 - unknown lock or a closing client: not held
        return False


__all__ = ["BOARD", "CHECK_SECONDS", "Demand", "ShareBoard", "fair_shares", "lock_held"]
