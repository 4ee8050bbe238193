"""The scheduler replayed over recorded attempts: list scheduling, retries first, re-cutting
into other mini-batch sizes with the fixed cost per call fitted, and a worker's warm-up."""

from __future__ import annotations

import pytest

from mlpipe.runtime.tuning.simulate import Unit, fit, replay
from tests.runtime.tuning.support import profile


def test_replay_is_list_scheduling_with_dispatch_and_lead_in() -> None:
    units = [Unit(1, (1.0,)), Unit(1, (1.0,)), Unit(1, (1.0,)), Unit(1, (3.0,))]
    ran = replay(units, 2, dispatch=0.5, lead_in=2.0, tail=1.0)
    # worker A: 1.5, 3.0 (third); worker B: 1.5, then the 3 s one: 1.5 + 3.5 = 5.0
    assert ran.makespan == pytest.approx(5.0)
    assert ran.wall == pytest.approx(8.0)
    assert ran.busy == pytest.approx(8.0) and ran.attempts == 4
    assert ran.utilisation == pytest.approx(0.8)


def test_a_retry_goes_before_new_mini_batches_once_it_is_due() -> None:
    units = [Unit(1, (1.0, 1.0)), Unit(1, (1.0,)), Unit(1, (1.0,))]
    ran = replay(units, 1, dispatch=0.0)
    assert ran.attempts == 4 and ran.makespan == pytest.approx(4.0)
    # one worker: first attempt of 0 (fails), retry of 0 due at 1.0 goes first, then 1, 2
    order = replay(units, 1, dispatch=0.0, warmup=0.5)
    assert order.makespan == pytest.approx(4.5)  # the first attempt pays the warm-up once


def test_the_pace_of_handing_out_caps_many_workers() -> None:
    units = [Unit(1, (0.001,))] * 400
    free = replay(units, 100, dispatch=0.0)
    capped = replay(units, 100, dispatch=0.0, rate=400.0)
    assert free.makespan < 0.01 and capped.makespan == pytest.approx(399 / 400 + 0.001)


def test_cpu_bound_work_stretches_past_the_cores() -> None:
    units = [Unit(1, (1.0,), cpu_share=1.0)] * 4
    assert replay(units, 4, dispatch=0.0, stretch=2.0).makespan == pytest.approx(2.0)
    waiting = [Unit(1, (1.0,), cpu_share=0.0)] * 4
    assert replay(waiting, 4, dispatch=0.0, stretch=2.0).makespan == pytest.approx(1.0)


def test_a_fixed_cost_per_call_is_fitted_when_sizes_vary_and_recut_keeps_it() -> None:
    rows = []
    at = 0.0
    for n, items in enumerate([2, 4, 6, 2, 4, 6, 2, 4, 6, 3]):
        run = 0.1 + 0.01 * items
        rows.append((f"mb{n}", "0/process000", at, run + 0.02, items, run, "Succeeded"))
        at += run + 0.03
    workload = fit(profile(rows, workers=1, cores=1))
    assert workload.run.fitted
    assert workload.run.fixed == pytest.approx(0.1, abs=1e-6)
    assert workload.run.per_item == pytest.approx(0.01, abs=1e-6)
    units = workload.recut(10, max_retries=0, timeout=60)
    assert [unit.items for unit in units] == [10, 10, 10, 9]
    assert units[0].attempts[0] == pytest.approx(0.1 + 0.1 + 0.02, abs=1e-3)


def test_one_size_everywhere_takes_run_time_as_proportional_to_items() -> None:
    rows = [(f"mb{n}", "0/process000", n * 0.3, 0.25, 5, 0.2, "Succeeded") for n in range(6)]
    workload = fit(profile(rows, workers=1, cores=1))
    assert not workload.run.fitted and workload.run.fixed == 0.0
    assert workload.run.per_item == pytest.approx(0.04)


def test_failed_items_fail_their_new_mini_batch_as_often() -> None:
    rows = [("mb0", "0/process000", 0.0, 0.1, 1, 0.1, "Failed"),
            ("mb1", "0/process000", 0.2, 0.1, 1, 0.1, "Succeeded"),
            ("mb0", "0/process000", 0.4, 0.1, 1, 0.1, "Succeeded"),
            ("mb2", "0/process000", 0.6, 0.1, 1, 0.1, "Succeeded")]
    units = fit(profile(rows, workers=1, cores=1)).recut(2, max_retries=3, timeout=60)
    assert [len(unit.attempts) for unit in units] == [2, 1]
