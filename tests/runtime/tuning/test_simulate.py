"""The scheduler replayed over recorded attempts: list scheduling, retries first, re-cutting
into other mini-batch sizes with the fixed cost per call fitted, a worker's warm-up, the
processes sharing the cores (start-ups and attempts), times as on a quiet machine, and a
failing attempt costing what it ran until it raised."""

from __future__ import annotations

import pytest

from mlpipe.runtime.concurrency import START_BARRIER_SECONDS
from mlpipe.runtime.tuning.simulate import (
    Start,
    Unit,
    fit,
    pace,
    quiet_elapsed,
    replay,
    replay_here,
    slowdown,
)
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
    here = replay_here(units, 1, cores=2, starts=[Start(0.0, 0.0, 0.0)], warmup=0.5)
    assert here.attempts == 4 and here.makespan == pytest.approx(4.5)


def test_the_pace_of_handing_out_caps_many_workers() -> None:
    units = [Unit(1, (0.001,))] * 400
    free = replay(units, 100, dispatch=0.0)
    capped = replay(units, 100, dispatch=0.0, rate=400.0)
    assert free.makespan < 0.01 and capped.makespan == pytest.approx(399 / 400 + 0.001)


def test_processes_share_the_cores_by_their_cpu_bound_share() -> None:
    assert pace(0, 2, 1.0, 2) == (1.0, 1.0)  # as many CPU-bound workers as cores
    assert pace(0, 4, 1.0, 2) == (0.5, 0.5)  # twice as many: half speed
    # 8 workers, half of their time on a core, 2 cores: 4 cores wanted, each takes 2x
    _cpu, work = pace(0, 8, 0.5, 2)
    assert 1 / work == pytest.approx(2.0) == slowdown(8, 0.5, 2)
    assert pace(0, 100, 0.0, 2) == (1.0, 1.0)  # waiting costs no core
    cpu, work = pace(2, 2, 0.5, 2)  # 2 starting (CPU) + 2 half-CPU workers: 3 cores wanted
    assert 2 * cpu + 2 * 0.5 * work == pytest.approx(2.0) and cpu < 1.0 and work < 1.0


def test_cpu_bound_attempts_stretch_past_the_cores_and_waiting_ones_do_not() -> None:
    starts = [Start(0.0, 0.0, 0.0)] * 4
    busy = [Unit(1, (1.0,), cpu_share=1.0)] * 4
    assert replay_here(busy, 4, cores=2, starts=starts).makespan == pytest.approx(2.0)
    assert replay_here(busy, 2, cores=2, starts=starts).makespan == pytest.approx(2.0)
    waiting = [Unit(1, (1.0,), cpu_share=0.0)] * 4
    assert replay_here(waiting, 4, cores=2, starts=starts).makespan == pytest.approx(1.0)
    # at the end, fewer workers are left than cores: the last attempt runs at full speed
    odd = [Unit(1, (1.0,), cpu_share=1.0)] * 3
    assert replay_here(odd, 3, cores=2, starts=starts).makespan == pytest.approx(1.5)


def test_workers_start_as_processes_sharing_the_cores() -> None:
    """Four workers whose init() computes 0.5 s then waits 1.2 s for a model, on 2 cores: the
    computing shares the cores (1 s for all four), the waiting overlaps: ready at 2.2 s,
    not in two rounds of a whole start-up (3.4 s)."""
    starts = [Start(0.0, 0.5, 1.2)] * 4
    ran = replay_here([Unit(1, (0.1,), 0.0)] * 4, 4, cores=2, starts=starts)
    assert ran.lead_in == pytest.approx(2.2)
    alone = replay_here([Unit(1, (0.1,), 0.0)], 1, cores=2, starts=starts)
    assert alone.lead_in == pytest.approx(1.7)
    # more workers than measured start-ups: the median one, as far apart as the measured
    spaced = [Start(0.0, 0.5, 0.0), Start(0.1, 0.5, 0.0)]
    many = replay_here([Unit(1, (1.0,), 0.0)] * 3, 3, cores=8, starts=spaced)
    assert many.wall == pytest.approx(0.2 + 0.5 + 1.0)
    # the driver lists the first mini-batches once every worker is ready
    late = replay_here([Unit(1, (0.1,), 0.0)] * 2, 2, cores=2, starts=spaced, listing=0.3)
    assert late.lead_in == pytest.approx(0.6 + 0.3)
    # or, when one is slow to start, START_BARRIER_SECONDS after the first
    slow = [Start(0.0, 0.5, 0.0), Start(0.0, 0.5, 5.0)]
    barred = replay_here([Unit(1, (0.1,), 0.0)] * 2, 2, cores=2, starts=slow, listing=0.3)
    assert barred.lead_in == pytest.approx(0.5 + START_BARRIER_SECONDS + 0.3)


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


def test_times_are_taken_as_on_a_quiet_machine() -> None:
    """A CPU-bound worker that waited for a core half its time under load: its attempts
    count their CPU seconds, and its CPU-bound share is 100 %, as when the machine is quiet;
    a sleeping worker's attempts lose only the share of its waiting that was run-delay."""
    rows = [(f"mb{n}", "0/process000", n * 0.2, 0.2, 1, 0.2, "Succeeded") for n in range(10)]
    rows += [(f"s{n}", "0/process001", n * 0.2, 0.2, 1, 0.2, "Succeeded") for n in range(10)]
    busy = profile(rows, cpu=[0.1] * 10 + [0.0] * 10,
                   delays={"0/process000": 1.0, "0/process001": 0.2})
    quiet = quiet_elapsed(busy)
    assert quiet[:10] == pytest.approx([0.1] * 10)  # its CPU seconds: the rest was delay
    assert quiet[10:] == pytest.approx([0.18] * 10)  # 0.2 s of 2 s off the sleeping one
    only_cpu = profile(rows[:10], workers=1, cpu=[0.1] * 10, delays={"0/process000": 1.0})
    assert only_cpu.cpu_share == pytest.approx(1.0)
    assert only_cpu.run_delay_share == pytest.approx(0.5)
    assert fit(only_cpu).cpu_share == pytest.approx(1.0)
    unmeasured = profile(rows[:10], workers=1, cpu=[0.1] * 10)
    assert unmeasured.cpu_share == pytest.approx(0.5)  # the clock alone: delay looks like I/O


def test_failed_items_fail_their_new_mini_batch_as_often() -> None:
    rows = [("mb0", "0/process000", 0.0, 0.1, 1, 0.1, "Failed"),
            ("mb1", "0/process000", 0.2, 0.1, 1, 0.1, "Succeeded"),
            ("mb0", "0/process000", 0.4, 0.1, 1, 0.1, "Succeeded"),
            ("mb2", "0/process000", 0.6, 0.1, 1, 0.1, "Succeeded")]
    units = fit(profile(rows, workers=1, cores=1)).recut(2, max_retries=3, timeout=60)
    assert [len(unit.attempts) for unit in units] == [2, 1]


def failing_rows(bad: set[int], *, items: int = 4, count: int = 40,
                 per_item: float = 0.1) -> list:
    """Mini-batches of ``items`` items costing ``per_item`` each; those in ``bad`` raise at
    their second item (they ran one item and a half) on each of their 3 attempts."""
    rows, at = [], 0.0
    for n in range(count):
        if n in bad:
            for _ in range(3):
                rows.append((f"mb{n}", "0/process000", at, 1.5 * per_item, items,
                             1.5 * per_item, "Failed"))
                at += 1.5 * per_item
            continue
        rows.append((f"mb{n}", "0/process000", at, items * per_item, items, items * per_item,
                     "Succeeded"))
        at += items * per_item
    return rows


def test_a_failing_attempt_costs_what_it_ran_until_it_raised() -> None:
    """A bad item in the 6th mini-batch of 4 (items 20-23) raised 1.5 items in: at 16 items
    a mini-batch, the one holding it (items 16-31) runs 5.5 items before raising, three
    times, and loses all its 16 items; it is not charged its full length each time."""
    workload = fit(profile(failing_rows({5}), workers=1, cores=1))
    units = workload.recut(16, max_retries=2, timeout=60)
    failing = units[1]
    assert failing.lost == 16 and len(failing.attempts) == 3
    assert failing.attempts[0] == pytest.approx(5.5 * 0.1, rel=0.02)
    assert sum(unit.lost for unit in units) == 16
    measured = workload.units(max_retries=2, timeout=60)
    assert measured[5].attempts == pytest.approx((0.15, 0.15, 0.15))
    assert sum(unit.lost for unit in measured) == 4
    ran = replay(units, 1, dispatch=0.0)
    assert ran.failed == 1 and ran.lost == 16
