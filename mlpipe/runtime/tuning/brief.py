"""The short advice of a step's run, drawn from its measured profile alone: the tuning block
of job_result.txt and the overhead advice of report.html (``mlpipe job advise`` predicts
further, :mod:`mlpipe.runtime.tuning.advice`), and the settings a run records in runs.json.
Light: no numpy, so the driver's reports can use it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import psutil

from mlpipe.cores import core_count
from mlpipe.plan import ParallelStep
from mlpipe.runtime.records import WorkerInfo
from mlpipe.runtime.tuning.profile import StepProfile
from mlpipe.wording import plural

OVERHEAD_ADVICE_SHARE = 0.5
WAITED_SHARE = 0.05  # attempts' run-delay from this share of their time is said


def job_name(step: ParallelStep) -> str:
    """The job a step's folder belongs to (``<runs>/<job>/<step>``)."""
    return Path(step.step_dir).parent.name


def run_settings(step: ParallelStep, workers: list[WorkerInfo]) -> dict[str, Any]:
    """The settings a run of ``step`` used, as ``runs.json`` keeps them."""
    nodes = max(len({w.node for w in workers}), 1)
    size = step.mini_batch_size
    return {
        "mini_batch_size": size.text if size is not None else None,
        "items_per_mini_batch": size.count if size is not None else None,
        "bytes_per_mini_batch": size.bytes if size is not None and size.count is None else None,
        "partition_keys": list(step.partition_keys or ()),
        "max_concurrency_per_instance": max(len(workers) // nodes, 1),
        "instance_count": step.instance_count,
        "workers": len(workers),
        "max_retries": step.retry.max_retries,
        "timeout": step.retry.timeout,
        "cores": core_count(),
        "memory_mb": round(psutil.virtual_memory().total / 2**20),
    }



# -- the short block of job_result.txt -----------------------------------------------------
def advice_lines(profile: StepProfile | None, job: str) -> list[str]:
    """Where a run's time went per mini-batch, and the one advice that matters most."""
    if profile is None or not profile.tally.attempts:
        return []
    p = profile
    lines = [f"Tuning (measured in this run; mlpipe job advise {job} predicts other settings "
             "and the cloud run):",
             f"  per mini-batch: {ms(p.overhead_per_attempt)} overhead (dispatch "
             f"{ms(p.dispatch_per_attempt)}, load {ms(p.load_per_attempt)}, result "
             f"{ms(p.result_per_attempt)}) and {ms(p.run_per_attempt)} in run(): overhead is "
             f"{p.overhead_share:.0%} of worker time",
             f"  run(): {ms(p.time_per_item)} per item; CPU-bound {p.cpu_share:.0%} of attempt "
             f"time (less its waiting for a core); worker start-up "
             f"{seconds(p.startup_per_worker)}; utilisation {p.utilisation:.0%}"]
    if p.run_delay_share >= WAITED_SHARE:
        lines.append(f"  attempts waited for a core {p.run_delay_share:.0%} of their time (more "
                     "workers than cores, or other processes: mlpipe job advise takes it off)")
    overhead = overhead_advice(p)
    if overhead:
        lines.append(f"  advice: {overhead}")
    return lines


def overhead_advice(profile: StepProfile) -> str:
    """The advice of a step whose per-mini-batch overhead dominates ("" when it does not)."""
    p = profile
    if p.overhead_share < OVERHEAD_ADVICE_SHARE or p.settings.get("partition_keys"):
        return ""
    current = max(p.items_per_attempt, 1.0)
    per_item = p.time_per_item
    # items per mini-batch for run() to be 90 % of a mini-batch's time
    wanted = math.ceil(9 * p.overhead_per_attempt / per_item) if per_item > 0 else 0
    if wanted <= current:
        return ""
    size = (f" ({size_text(wanted * p.bytes_per_item)} at {p.bytes_per_item:.0f} bytes per row)"
            if p.tally.tabular and p.bytes_per_item > 0 else "")
    return (f"per-mini-batch overhead dominates ({p.overhead_share:.0%} of worker time): raise "
            f"mini_batch_size ({plural(round(current), 'item')} now; about {wanted} items"
            f"{size} keep the overhead under 10 %)")


# -- words --------------------------------------------------------------------------------
def ms(seconds_value: float) -> str:
    """``1.23 ms``, ``45 µs``, ``2.50 s``."""
    if seconds_value >= 1:
        return f"{seconds_value:.2f} s"
    if seconds_value >= 1e-3:
        return f"{seconds_value * 1e3:.2f} ms"
    return f"{seconds_value * 1e6:.0f} µs"


def seconds(value: float) -> str:
    """``0.42 s``, ``12.3 s``, ``4m05s``, ``1h02m``."""
    if value < 10:
        return f"{value:.2f} s"
    if value < 60:
        return f"{value:.1f} s"
    minutes, secs = divmod(int(round(value)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def size_text(value: float) -> str:
    """Bytes as a ``mini_batch_size``: ``512``, ``64kb``, ``3mb``."""
    for unit, scale in (("gb", 1024**3), ("mb", 1024**2), ("kb", 1024)):
        if value >= scale:
            return f"{max(round(value / scale), 1)}{unit}"
    return str(max(round(value), 1))


__all__ = ["advice_lines", "job_name", "ms", "overhead_advice", "run_settings", "seconds",
           "size_text"]
