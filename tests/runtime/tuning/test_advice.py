"""What ``mlpipe job advise`` says: settings parsed from --set, VM sizes, assumptions, the
JSON contract with its interval, memory flagged in every what-if, failures in the model and
the advice, no change for a gain within the noise, and job_result.txt's short block."""

from __future__ import annotations

import time

import pytest

from mlpipe.runtime.tuning.advice import AdviceUsageError, advise, what_if
from mlpipe.runtime.tuning.brief import advice_lines, overhead_advice
from mlpipe.runtime.tuning.cloud import Assumptions, UnknownVmSize, vm_size
from tests.runtime.tuning.support import profile


def steady(count: int = 200, run: float = 0.05, items: int = 1) -> list:
    rows = []
    for n in range(count):
        worker = n % 2
        at = (n // 2) * (run + 0.01)
        rows.append((f"mb{n}", f"0/process{worker:03d}", at, run + 0.005, items, run,
                     "Succeeded"))
    return rows


def test_the_json_contract() -> None:
    advice = advise(profile(steady()), "score", overrides=["jobs.score.mini_batch_size=4",
                                                           "max_concurrency_per_instance=1"],
                    instance_type="Standard_D4s_v3", instance_count=2)
    data = advice.as_json()
    assert {"measured_wall_s", "quiet_wall_s", "replayed_wall_s", "predicted_wall_s", "low_s",
            "high_s", "settings", "memory", "failures", "profile", "cloud",
            "recommendations"} <= set(data)
    assert {"instance_type", "instance_count", "predicted_duration_s", "low_s", "high_s",
            "memory"} <= set(data["cloud"])
    assert data["cloud"]["instance_type"] == "Standard_D4s_v3"
    assert data["cloud"]["instance_count"] == 2
    assert data["settings"]["mini_batch_size"] == "4"
    assert data["settings"]["max_concurrency_per_instance"] == 1
    keys = [r["key"] for r in data["recommendations"]]
    assert keys == ["max_concurrency_per_instance", "mini_batch_size", "instance_count",
                    "retry_settings.timeout"]
    assert all(r["why"] and any(ch.isdigit() for ch in r["why"]) for r in data["recommendations"])
    # 200 items in mini-batches of 4 on one worker: 50 x (4 x 50 ms): about 10 s, not 5.5 s
    assert 9.0 < data["predicted_wall_s"] < 12.0
    assert data["low_s"] <= data["predicted_wall_s"] <= data["high_s"]
    assert data["high_s"] / data["low_s"] < 1.3
    assert abs(advice.fitted.wall - data["measured_wall_s"]) < 0.5


def test_without_set_the_prediction_is_the_model_of_the_measured_run() -> None:
    advice = advise(profile(steady()), "score")
    assert advice.predicted.wall == advice.fitted.wall
    assert advice.cloud is not None and advice.cloud.vm.name == "Standard_DS3_v2"
    assert advice.notes


def test_a_local_what_if_skips_the_cloud_and_answers_at_once() -> None:
    measured = profile(steady(count=400))
    advise(measured, "score", overrides=["max_concurrency_per_instance=4"])  # imports
    began = time.perf_counter()
    advice = advise(measured, "score", overrides=["max_concurrency_per_instance=4"])
    took = time.perf_counter() - began
    assert advice.cloud is None and "cloud" not in advice.as_json()
    assert took < 1.0  # 0.3 s on a quiet machine; a loaded one gets slack
    asked = advise(measured, "score", overrides=["max_concurrency_per_instance=4"],
                   instance_type="Standard_D4s_v3")
    assert asked.cloud is not None


def test_settings_that_cannot_be_predicted_are_usage_errors() -> None:
    measured = profile(steady())
    for item, words in (("jobs.score.compute=big", "predicts only"),
                        ("mini_batch_size=lots", "expected a count"),
                        ("max_concurrency_per_instance=0", "at least 1"),
                        ("retry_settings.timeout=soon", "not a number")):
        with pytest.raises(AdviceUsageError, match=words):
            what_if(measured, "score", [item])
    keyed = profile(steady(), partition_keys=["k"])
    with pytest.raises(AdviceUsageError, match="partition_keys"):
        what_if(keyed, "score", ["mini_batch_size=2"])


def test_vm_sizes_and_assumptions() -> None:
    assert vm_size("standard_d8s_v3").vcpus == 8 and vm_size("DS3_v2").memory_gib == 14
    assert vm_size("Standard_F4s_v2").vcpus == 4 and vm_size("Standard_E4s_v3").memory_gib == 32
    with pytest.raises(UnknownVmSize, match="did you mean Standard_D4s_v3"):
        vm_size("Standard_D4s_v33")
    changed = Assumptions().changed(["node_start_s=0", "schedule_rate=100"])
    assert changed.node_start_s == 0 and changed.schedule_rate == 100
    with pytest.raises(ValueError, match="did you mean 'image_pull_s'"):
        Assumptions().changed(["image_pul_s=3"])
    with pytest.raises(ValueError, match="greater than 0"):
        Assumptions().changed(["core_speed=0"])


def test_instance_count_stops_where_more_nodes_stop_paying() -> None:
    big = steady(count=2000, run=0.5)
    advice = advise(profile(big), "score", instance_type="Standard_D2s_v3",
                    assume=Assumptions(node_start_s=0, image_pull_s=0))
    curve = dict(advice.cloud.curve)
    assert curve[1] > curve[2] > curve[4]
    nodes = next(r for r in advice.recommendations if r.key == "instance_count")
    assert nodes.value > 1 and "node-hours" in nodes.why


# -- memory -------------------------------------------------------------------------------
def test_a_what_if_past_80_percent_of_the_memory_is_flagged() -> None:
    """30 workers of 1.2 GB (36 GB) on a 23 GB machine: the prediction says so, in words and
    in the JSON; 2 of them fit."""
    measured = profile(steady(), worker_memory_mb=1200, memory_mb=23 * 1024)
    crowded = advise(measured, "score", overrides=["max_concurrency_per_instance=30"])
    data = crowded.as_json()["memory"]
    assert data["over_limit"] and data["workers"] == 30 and data["total_mb"] == 36000
    assert any(note.startswith("memory: 30 workers x 1200 MB = 35.2 GB, over 80% of this "
                               "machine's 23.0 GB") for note in crowded.notes), crowded.notes
    assert not advise(measured, "score").as_json()["memory"]["over_limit"]


def test_the_advice_never_proposes_workers_past_80_percent_of_the_vm_memory() -> None:
    """CPU-bound work would want 4 workers a node on a 4-vCPU VM; at 4 GB each, 80 % of the
    VM's 14 GiB holds 2: 2 is proposed, and a step set to 4 is told to come down."""
    rows = steady(count=400, run=0.2)
    measured = profile(rows, cpu=[0.2] * 400, worker_memory_mb=4096,
                       max_concurrency_per_instance=4)
    advice = advise(measured, "score", instance_type="Standard_DS3_v2")
    workers = next(r for r in advice.recommendations if r.key == "max_concurrency_per_instance")
    assert workers.value == 2 and "holds 2" in workers.why
    assert advice.cloud.memory.over  # the step's own 4 would not fit
    assert any(note.startswith("cloud memory:") for note in advice.notes)


# -- failures -----------------------------------------------------------------------------
def failing_profile(bad: set[int], *, count: int = 200, items: int = 4) -> object:
    """Mini-batches of ``items`` items of 0.5 s each on 2 workers; those in ``bad`` raise
    at their second item on each of their 3 attempts."""
    rows = []
    clock = [0.0, 0.0]
    for n in range(count):
        worker = n % 2
        tries = 3 if n in bad else 1
        for _ in range(tries):
            seconds = 0.75 if n in bad else 0.5 * items
            rows.append((f"mb{n}", f"0/process{worker:03d}", clock[worker], seconds, items,
                         seconds, "Failed" if n in bad else "Succeeded"))
            clock[worker] += seconds + 0.001
    return profile(rows, mini_batch_size=str(items), items_per_mini_batch=items)


def test_items_lost_to_failed_mini_batches_are_a_cost_of_a_larger_size() -> None:
    """One bad item in 800 loses 3 good items at mini_batch_size 4 and 15 at 16: the
    prediction names the items lost; the advice does not trade 12 more good items lost for
    a gain under 5 %, and says why."""
    measured = failing_profile({37})
    bigger = advise(measured, "score", overrides=["mini_batch_size=16"]).as_json()
    assert bigger["failures"] == {"mini_batches": 1, "items_lost": 16}
    same = advise(measured, "score").as_json()
    assert same["failures"] == {"mini_batches": 1, "items_lost": 4}
    advice = advise(measured, "score", instance_type="Standard_DS3_v2",
                    assume=Assumptions(node_start_s=0, image_pull_s=0))
    size = next(r for r in advice.recommendations if r.key == "mini_batch_size")
    assert size.value == 4, size.why
    assert "failed mini-batches lose 3 good items at this size" in size.why


def test_a_failing_attempt_is_not_charged_a_whole_mini_batch() -> None:
    """At 4x the size, the failing mini-batch's three attempts each stop at the bad item
    (the one before it in the same mini-batch and 1.5 items in): not 3 x 8 s of work."""
    measured = failing_profile({37})
    clean = failing_profile(set())
    with_failure = advise(measured, "score", overrides=["mini_batch_size=16"]).predicted.wall
    without = advise(clean, "score", overrides=["mini_batch_size=16"]).predicted.wall
    # the failing mini-batch of 16 holds the bad item at 37 x 4 = 148, 4.5 items in:
    # 3 x 2.25 s of attempts instead of one 8 s success: about +(6.75 - 8) / 2 workers
    assert with_failure - without < 1.0


# -- noise --------------------------------------------------------------------------------
def test_settings_change_only_for_a_gain_above_the_noise() -> None:
    """A size saving a fraction of a second out of minutes is not proposed: the step's own
    size stays, and the why gives both durations."""
    advice = advise(profile(steady(count=40, run=0.05, items=4), mini_batch_size="4",
                            items_per_mini_batch=4), "score",
                    instance_type="Standard_DS3_v2")
    size = next(r for r in advice.recommendations if r.key == "mini_batch_size")
    assert size.value == 4, size.why
    assert "within the measured noise" in size.why


def test_tiny_mini_batches_get_the_overhead_advice() -> None:
    rows = [(f"mb{n}", "0/process000", n * 0.002, 0.0015, 1, 0.0001, "Succeeded")
            for n in range(500)]
    tiny = profile(rows, workers=1, cores=1)
    words = overhead_advice(tiny)
    assert "per-mini-batch overhead dominates" in words and "raise mini_batch_size" in words
    lines = advice_lines(tiny, "job7")
    assert lines[0].startswith("Tuning (measured in this run; mlpipe job advise job7")
    assert lines[-1].startswith("  advice: per-mini-batch overhead dominates")
    assert not overhead_advice(profile(steady()))
