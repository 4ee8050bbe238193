"""Early termination of a sweep's trials, as Azure ML's policies decide it.

Each report of the primary metric by a trial is one *interval*. A policy is applied to a
trial when it reports interval ``n`` with ``n > delay_evaluation`` and ``n`` a multiple of
``evaluation_interval``, comparing it with the other trials' reports at the same interval:

- ``bandit``: stop it when its value is not within the slack of the best value at ``n``
  (maximize: below ``best / (1 + slack_factor)`` or ``best - slack_amount``);
- ``median_stopping``: stop it when its best value so far is worse than the median of the
  other trials' running averages over intervals ``1..n``;
- ``truncation_selection``: stop it when its value at ``n`` is among the worst
  ``truncation_percentage`` percent of all trials' values at ``n``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from mlpipe.plan import EarlyTermination


def due(policy: EarlyTermination, reports: int) -> bool:
    """Whether the policy is applied when a trial has made ``reports`` reports."""
    interval = max(1, policy.evaluation_interval)
    return reports > policy.delay_evaluation and reports % interval == 0


def should_stop(policy: EarlyTermination, goal: str, trial: str,
                series: Mapping[str, Sequence[float]]) -> bool:
    """Whether ``trial`` (whose reports are ``series[trial]``) stops now; ``series`` holds
    every trial's reports of the primary metric, in order."""
    mine = series[trial]
    n = len(mine)
    if n == 0 or not due(policy, n):
        return False
    maximize = goal == "maximize"
    peers = {name: values for name, values in series.items() if len(values) >= n}
    if policy.policy == "bandit":
        return _bandit(policy, maximize, mine[n - 1], [v[n - 1] for v in peers.values()])
    others = {name: values for name, values in peers.items() if name != trial}
    if not others:
        return False
    if policy.policy == "median_stopping":
        median = statistics.median(statistics.fmean(values[:n]) for values in others.values())
        best = max(mine) if maximize else min(mine)
        return best < median if maximize else best > median
    if policy.policy == "truncation_selection":
        values = sorted((v[n - 1] for v in peers.values()), reverse=maximize)  # best first
        cut = math.floor(len(values) * (policy.truncation_percentage or 0) / 100)
        worst = values[len(values) - cut:] if cut else []
        return mine[n - 1] in worst
    return False


def _bandit(policy: EarlyTermination, maximize: bool, value: float,
            at_interval: Sequence[float]) -> bool:
    best = max(at_interval) if maximize else min(at_interval)
    if policy.slack_amount is not None:
        bound = best - policy.slack_amount if maximize else best + policy.slack_amount
    else:
        factor = 1 + (policy.slack_factor or 0.0)
        bound = best / factor if maximize else best * factor
    return value < bound if maximize else value > bound


__all__ = ["due", "should_stop"]
