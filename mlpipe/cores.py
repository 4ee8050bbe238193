"""The one core count of mlpipe: how many cores this process may use.

Affinity and container (cgroup) CPU limits included, so ``os.cpu_count()`` (the whole
machine) is not it. The runtime's default workers per node, the job runner's worker
budget and the local compute the SDK describes all read :func:`core_count`.

The rule is loky's ``cpu_count()`` (what joblib and scikit-learn use): the least of the
machine's CPUs, the process's affinity, the cgroup's CPU quota (rounded up) and
``$LOKY_MAX_CPU_COUNT``. It is read here rather than imported from joblib, whose import
(numpy with it) cost every ``mlpipe job create`` half a second of CPU before its first
mini-batch; ``tests/test_cores.py`` holds the two to the same answer.
"""

from __future__ import annotations

import contextlib
import math
import os

CGROUP_V2_MAX = "/sys/fs/cgroup/cpu.max"
CGROUP_V1_QUOTA = "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"
CGROUP_V1_PERIOD = "/sys/fs/cgroup/cpu/cpu.cfs_period_us"


def core_count() -> int:
    """The cores this process may use (at least 1)."""
    machine = os.cpu_count() or 1
    limits = [machine, _affinity(machine), _cgroup_quota(machine)]
    with contextlib.suppress(ValueError):  # loky's own soft limit
        limits.append(int(os.environ.get("LOKY_MAX_CPU_COUNT", machine)))
    return max(1, min(limits))


def _affinity(machine: int) -> int:
    getter = getattr(os, "sched_getaffinity", None)
    if getter is None:
        return machine
    try:
        return len(getter(0))
    except OSError:
        return machine


def _cgroup_quota(machine: int) -> int:
    """The cgroup's CPU bandwidth limit, rounded up (v2, else v1; ``machine`` without one)."""
    quota = period = None
    try:
        with open(CGROUP_V2_MAX, encoding="ascii") as handle:
            parts = handle.read().split()
        if len(parts) == 2:
            quota, period = parts
    except OSError:
        pass
    if quota is None:
        try:
            with open(CGROUP_V1_QUOTA, encoding="ascii") as handle:
                quota = handle.read().strip()
            with open(CGROUP_V1_PERIOD, encoding="ascii") as handle:
                period = handle.read().strip()
        except OSError:
            return machine
    try:
        quota_us, period_us = int(quota), int(period or 0)
    except ValueError:  # "max": no quota
        return machine
    return math.ceil(quota_us / period_us) if quota_us > 0 and period_us > 0 else machine


__all__ = ["core_count"]
