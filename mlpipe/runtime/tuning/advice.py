"""Advice for a parallel step: its run replayed at other settings here and in the cloud, and
the settings to use there, each with its reason in numbers.

:func:`advise` is ``mlpipe job advise``; the short advice of job_result.txt and the report is
:mod:`.brief`. The model is described in docs/advise.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mlpipe.errors import UsageError
from mlpipe.runtime.tuning.brief import ms, seconds, size_text
from mlpipe.runtime.tuning.cloud import DEFAULT_INSTANCE_TYPE, Assumptions, VmSize, vm_size
from mlpipe.runtime.tuning.profile import StepProfile
from mlpipe.runtime.tuning.simulate import (
    Replay,
    Workload,
    fit,
    replay,
    startup_lead_in,
    stretch,
)
from mlpipe.sizes import parse_mini_batch_size
from mlpipe.wording import plural

TARGET_MINI_BATCH_SECONDS = 10.0  # PRS's guide: "more than 10 seconds" per mini-batch
CLOSE = 0.02  # sizes whose cloud run is this close to the shortest count as good
MAX_REPLAYED = 5_000  # mini-batches replayed per candidate size and node count
TIMEOUT_MARGIN = 3.0
MIN_TIMEOUT = 30
MEMORY_SHARE = 0.8  # of a VM's memory the workers may fill
NODE_COUNTS = (1, 2, 4, 8, 16, 32, 64, 100)  # AmlCompute: up to 100 nodes (PRS's guide)
PAYS = 0.8  # twice the nodes pay while they cut the duration below this share
SETTING_KEYS = {
    "mini_batch_size": "mini_batch_size",
    "max_concurrency_per_instance": "per_node",
    "resources.instance_count": "instance_count",
    "instance_count": "instance_count",
    "retry_settings.max_retries": "max_retries",
    "retry_settings.timeout": "timeout",
}


class AdviceUsageError(UsageError):
    """A ``--set`` the advisor cannot predict for."""


# -- job advise ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Settings:
    """The settings a prediction is for."""

    items_per_mini_batch: int | None  # None: the mini-batches as measured
    mini_batch_size: str | None
    per_node: int
    instance_count: int
    max_retries: int
    timeout: float

    @property
    def workers(self) -> int:
        return self.per_node * self.instance_count

    def as_json(self) -> dict[str, Any]:
        return {"mini_batch_size": self.mini_batch_size,
                "max_concurrency_per_instance": self.per_node,
                "instance_count": self.instance_count,
                "retry_settings.max_retries": self.max_retries,
                "retry_settings.timeout": self.timeout}


@dataclass(frozen=True)
class Recommendation:
    key: str
    value: Any
    why: str


@dataclass
class StepAdvice:
    """What :func:`advise` found for one step."""

    step: str
    measured_wall: float
    predicted_wall: float
    fitted_wall: float  # the measured settings replayed: how close the model is
    settings: Settings
    model: list[str]
    vm: VmSize
    cloud_instance_count: int
    cloud_duration: float
    cloud_terms: list[str]
    curve: list[tuple[int, float]]
    recommendations: list[Recommendation]
    assumptions: Assumptions
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The ``-o json`` contract of ``mlpipe job advise`` for this step."""
        return {"measured_wall_s": round(self.measured_wall, 3),
                "predicted_wall_s": round(self.predicted_wall, 3),
                "settings": self.settings.as_json(),
                "cloud": {"instance_type": self.vm.name,
                          "instance_count": self.cloud_instance_count,
                          "predicted_duration_s": round(self.cloud_duration, 1)},
                "recommendations": [{"key": r.key, "value": r.value, "why": r.why}
                                    for r in self.recommendations]}


def measured_settings(profile: StepProfile) -> Settings:
    s = profile.settings
    return Settings(None, s.get("mini_batch_size"),
                    int(s.get("max_concurrency_per_instance") or profile.workers),
                    int(s.get("instance_count") or 1), int(s.get("max_retries") or 0),
                    float(s.get("timeout") or 60))


def what_if(profile: StepProfile, step: str, items: list[str]) -> Settings:
    """The measured settings with ``--set`` ``items`` (``jobs.<step>.<key>=<value>`` or
    ``<key>=<value>``) applied; :class:`AdviceUsageError` for what cannot be predicted."""
    settings = measured_settings(profile)
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        key = key.removeprefix(f"jobs.{step}.")
        name = SETTING_KEYS.get(key)
        if not sep or name is None:
            raise AdviceUsageError(
                f"--set {item!r}: the advisor predicts only "
                f"{', '.join(f'jobs.{step}.{k}' for k in SETTING_KEYS if k != 'instance_count')}")
        if name == "mini_batch_size":
            settings = replace(settings, **_size(profile, item, value.strip()))
            continue
        try:
            number = float(value) if name == "timeout" else int(value)
        except ValueError:
            raise AdviceUsageError(f"--set {item!r}: {value!r} is not a number") from None
        if number < (0 if name == "max_retries" else 1):
            raise AdviceUsageError(f"--set {item!r}: must be at least "
                                   f"{0 if name == 'max_retries' else 1}")
        changes: dict[str, Any] = {name: number}
        settings = replace(settings, **changes)
    return settings


def _size(profile: StepProfile, item: str, text: str) -> dict[str, Any]:
    if profile.settings.get("partition_keys"):
        raise AdviceUsageError(f"--set {item!r}: the step divides its input by partition_keys, "
                               "which wins over mini_batch_size")
    size = parse_mini_batch_size(text)
    if size is None or size.bytes < 1:
        raise AdviceUsageError(f"--set {item!r}: expected a count such as 20 or a size such "
                               "as 10kb")
    tabular = profile.tally.tabular  # a plain number is bytes for a tabular input
    if size.count is not None and not tabular:
        items = size.count
    else:
        per_item = profile.bytes_per_item
        if per_item <= 0:
            raise AdviceUsageError(f"--set {item!r}: this run recorded no bytes per item to cut "
                                   "a size in bytes by")
        items = max(1, round(size.bytes / per_item))
    return {"items_per_mini_batch": items, "mini_batch_size": text}


def predict_here(workload: Workload, profile: StepProfile, settings: Settings) -> Replay:
    """The step's wall time on this machine with ``settings``."""
    cores = int(profile.settings.get("cores") or 1)
    units = workload.units(settings.timeout) if settings.items_per_mini_batch is None else \
        workload.recut(settings.items_per_mini_batch, max_retries=settings.max_retries,
                       timeout=settings.timeout)
    measured = stretch(workload.workers, workload.cpu_share, cores)
    wanted = stretch(settings.workers, workload.cpu_share, cores)
    return replay(units, settings.workers, dispatch=workload.dispatch,
                  lead_in=startup_lead_in(workload, settings.workers, cores),
                  tail=workload.tail, stretch=wanted / measured, warmup=workload.warmup)


def predict_cloud(workload: Workload, profile: StepProfile, settings: Settings, vm: VmSize,
                  instance_count: int, assume: Assumptions,
                  append_row_mb: float) -> tuple[float, list[str]]:
    """The cloud duration and its terms in words."""
    per_node = settings.per_node
    workers = per_node * instance_count
    units = workload.recut(settings.items_per_mini_batch or max(
        round(workload.items_per_mini_batch), 1), max_retries=settings.max_retries,
        timeout=settings.timeout)
    cores = int(profile.settings.get("cores") or 1)
    measured = stretch(workload.workers, workload.cpu_share, cores)
    there = stretch(per_node, workload.cpu_share, vm.vcpus) / assume.core_speed
    ran = replay(units, workers, dispatch=assume.schedule_s, stretch=there / measured,
                 rate=assume.schedule_rate, warmup=workload.warmup)
    start_rounds = math.ceil(per_node / vm.vcpus)
    startup = start_rounds * workload.startup
    concat = append_row_mb / assume.concat_mb_per_s
    total = assume.node_start_s + assume.image_pull_s + startup + ran.makespan + concat
    terms = [f"node start {seconds(assume.node_start_s)}", f"image pull "
             f"{seconds(assume.image_pull_s)}", f"workers' start-up {seconds(startup)}",
             f"{plural(ran.mini_batches, 'mini-batch')} on {plural(workers, 'worker')} "
             f"{seconds(ran.makespan)} (utilisation {ran.utilisation:.0%})",
             f"append_row concatenation {seconds(concat)}"]
    return total, terms


def advise(profile: StepProfile, step: str, *, overrides: Sequence[str] = (),
           instance_type: str | None = None, instance_count: int | None = None,
           assume: Assumptions | None = None, append_row_mb: float = 0.0) -> StepAdvice:
    """Predict ``step``'s wall time here with ``overrides`` and its cloud duration on
    ``instance_type``, and recommend its settings there."""
    assume = assume or Assumptions()
    workload = fit(profile)
    settings = what_if(profile, step, list(overrides))
    fitted = predict_here(workload, profile, measured_settings(profile))
    predicted = predict_here(workload, profile, settings) if overrides else fitted
    vm = vm_size(instance_type or DEFAULT_INSTANCE_TYPE)
    notes = [] if instance_type else [f"instance type {vm.name} (Azure ML's default; choose "
                                      "with --instance-type)"]
    count = instance_count or settings.instance_count
    duration, terms = predict_cloud(workload, profile, settings, vm, count, assume,
                                    append_row_mb)
    recommendations, curve = recommend(workload, profile, settings, vm, count, assume,
                                       append_row_mb)
    return StepAdvice(step, profile.wall, predicted.wall, fitted.wall, settings,
                      model_words(workload, profile, settings, predicted), vm, count, duration,
                      terms, curve, recommendations, assume, notes)


def model_words(workload: Workload, profile: StepProfile, settings: Settings,
                predicted: Replay) -> list[str]:
    """The terms of the local prediction, in words."""
    run, over = workload.run, workload.overhead
    cut = ("the mini-batches as measured" if settings.items_per_mini_batch is None else
           f"{plural(workload.items, 'item')} re-cut into mini-batches of "
           f"{settings.items_per_mini_batch}")
    fixed = (f"{ms(run.fixed)} per call (fitted over mini-batches of several sizes)"
             if run.fitted else "no fixed cost per call (every mini-batch had the same number "
             "of items, so it cannot be told apart: run() time is taken as proportional to "
             "items, PRS's rule)")
    return [
        f"{cut}: {plural(predicted.mini_batches, 'mini-batch')}, "
        f"{plural(predicted.attempts, 'attempt')} (retries replayed where items failed)",
        f"each attempt: dispatch {ms(workload.dispatch)} + load and result {ms(over.fixed)} + "
        f"{ms(over.per_item)} per item + run() {ms(run.per_item)} per item and {fixed}",
        f"replayed on {plural(settings.workers, 'worker')} ({settings.instance_count} x "
        f"{settings.per_node}); CPU-bound share {workload.cpu_share:.0%} stretched when workers "
        f"outnumber the {plural(int(profile.settings.get('cores') or 1), 'core')}",
        f"a worker's first mini-batch {seconds(workload.warmup)} longer (imports, caches); plus "
        f"the measured lead-in {seconds(workload.lead_in)} (workers starting: "
        f"{seconds(workload.startup)} each) and tail {seconds(workload.tail)}; utilisation "
        f"{predicted.utilisation:.0%}",
    ]


def recommend(workload: Workload, profile: StepProfile, settings: Settings, vm: VmSize,
              count: int, assume: Assumptions, append_row_mb: float
              ) -> tuple[list[Recommendation], list[tuple[int, float]]]:
    """max_concurrency_per_instance, mini_batch_size, instance_count and
    retry_settings.timeout for ``vm``, each with its reason, and the duration vs nodes curve
    (each node count with the mini_batch_size that suits it)."""
    per_node, why = _concurrency(profile, vm)
    out = [Recommendation("max_concurrency_per_instance", per_node, why)]
    chosen = replace(settings, per_node=per_node)
    grid = _size_grid(workload, profile, chosen, vm, assume, append_row_mb)
    curve = [(nodes, min(durations.values())) for nodes, durations in grid.items()]
    nodes, nodes_why = _instance_count(curve)
    tried = dict(grid[nodes])
    current = max(round(workload.items_per_mini_batch), 1)
    if current not in tried:  # too many mini-batches to replay at every node count
        tried[current] = predict_cloud(workload, profile, replace(
            chosen, items_per_mini_batch=current), vm, nodes, assume, append_row_mb)[0]
    items, size_value, why = _mini_batch_size(workload, profile, tried, per_node * nodes,
                                              assume)
    if size_value is not None:
        out.append(Recommendation("mini_batch_size", size_value, why))
    out.append(Recommendation("instance_count", nodes, nodes_why))
    timeout, why = _timeout(workload, profile, items)
    out.append(Recommendation("retry_settings.timeout", timeout, why))
    return out, curve


def _size_grid(workload: Workload, profile: StepProfile, settings: Settings, vm: VmSize,
               assume: Assumptions, append_row_mb: float) -> dict[int, dict[int, float]]:
    """The cloud duration for each node count and candidate mini_batch_size (doublings,
    PRS's 10 s mini-batch and the measured size)."""
    current = max(round(workload.items_per_mini_batch), 1)
    total = max(workload.items, 1)
    sizes = {current} if total / current <= MAX_REPLAYED else set()
    if not profile.settings.get("partition_keys"):
        run, over = workload.run, workload.overhead
        per_item = run.per_item + over.per_item
        fixed = run.fixed + over.fixed + assume.schedule_s
        target = (math.ceil(max(TARGET_MINI_BATCH_SECONDS - fixed, 0.0) / per_item)
                  if per_item > 0 else current)
        sizes |= {min(max(size, 1), total) for size in
                  (target, *(2 ** n for n in range(int(math.log2(total)) + 1)))}
        sizes = {size for size in sizes if total / size <= MAX_REPLAYED} or {total}
    return {nodes: {size: predict_cloud(workload, profile,
                                        replace(settings, items_per_mini_batch=size), vm, nodes,
                                        assume, append_row_mb)[0] for size in sorted(sizes)}
            for nodes in NODE_COUNTS}


def _concurrency(profile: StepProfile, vm: VmSize) -> tuple[int, str]:
    share = profile.cpu_share
    by_cpu = max(1, math.floor(vm.vcpus / max(share, 0.25)))
    memory = profile.memory_per_worker_mb
    by_memory = math.floor(MEMORY_SHARE * vm.memory_mb / memory) if memory > 0 else None
    value = min(by_cpu, by_memory) if by_memory is not None else by_cpu
    value = max(value, 1)
    cpu_words = (f"attempts are CPU-bound {share:.0%} of their time, so "
                 f"{plural(by_cpu, 'worker')} keep the {vm.vcpus} vCPUs of {vm.name} busy")
    memory_words = (f"a worker peaks at {memory:.0f} MB, so {MEMORY_SHARE:.0%} of its "
                    f"{vm.memory_gib:g} GiB holds {by_memory}" if by_memory is not None else
                    "memory per worker was not sampled")
    return value, f"{cpu_words}; {memory_words}"


def _mini_batch_size(workload: Workload, profile: StepProfile, tried: dict[int, float],
                     workers: int, assume: Assumptions) -> tuple[int, Any, str]:
    """Of the sizes whose cloud run is within ``CLOSE`` of the shortest, the one nearest
    PRS's 10 s mini-batch."""
    current = max(round(workload.items_per_mini_batch), 1)
    if profile.settings.get("partition_keys"):
        return current, None, ""
    run, over = workload.run, workload.overhead
    per_item = run.per_item + over.per_item
    fixed = run.fixed + over.fixed + assume.schedule_s
    fixed_part = assume.node_start_s + assume.image_pull_s
    best = min(tried.values()) - fixed_part
    close = [size for size, duration in tried.items()
             if duration - fixed_part <= best * (1 + CLOSE) + 1e-9 and size != current
             or duration - fixed_part <= best + 1e-9]
    items = min(close, key=lambda size: abs(math.log(max(fixed + per_item * size, 1e-9) /
                                                     TARGET_MINI_BATCH_SECONDS)))
    seconds_each = fixed + per_item * items
    share = fixed / seconds_each if seconds_each > 0 else 0.0
    why = (f"an item costs {ms(per_item)} and a mini-batch {ms(fixed)} fixed (PRS "
           f"{ms(assume.schedule_s)}, here {ms(run.fixed + over.fixed)}): {items} items make a "
           f"{seconds(seconds_each)} mini-batch, overhead {share:.1%}; the cloud run takes "
           f"{seconds(tried[items])} (with {plural(current, 'item')}: {seconds(tried[current])})")
    if seconds_each < 0.9 * TARGET_MINI_BATCH_SECONDS and items < workload.items:
        why += (f"; larger mini-batches toward PRS's {TARGET_MINI_BATCH_SECONDS:g} s would "
                f"leave some of the {workers} workers idle at the end")
    value: Any = items
    if profile.tally.tabular and profile.bytes_per_item > 0:
        value = size_text(items * profile.bytes_per_item)
        why += f" (about {value} at {profile.bytes_per_item:.0f} bytes per row)"
    return items, value, why


def _instance_count(curve: list[tuple[int, float]]) -> tuple[int, str]:
    for (nodes, duration), (more, faster) in zip(curve, curve[1:], strict=False):
        if faster > PAYS * duration:
            saved = 1 - faster / duration if duration > 0 else 0.0
            return nodes, (f"{plural(nodes, 'node')}: {seconds(duration)}; {more} would take "
                           f"{seconds(faster)} ({saved:.0%} less for {more / nodes:g}x the "
                           "node-hours)")
    nodes, duration = curve[-1]
    return nodes, f"{plural(nodes, 'node')}: {seconds(duration)}, still paying at the limit"


def _timeout(workload: Workload, profile: StepProfile, items: int) -> tuple[int, str]:
    rows = profile.attempts.rows() if profile.attempts is not None else []
    slowest = [(a.run_seconds, a.total) for a in rows if a.ok and a.total]
    if slowest:
        run, n = max(slowest, key=lambda pair: pair[0] / pair[1])
    else:
        run, n = profile.tally.max_run_ok, max(profile.tally.max_run_ok_items, 1)
    per_item = max(run - workload.run.fixed, 0.0) / max(n, 1)
    expected = workload.run.fixed + per_item * items
    value = max(MIN_TIMEOUT, int(math.ceil(TIMEOUT_MARGIN * expected / 10.0) * 10))
    return value, (f"the slowest run() took {seconds(run)} for {plural(n, 'item')}; at "
                   f"{plural(items, 'item')} that is {seconds(expected)}, x{TIMEOUT_MARGIN:g} "
                   f"margin, at least {MIN_TIMEOUT} s")


__all__ = ["AdviceUsageError", "Recommendation", "Settings", "StepAdvice", "advise",
           "measured_settings", "predict_cloud", "predict_here", "recommend", "what_if"]
