"""How sure a prediction is: a 90 % interval from the run's own variation.

The point prediction replays the measured mini-batches once. The interval replays them again
with what a run of the same step varies in, drawn from what this run measured (a bootstrap):
each worker's start-up (CPU and waiting) drawn from the measured start-ups, each mini-batch's
cost scaled by a draw of how much the measured mini-batches varied beyond their neighbours'.
It is widened by what the model itself misses (its replay of the measured settings against
the run's quiet wall time, at least ``MODEL_ERROR``), by what taking a busy machine's
run-delay off may miss, and spans the prediction from each other run of the step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from mlpipe.runtime.tuning.brief import seconds
from mlpipe.runtime.tuning.simulate import Replay, Start, Unit, Workload

LOW, HIGH = 5.0, 95.0  # percentiles: a 90 % interval
WIDE = 1.3  # an interval wider than high / low says why
REPLAYS = 10_000  # mini-batch replays the bootstrap may spend (fewer draws for big steps)
MIN_DRAWS, MAX_DRAWS = 30, 100
SEED = 32
CORRECTION_ERROR = 0.02  # of the run-delay taken off the attempts, what the correction may miss
MODEL_ERROR = 0.05  # what the model misses at least (bench/advise_accuracy.py's median target)


@dataclass(frozen=True)
class Estimate:
    """A predicted wall time with its 90 % interval (``why``: what makes it wide)."""

    wall: float
    low: float
    high: float
    replay: Replay
    why: str = ""

    @property
    def ratio(self) -> float:
        return self.high / self.low if self.low > 0 else math.inf


Replayer = Callable[[Sequence[Unit], Sequence[Start]], Replay]


def estimate(workload: Workload, units: Sequence[Unit], run: Replayer, *,
             model_error: float = 0.0, others: Sequence[float] = (),
             contention: float = 0.0) -> Estimate:
    """``run(units, starts)``'s wall time, with the bootstrap's 90 % interval widened by
    ``model_error`` (a share of the wall), by what taking the run-delay off may miss (a
    share of what was taken off: ``CORRECTION_ERROR``) and spanning ``others`` (the same
    prediction from the step's other runs)."""
    point = run(units, workload.starts)
    draws = max(MIN_DRAWS, min(MAX_DRAWS, REPLAYS // max(len(units), 1)))
    chance = np.random.default_rng(SEED)
    walls = [run(_jittered(workload, units, chance), _drawn_starts(workload.starts, chance)).wall
             for _ in range(draws)]
    low, high = np.percentile(walls, [LOW, HIGH]).tolist()
    wall = point.wall
    low, high = min(low, wall), max(high, wall)
    kept = max(workload.quiet_share, 0.05)
    margin = (max(abs(model_error), MODEL_ERROR)
              + CORRECTION_ERROR * (1.0 - kept) / kept) * wall
    low, high = max(low - margin, 0.0), high + margin
    below, above = (low / wall, high / wall) if wall > 0 else (1.0, 1.0)
    for other in others:  # another run's prediction, with this one's spread around it
        low, high = min(low, other * below), max(high, other * above)
    found = Estimate(wall, low, high, point)
    if found.ratio > WIDE:
        found = replace(found, why=_why_wide(workload, walls, model_error, others, wall,
                                             contention))
    return found


def _jittered(workload: Workload, units: Sequence[Unit], chance: np.random.Generator
              ) -> list[Unit]:
    """``units`` with each mini-batch's cost scaled by a draw of the measured variation (a
    log-normal of mean 1; a larger mini-batch's items vary together less)."""
    sigma = workload.noise
    if sigma <= 0 or not units:
        return list(units)
    per = max(workload.items_per_mini_batch, 1.0)
    spread = sigma / np.sqrt(np.maximum(np.array([u.items for u in units]) / per, 1.0))
    factors = np.exp(spread * chance.standard_normal(len(units)) - spread ** 2 / 2).tolist()
    return [Unit(unit.items, tuple(seconds * factor for seconds in unit.attempts),
                 unit.cpu_share, unit.lost) for unit, factor in zip(units, factors, strict=True)]


def _drawn_starts(starts: Sequence[Start], chance: np.random.Generator) -> list[Start]:
    """The measured start-ups at their start times, each worker's CPU and waiting drawn
    from a measured worker's."""
    if len(starts) < 2:
        return list(starts)
    picks = chance.integers(0, len(starts), len(starts)).tolist()
    return [Start(start.at, starts[pick].cpu, starts[pick].wait)
            for start, pick in zip(starts, picks, strict=True)]


def _why_wide(workload: Workload, walls: list[float], model_error: float,
              others: Sequence[float], wall: float, contention: float) -> str:
    """Why an interval is wider than ``WIDE``, in the measured figures that make it so."""
    reasons = []
    spread = np.percentile(walls, [LOW, HIGH]).tolist()
    if spread[0] > 0 and spread[1] / spread[0] > 1.1:
        readies = [s.at + s.cpu + s.wait for s in workload.starts]
        if readies and max(readies) > 1.5 * max(min(readies), 1e-3):
            reasons.append(f"the workers' start-ups varied from {seconds(min(readies))} to "
                           f"{seconds(max(readies))}")
        if workload.noise > 0.1:
            reasons.append(f"a mini-batch's cost varied {workload.noise:.0%} (a standard "
                           "deviation) from its neighbours'")
    if abs(model_error) > 0.05:
        reasons.append(f"the model replays the measured run {model_error:+.0%} off its "
                       "quiet wall time")
    apart = [other for other in others if wall and abs(other / wall - 1) > 0.05]
    if apart:
        reasons.append(f"{'other runs' if len(apart) > 1 else 'another run'} of the step "
                       f"predict{'' if len(apart) > 1 else 's'} "
                       f"{', '.join(seconds(other) for other in apart)}")
    if contention > 0.05:
        reasons.append(f"the profile was taken under contention (other processes kept its "
                       f"attempts waiting for a core {contention:.0%} of their time)")
    return "; ".join(reasons) or "the replays of the run's variation spread this wide"


__all__ = ["Estimate", "estimate"]
