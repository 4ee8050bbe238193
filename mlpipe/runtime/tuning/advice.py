"""Advice for a parallel step: its run replayed at other settings here and in the cloud, and
the settings to use there, each with its reason in numbers.

:func:`advise` is ``mlpipe job advise``; the short advice of job_result.txt and the report is
:mod:`.brief`. The model is described in docs/advise.md.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mlpipe.errors import UsageError
from mlpipe.runtime.tuning.brief import ms, seconds, size_text
from mlpipe.runtime.tuning.cloud import DEFAULT_INSTANCE_TYPE, Assumptions, VmSize, vm_size
from mlpipe.runtime.tuning.interval import Estimate, estimate
from mlpipe.runtime.tuning.profile import StepProfile
from mlpipe.runtime.tuning.simulate import (
    Replay,
    Start,
    Unit,
    Workload,
    fit,
    replay,
    replay_here,
    slowdown,
)
from mlpipe.sizes import parse_mini_batch_size
from mlpipe.wording import plural

TARGET_MINI_BATCH_SECONDS = 10.0  # PRS's guide: "more than 10 seconds" per mini-batch
CLOSE = 0.02  # sizes whose cloud run is this close to the shortest count as good
MAX_REPLAYED = 5_000  # mini-batches replayed per candidate size and node count
TIMEOUT_MARGIN = 3.0
MIN_TIMEOUT = 30
MEMORY_SHARE = 0.8  # of a machine's (or a VM's) memory the workers may fill
MORE_LOST_GAIN = 0.05  # a size that loses more good items must save at least this share
MIN_GAIN = 0.02  # a setting changes for a gain above the measured noise, and at least this
CONTENDED = 0.03  # other processes' run-delay above this share of attempt time: said
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


@dataclass(frozen=True)
class Memory:
    """The workers' peak memory at some settings against what a machine may give them."""

    per_worker_mb: float  # the largest a worker reached when measured (0: not sampled)
    workers: int
    machine_mb: float

    @property
    def total_mb(self) -> float:
        return self.per_worker_mb * self.workers

    @property
    def limit_mb(self) -> float:
        return MEMORY_SHARE * self.machine_mb

    @property
    def over(self) -> bool:
        return self.per_worker_mb > 0 and self.machine_mb > 0 and self.total_mb > self.limit_mb

    def words(self, machine: str) -> str:
        return (f"{plural(self.workers, 'worker')} x {self.per_worker_mb:.0f} MB = "
                f"{self.total_mb / 1024:.1f} GB, over {MEMORY_SHARE:.0%} of {machine}'s "
                f"{self.machine_mb / 1024:.1f} GB: it would swap or be killed")

    def as_json(self) -> dict[str, Any]:
        return {"per_worker_mb": round(self.per_worker_mb, 1), "workers": self.workers,
                "total_mb": round(self.total_mb, 1), "limit_mb": round(self.limit_mb, 1),
                "over_limit": self.over}


@dataclass(frozen=True)
class Cloud:
    """The cloud prediction and recommendations (given when asked for)."""

    vm: VmSize
    instance_count: int
    duration: float
    low: float
    high: float
    terms: list[str]
    curve: list[tuple[int, float]]
    recommendations: list[Recommendation]
    assumptions: Assumptions
    memory: Memory

    def as_json(self) -> dict[str, Any]:
        return {"instance_type": self.vm.name, "instance_count": self.instance_count,
                "predicted_duration_s": round(self.duration, 1),
                "low_s": round(self.low, 1), "high_s": round(self.high, 1),
                "memory": self.memory.as_json()}


@dataclass
class StepAdvice:
    """What :func:`advise` found for one step."""

    step: str
    profile: StepProfile
    fitted: Estimate  # the measured settings replayed: how close the model is
    predicted: Estimate  # at ``settings``
    settings: Settings
    model: list[str]
    memory: Memory  # the workers at ``settings`` on this machine
    cloud: Cloud | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def recommendations(self) -> list[Recommendation]:
        return self.cloud.recommendations if self.cloud is not None else []

    def as_json(self) -> dict[str, Any]:
        """The ``-o json`` contract of ``mlpipe job advise`` for this step."""
        p, replayed = self.profile, self.predicted.replay
        data: dict[str, Any] = {
            "measured_wall_s": round(p.wall, 3),
            "quiet_wall_s": round(p.quiet_wall, 3),
            "replayed_wall_s": round(self.fitted.wall, 3),
            "predicted_wall_s": round(self.predicted.wall, 3),
            "low_s": round(self.predicted.low, 3),
            "high_s": round(self.predicted.high, 3),
            "settings": self.settings.as_json(),
            "memory": self.memory.as_json(),
            "failures": {"mini_batches": replayed.failed, "items_lost": replayed.lost},
            "profile": {"cpu_s": round(p.tally.cpu, 3), "cpu_share": round(p.cpu_share, 3),
                        "run_delay_share": round(p.run_delay_share, 3),
                        "contention": round(p.contention, 3),
                        "load": p.machine_load},
        }
        if self.predicted.why:
            data["interval_why"] = self.predicted.why
        if self.cloud is not None:
            data["cloud"] = self.cloud.as_json()
            data["recommendations"] = [{"key": r.key, "value": r.value, "why": r.why}
                                       for r in self.cloud.recommendations]
        return data


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


# -- here ----------------------------------------------------------------------------------
def local_units(workload: Workload, settings: Settings) -> list[Unit]:
    """The mini-batches of ``settings``: as measured, or the items re-cut."""
    if settings.items_per_mini_batch is None:
        return workload.units(max_retries=settings.max_retries, timeout=settings.timeout)
    return workload.recut(settings.items_per_mini_batch, max_retries=settings.max_retries,
                          timeout=settings.timeout)


def _here(workload: Workload, settings: Settings) -> Any:
    """The replay of units on this machine's cores with ``settings``' workers."""
    def run(units: Sequence[Unit], starts: Sequence[Start]) -> Replay:
        return replay_here(units, settings.workers, cores=workload.cores, starts=starts,
                           dispatch=workload.dispatch, warmup=workload.warmup,
                           listing=workload.listing, tail=workload.tail,
                           driver=workload.driver)
    return run


def predict_here(workload: Workload, settings: Settings) -> Replay:
    """The step's wall time on this machine, without other load, with ``settings``."""
    replay: Replay = _here(workload, settings)(local_units(workload, settings), workload.starts)
    return replay


def estimate_here(workload: Workload, profile: StepProfile, settings: Settings, *,
                  model_error: float = 0.0, others: Sequence[Workload] = ()) -> Estimate:
    """:func:`predict_here` with its 90 % interval (``others``: the workloads of the step's
    other runs)."""
    size = settings.items_per_mini_batch or max(round(workload.items_per_mini_batch), 1)
    elsewhere = [predict_here(other, replace(settings, items_per_mini_batch=size)).wall
                 for other in others]
    return estimate(workload, local_units(workload, settings), _here(workload, settings),
                    model_error=model_error, others=elsewhere, contention=profile.contention)


def advise(profile: StepProfile, step: str, *, overrides: Sequence[str] = (),
           instance_type: str | None = None, instance_count: int | None = None,
           assume: Assumptions | None = None, append_row_mb: float = 0.0,
           cloud: bool | None = None, others: Sequence[StepProfile] = ()) -> StepAdvice:
    """Predict ``step``'s wall time here with ``overrides``, with its interval; and, when
    ``cloud`` (by default: no ``overrides``, or a cloud option given), its cloud duration
    on ``instance_type`` and the settings to use there. ``others``: profiles of the step's
    other runs, whose predictions the interval spans."""
    workload = fit(profile)
    settings = what_if(profile, step, list(overrides))
    measured = measured_settings(profile)
    replayed = predict_here(workload, measured)
    quiet = profile.quiet_wall
    model_error = replayed.wall / quiet - 1 if quiet > 0 else 0.0
    fitted_others = [fit(other) for other in others if other.attempts is not None
                     and len(other.attempts)]
    predicted = estimate_here(workload, profile, settings, model_error=model_error,
                              others=fitted_others)
    fitted = predicted if not overrides else Estimate(replayed.wall, replayed.wall,
                                                      replayed.wall, replayed)
    machine_mb = float(profile.settings.get("memory_mb") or 0)
    memory = Memory(profile.memory_per_worker_mb, settings.workers, machine_mb)
    notes = _notes(profile, memory)
    advice = StepAdvice(step, profile, fitted, predicted, settings,
                        model_words(workload, profile, settings, predicted), memory,
                        notes=notes)
    wanted = cloud if cloud is not None else (not overrides or instance_type is not None
                                             or instance_count is not None
                                             or assume is not None)
    if wanted:
        advice.cloud = _cloud(workload, profile, settings, predicted, instance_type,
                              instance_count, assume or Assumptions(), append_row_mb, notes)
    return advice


def _notes(profile: StepProfile, memory: Memory) -> list[str]:
    notes = []
    if memory.over:
        notes.append(f"memory: {memory.words('this machine')}")
    if profile.contention > CONTENDED:
        load = profile.machine_load
        load_words = (f" (load {'-'.join(f'{value:g}' for value in load)} on "
                      f"{plural(int(profile.settings.get('cores') or 1), 'core')})"
                      if load else "")
        notes.append(f"the profile was taken under contention{load_words}: other processes "
                     f"kept its attempts waiting for a core {profile.contention:.0%} of their "
                     f"time; the predictions are for this machine without other load (the "
                     f"run measured {seconds(profile.wall)}, {seconds(profile.quiet_wall)} "
                     "less their run-delay)")
    return notes


def model_words(workload: Workload, profile: StepProfile, settings: Settings,
                predicted: Estimate) -> list[str]:
    """The terms of the local prediction, in words."""
    run, over, ran = workload.run, workload.overhead, predicted.replay
    cut = ("the mini-batches as measured" if settings.items_per_mini_batch is None else
           f"{plural(workload.items, 'item')} re-cut into mini-batches of "
           f"{settings.items_per_mini_batch}")
    fixed = (f"{ms(run.fixed)} per call (fitted over mini-batches of several sizes)"
             if run.fitted else "no fixed cost per call (every mini-batch had the same number "
             "of items, so it cannot be told apart: run() time is taken as proportional to "
             "items, PRS's rule)")
    cores = int(profile.settings.get("cores") or 1)
    starts = workload.starts
    cpu = statistics.median(s.cpu for s in starts) if starts else 0.0
    wait = statistics.median(s.wait for s in starts) if starts else 0.0
    lost = (f"; {plural(ran.failed, 'mini-batch')} fail for good, losing "
            f"{plural(ran.lost, 'item')}" if ran.failed else "")
    words = [
        f"{cut}: {plural(ran.mini_batches, 'mini-batch')}, {plural(ran.attempts, 'attempt')} "
        f"(a failing attempt costs the items before the one that raised){lost}",
        f"each attempt: dispatch {ms(workload.dispatch)} + load and result {ms(over.fixed)} + "
        f"{ms(over.per_item)} per item + run() {ms(run.per_item)} per item and {fixed}",
        f"{plural(settings.workers, 'worker')} ({settings.instance_count} x {settings.per_node}) "
        f"sharing the {plural(cores, 'core')}: attempts CPU-bound {workload.cpu_share:.0%} of "
        f"their own time (CPU / (elapsed - run-delay)), slowed when they outnumber the cores",
        f"a worker's start-up: {ms(cpu)} of CPU (interpreter, imports, init()) then "
        f"{ms(wait)} waiting, measured per worker; its first mini-batch "
        f"{ms(workload.warmup)} longer; the first attempt at {seconds(ran.lead_in)} (the "
        f"driver lists the first mini-batches in {ms(workload.listing)} once the workers are "
        f"up), the tail "
        f"{seconds(workload.tail)}; utilisation {ran.utilisation:.0%}",
        f"90% interval {seconds(predicted.low)}-{seconds(predicted.high)} (the run's own "
        "variation replayed: its workers' start-ups and its mini-batches' costs"
        + (f"; wide: {predicted.why}" if predicted.why else "") + ")",
    ]
    if workload.quiet_share < 0.97:
        words.append(f"times as on a quiet machine: the attempts' run-delay "
                     f"({1 - workload.quiet_share:.0%} of their elapsed) taken off")
    return words


# -- the cloud -------------------------------------------------------------------------------
def predict_cloud(workload: Workload, profile: StepProfile, settings: Settings, vm: VmSize,
                  instance_count: int, assume: Assumptions,
                  append_row_mb: float) -> tuple[float, list[str]]:
    """The cloud duration and its terms in words."""
    del profile  # the workload holds what the prediction needs
    per_node = settings.per_node
    workers = per_node * instance_count
    units = workload.recut(settings.items_per_mini_batch or max(
        round(workload.items_per_mini_batch), 1), max_retries=settings.max_retries,
        timeout=settings.timeout)
    share, speed = workload.cpu_share, assume.core_speed
    scale = 1.0 - share + share / speed  # a VM core ``speed`` times as fast: CPU shrinks
    there = slowdown(per_node, share / speed / scale, vm.vcpus) * scale
    ran = replay(units, workers, dispatch=assume.schedule_s, slowdown=there,
                 rate=assume.schedule_rate, warmup=workload.warmup / speed)
    starts = workload.starts
    cpu = statistics.median(s.cpu for s in starts) if starts else 0.0
    wait = statistics.median(s.wait for s in starts) if starts else 0.0
    startup = cpu / speed * max(1.0, per_node / vm.vcpus) + wait
    concat = append_row_mb / assume.concat_mb_per_s
    total = assume.node_start_s + assume.image_pull_s + startup + ran.makespan + concat
    terms = [f"node start {seconds(assume.node_start_s)}", f"image pull "
             f"{seconds(assume.image_pull_s)}", f"workers' start-up {seconds(startup)} "
             f"({plural(per_node, 'process', 'processes')} starting on {vm.vcpus} vCPUs)",
             f"{plural(ran.mini_batches, 'mini-batch')} on {plural(workers, 'worker')} "
             f"{seconds(ran.makespan)} (utilisation {ran.utilisation:.0%})",
             f"append_row concatenation {seconds(concat)}"]
    if ran.failed:
        terms.append(f"{plural(ran.failed, 'mini-batch')} fail for good, losing "
                     f"{plural(ran.lost, 'item')}")
    return total, terms


def _cloud(workload: Workload, profile: StepProfile, settings: Settings, here: Estimate,
           instance_type: str | None, instance_count: int | None, assume: Assumptions,
           append_row_mb: float, notes: list[str]) -> Cloud:
    vm = vm_size(instance_type or DEFAULT_INSTANCE_TYPE)
    if not instance_type:
        notes.append(f"instance type {vm.name} (Azure ML's default; choose with "
                     "--instance-type)")
    count = instance_count or settings.instance_count
    duration, terms = predict_cloud(workload, profile, settings, vm, count, assume,
                                    append_row_mb)
    fixed = assume.node_start_s + assume.image_pull_s
    spread = here.low / here.wall if here.wall > 0 else 1.0, \
        here.high / here.wall if here.wall > 0 else 1.0
    low, high = (fixed + (duration - fixed) * share for share in spread)
    memory = Memory(profile.memory_per_worker_mb, settings.per_node, vm.memory_mb)
    if memory.over:
        notes.append(f"cloud memory: {memory.words(vm.name)}")
    noise = max((here.high - here.low) / (2 * here.wall) if here.wall > 0 else 0.0, MIN_GAIN)
    recommendations, curve = recommend(workload, profile, settings, vm, count, assume,
                                       append_row_mb, noise=noise)
    return Cloud(vm, count, duration, low, high, terms, curve, recommendations, assume, memory)


def recommend(workload: Workload, profile: StepProfile, settings: Settings, vm: VmSize,
              count: int, assume: Assumptions, append_row_mb: float, *,
              noise: float = MIN_GAIN) -> tuple[list[Recommendation], list[tuple[int, float]]]:
    """max_concurrency_per_instance, mini_batch_size, instance_count and
    retry_settings.timeout for ``vm``, each with its reason, and the duration vs nodes curve
    (each node count with the mini_batch_size that suits it). A setting changes from the
    step's only for a gain above ``noise`` (a share of the duration), never to one whose
    workers' memory passes 80 % of the VM's."""
    per_node, why = _concurrency(workload, profile, settings, vm, count, assume,
                                 append_row_mb, noise)
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
    items, size_value, why = _mini_batch_size(workload, profile, chosen, tried,
                                              per_node * nodes, assume, noise)
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


def _concurrency(workload: Workload, profile: StepProfile, settings: Settings, vm: VmSize,
                 count: int, assume: Assumptions, append_row_mb: float,
                 noise: float) -> tuple[int, str]:
    """The workers per node that keep the VM's vCPUs busy and fit 80 % of its memory; the
    step's own when the change would gain less than ``noise``."""
    share = workload.cpu_share
    by_cpu = max(1, math.floor(vm.vcpus / max(share, 0.25)))
    memory = profile.memory_per_worker_mb
    by_memory = math.floor(MEMORY_SHARE * vm.memory_mb / memory) if memory > 0 else None
    value = max(min(by_cpu, by_memory) if by_memory is not None else by_cpu, 1)
    cpu_words = (f"attempts are CPU-bound {share:.0%} of their own time (CPU / (elapsed - "
                 f"run-delay)), so {plural(by_cpu, 'worker')} keep the {vm.vcpus} vCPUs of "
                 f"{vm.name} busy")
    memory_words = (f"a worker peaks at {memory:.0f} MB, so {MEMORY_SHARE:.0%} of its "
                    f"{vm.memory_gib:g} GiB holds {by_memory}" if by_memory is not None else
                    "memory per worker was not sampled")
    words = f"{cpu_words}; {memory_words}"
    current = settings.per_node
    if value == current or (by_memory is not None and current > by_memory):
        return value, words
    size = settings.items_per_mini_batch or max(round(workload.items_per_mini_batch), 1)
    at = replace(settings, items_per_mini_batch=size)
    now = predict_cloud(workload, profile, at, vm, count, assume, append_row_mb)[0]
    then = predict_cloud(workload, profile, replace(at, per_node=value), vm, count, assume,
                         append_row_mb)[0]
    gain = 1 - then / now if now > 0 else 0.0
    if gain > noise:
        return value, f"{words}: {seconds(then)} instead of {seconds(now)} with {current}"
    return current, (f"{words}; but {value} would take {seconds(then)} against "
                     f"{seconds(now)} with the step's {current}: {gain:.1%} less, within "
                     f"the measured noise ({noise:.0%}), so {current} stays")


def _mini_batch_size(workload: Workload, profile: StepProfile, settings: Settings,
                     tried: dict[int, float], workers: int, assume: Assumptions,
                     noise: float) -> tuple[int, Any, str]:
    """Of the sizes whose cloud run is within ``CLOSE`` of the shortest, the one nearest
    PRS's 10 s mini-batch; the step's own size unless the change gains more than ``noise``,
    and never a size losing more good items to failed mini-batches for less than
    ``MORE_LOST_GAIN`` of the time."""
    current = max(round(workload.items_per_mini_batch), 1)
    if profile.settings.get("partition_keys"):
        return current, None, ""
    run, over = workload.run, workload.overhead
    per_item = run.per_item + over.per_item
    fixed = run.fixed + over.fixed + assume.schedule_s
    fixed_part = assume.node_start_s + assume.image_pull_s
    lost = {size: _good_items_lost(workload, settings, size) for size in tried}
    best = min(tried.values()) - fixed_part
    close = [size for size, duration in tried.items()
             if duration - fixed_part <= best * (1 + CLOSE) + 1e-9 and size != current
             or duration - fixed_part <= best + 1e-9]
    items = min(close, key=lambda size: abs(math.log(max(fixed + per_item * size, 1e-9) /
                                                     TARGET_MINI_BATCH_SECONDS)))
    held = ""

    def gain(size: int) -> float:
        return 1 - tried[size] / tried[current] if tried[current] > 0 else 0.0

    if lost[items] > lost[current] and gain(items) < MORE_LOST_GAIN:
        keeping = [size for size in tried if lost[size] <= lost[current]]
        better = min(keeping, key=lambda size: tried[size])
        held = (f"; {items} items would lose {plural(lost[items], 'good item')} to failed "
                f"mini-batches (now {lost[current]}) for {gain(items):.1%} less time, under "
                f"{MORE_LOST_GAIN:.0%}")
        items = better
    if items != current and gain(items) <= noise:
        held += (f"; {items} items would take {seconds(tried[items])} against "
                 f"{seconds(tried[current])}: {gain(items):.1%} less, within the measured "
                 f"noise ({noise:.0%}), so the step's {current} stays")
        items = current
    seconds_each = fixed + per_item * items
    share = fixed / seconds_each if seconds_each > 0 else 0.0
    why = (f"an item costs {ms(per_item)} and a mini-batch {ms(fixed)} fixed (PRS "
           f"{ms(assume.schedule_s)}, here {ms(run.fixed + over.fixed)}): {items} items make a "
           f"{seconds(seconds_each)} mini-batch, overhead {share:.1%}; the cloud run takes "
           f"{seconds(tried[items])} (with {plural(current, 'item')}: {seconds(tried[current])})")
    if workload.piece_failures:
        why += (f"; failed mini-batches lose {plural(lost[items], 'good item')} at this size "
                f"({lost[current]} at {current})")
    why += held
    if seconds_each < 0.9 * TARGET_MINI_BATCH_SECONDS and items < workload.items:
        why += (f"; larger mini-batches toward PRS's {TARGET_MINI_BATCH_SECONDS:g} s would "
                f"leave some of the {workers} workers idle at the end")
    value: Any = items
    if profile.tally.tabular and profile.bytes_per_item > 0:
        value = size_text(items * profile.bytes_per_item)
        why += f" (about {value} at {profile.bytes_per_item:.0f} bytes per row)"
    return items, value, why


def _good_items_lost(workload: Workload, settings: Settings, size: int) -> int:
    """The items other than the bad ones that mini-batches of ``size`` failing for good lose
    (each measured mini-batch that failed for good holds one bad item)."""
    if not workload.piece_failures or not workload.piece_final.any():
        return 0
    units = workload.recut(size, max_retries=0, timeout=settings.timeout)
    lost = sum(unit.lost for unit in units)
    return max(lost - int(workload.piece_final.sum()), 0)


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


__all__ = ["AdviceUsageError", "Cloud", "Memory", "Recommendation", "Settings", "StepAdvice",
           "advise", "estimate_here", "local_units", "measured_settings", "predict_cloud",
           "predict_here", "recommend", "what_if"]
