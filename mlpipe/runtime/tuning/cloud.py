"""The cloud run: Azure VM sizes (``vm_sizes.json``) and PRS's own costs, as assumptions.

A step on ``instance_count`` nodes of a VM size runs ``max_concurrency_per_instance``
workers per node (default: the VM's vCPUs, as Azure). Its duration is predicted as the
nodes starting (``node_start_s``, ``image_pull_s``), the workers starting (measured here),
the mini-batches replayed on all workers with PRS's scheduling cost per mini-batch
(``schedule_s``) in place of mlpipe's, at most ``schedule_rate`` mini-batches handed out
per second, and the append_row files concatenated at the end (``concat_mb_per_s``). Every
figure is an :class:`Assumptions` field a caller can change (``--assume KEY=VALUE``).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from mlpipe.errors import UsageError

VM_SIZES_FILE = Path(__file__).with_name("vm_sizes.json")
DEFAULT_INSTANCE_TYPE = "Standard_DS3_v2"  # Azure ML's default size for a compute cluster


class AssumptionError(UsageError):
    """An ``--assume KEY=VALUE`` with an unknown key or a value that is not a positive number."""


class UnknownVmSize(UsageError):
    """An ``--instance-type`` that ``vm_sizes.json`` does not list."""


@dataclass(frozen=True)
class VmSize:
    name: str
    vcpus: int
    memory_gib: float
    family: str
    source: str

    @property
    def memory_mb(self) -> float:
        return self.memory_gib * 1024


@lru_cache(maxsize=1)
def vm_sizes() -> dict[str, VmSize]:
    """Every VM size of ``vm_sizes.json``, by lower-cased name."""
    data = json.loads(VM_SIZES_FILE.read_text(encoding="utf-8"))
    sources: dict[str, str] = data["sources"]
    return {row["name"].lower(): VmSize(row["name"], int(row["vcpus"]), float(row["memory_gib"]),
                                        row["family"], sources.get(row["family"], ""))
            for row in data["sizes"]}


def vm_size(name: str) -> VmSize:
    """The VM size ``name`` (any case, ``Standard_`` optional); :class:`UnknownVmSize` with
    the closest names otherwise."""
    sizes = vm_sizes()
    key = name.strip().lower()
    found = sizes.get(key) or sizes.get(f"standard_{key}")
    if found is not None:
        return found
    close = difflib.get_close_matches(key, list(sizes), n=3, cutoff=0.6)
    hint = f" (did you mean {', '.join(sizes[c].name for c in close)}?)" if close else ""
    raise UnknownVmSize(f"unknown VM size {name!r}{hint}; the sizes mlpipe knows are in "
                        f"{VM_SIZES_FILE}")


@dataclass(frozen=True)
class Assumptions:
    """What the cloud prediction takes as given (seconds unless named otherwise)."""

    node_start_s: float = 240.0  # a node allocated and booted (0: the cluster is already up)
    image_pull_s: float = 120.0  # the environment's image pulled (0: cached on the nodes)
    schedule_s: float = 0.05  # PRS's overhead per mini-batch ("~0.05 second/task")
    schedule_rate: float = 400.0  # mini-batches PRS hands out per second ("about 400")
    concat_mb_per_s: float = 50.0  # append_row temp files concatenated by the master role
    core_speed: float = 1.0  # a VM core's speed relative to a core of this machine

    def changed(self, items: list[str]) -> Assumptions:
        """These assumptions with ``KEY=VALUE`` items applied; :class:`AssumptionError` names
        a wrong key or value."""
        names = [f.name for f in fields(self)]
        values: dict[str, Any] = {}
        for item in items:
            key, sep, text = item.partition("=")
            key = key.strip()
            if not sep or key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise AssumptionError(f"--assume {item!r}: expected KEY=VALUE with KEY one "
                                      f"of {', '.join(names)}{hint}")
            try:
                value = float(text)
            except ValueError:
                raise AssumptionError(f"--assume {item!r}: {text!r} is not a number") from None
            if value < 0 or (key in ("schedule_rate", "concat_mb_per_s", "core_speed")
                             and value == 0):
                raise AssumptionError(f"--assume {item!r}: must be greater than 0")
            values[key] = value
        return replace(self, **values)

    def words(self) -> list[str]:
        return [f"node start {self.node_start_s:g} s", f"image pull {self.image_pull_s:g} s",
                f"PRS scheduling {self.schedule_s:g} s per mini-batch, at most "
                f"{self.schedule_rate:g} mini-batches/s",
                f"append_row concatenation {self.concat_mb_per_s:g} MB/s",
                f"a VM core {self.core_speed:g}x as fast as a core here"]


__all__ = ["DEFAULT_INSTANCE_TYPE", "AssumptionError", "Assumptions", "UnknownVmSize", "VmSize",
           "vm_size", "vm_sizes"]
