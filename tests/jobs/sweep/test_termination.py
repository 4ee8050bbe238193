"""The early-termination policies, applied at a trial's reports of the primary metric."""

from __future__ import annotations

from mlpipe.jobs.sweep.termination import due, should_stop
from mlpipe.plan import EarlyTermination


def test_evaluation_interval_and_delay() -> None:
    policy = EarlyTermination("bandit", evaluation_interval=2, delay_evaluation=2)
    assert [n for n in range(1, 9) if due(policy, n)] == [4, 6, 8]


def test_bandit_by_factor_and_by_amount() -> None:
    series = {"best": [0.8], "ok": [0.75], "poor": [0.7]}
    factor = EarlyTermination("bandit", slack_factor=0.1)  # 0.8 / 1.1 = 0.727
    assert not should_stop(factor, "maximize", "ok", series)
    assert should_stop(factor, "maximize", "poor", series)
    amount = EarlyTermination("bandit", slack_amount=0.2)  # minimize: 0.1 + 0.2
    low = {"best": [0.1], "ok": [0.25], "poor": [0.35]}
    assert not should_stop(amount, "minimize", "ok", low)
    assert should_stop(amount, "minimize", "poor", low)


def test_median_stopping_compares_the_best_with_the_running_averages() -> None:
    policy = EarlyTermination("median_stopping")
    series = {"a": [0.5, 0.7], "b": [0.6, 0.8], "c": [0.3, 0.4]}  # averages 0.6, 0.7
    assert should_stop(policy, "maximize", "c", series)
    assert not should_stop(policy, "maximize", "b", series)


def test_truncation_selection_stops_the_worst_percent() -> None:
    policy = EarlyTermination("truncation_selection", truncation_percentage=25)
    series = {"a": [0.9], "b": [0.8], "c": [0.7], "d": [0.1]}
    assert should_stop(policy, "maximize", "d", series)
    assert not should_stop(policy, "maximize", "c", series)
    assert not should_stop(policy, "maximize", "a", {"a": [0.9]})  # no one to compare with
