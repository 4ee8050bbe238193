"""What ``mlpipe job advise`` says: settings parsed from --set, VM sizes, assumptions, the
JSON contract, recommendations with their reasons, and job_result.txt's short block."""

from __future__ import annotations

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
    assert set(data) == {"measured_wall_s", "predicted_wall_s", "settings", "cloud",
                         "recommendations"}
    assert set(data["cloud"]) == {"instance_type", "instance_count", "predicted_duration_s"}
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
    assert abs(advice.fitted_wall - data["measured_wall_s"]) < 0.5


def test_without_set_the_prediction_is_the_model_of_the_measured_run() -> None:
    advice = advise(profile(steady()), "score")
    assert advice.predicted_wall == advice.fitted_wall
    assert advice.vm.name == "Standard_DS3_v2" and advice.notes


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
    curve = dict(advice.curve)
    assert curve[1] > curve[2] > curve[4]
    nodes = next(r for r in advice.recommendations if r.key == "instance_count")
    assert nodes.value > 1 and "node-hours" in nodes.why


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
