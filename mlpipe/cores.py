"""The one core count of mlpipe: how many cores this process may use.

Affinity and container (cgroup) CPU limits included, so ``os.cpu_count()`` (the whole
machine) is not it. The runtime's default workers per node, the job runner's worker
budget and the local compute the SDK describes all read :func:`core_count`.
"""

from __future__ import annotations


def core_count() -> int:
    """The cores this process may use (at least 1)."""
    from joblib.externals.loky import cpu_count  # noqa: PLC0415 - joblib loads on first use

    return max(1, cpu_count())


__all__ = ["core_count"]
