"""What the driver itself costs while a step runs: its process's CPU time (every thread:
scheduling, the journal, the reports, job.json, sampling) per second of step and per
mini-batch attempt, for job_result.txt's tuning block. On a machine whose cores the workers
fill, each second of it is taken from them."""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class DriverCpu:
    """The driver process's CPU and the wall clock, from :meth:`start` to :meth:`line`."""

    cpu: float
    wall: float

    @classmethod
    def start(cls) -> DriverCpu:
        return cls(_cpu_seconds(), time.monotonic())

    def used(self) -> tuple[float, float]:
        """(CPU seconds, wall seconds) since the start."""
        return max(_cpu_seconds() - self.cpu, 0.0), max(time.monotonic() - self.wall, 1e-9)

    def line(self, attempts: int) -> str:
        """``  driver: 0.21 s CPU in 8.03 s of step (2.6 % of one core), 52 us per attempt``"""
        cpu, wall = self.used()
        per = f", {cpu / attempts * 1e6:.0f} us per mini-batch attempt" if attempts else ""
        return (f"  driver: {cpu:.2f} s CPU in {wall:.2f} s of step ({cpu / wall:.1%} of one "
                f"core){per} (the mlpipe process: scheduling, journal, reports, job.json)")


__all__ = ["DriverCpu"]
