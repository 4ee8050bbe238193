"""The ParallelRunStep tuning flags inside ``program_arguments`` (seed 001's table).

Azure's parallel runtime reads a few ``--flags`` out of the program arguments
(``--error_threshold``, ``--allowed_failed_percent``, timeouts, ...). mlpipe reads
the same flags into :class:`mlpipe.plan.PrsOptions`; every argument still reaches
the entry script unchanged. A flag that is not known but close to a known one
(real pipelines contain ``--resource_monitor_interva``) gets a warning.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mlpipe.schema.ranges import IntRange, SettingError

_TIMEOUT = IntRange(0, 259200, low_open=True)
_TRUE = {"true", "1", "yes", "y", "on"}
_FALSE = {"false", "0", "no", "n", "off"}
PROFILERS = ("cProfile", "profile")


def _to_bool(value: str) -> bool:
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise SettingError(f"must be True or False, got {value!r}", code="type")


def _file_name(value: str) -> str:
    if not value or value in (".", "..") or any(c in value for c in "/\\\0"):
        raise SettingError(f"must be a file name (no folder), got {value!r}", code="type")
    return value


def _profiler(value: str) -> str:
    if value not in PROFILERS:
        raise SettingError(f"must be one of {', '.join(PROFILERS)}, got {value!r}", code="enum")
    return value


@dataclass(frozen=True)
class Flag:
    """A known flag: the :class:`~mlpipe.plan.PrsOptions` field it sets and how to read it."""

    field: str
    parse: Callable[[str], Any]
    switch: bool = False  # may stand alone (means True)


KNOWN_FLAGS: dict[str, Flag] = {
    "--error_threshold": Flag("error_threshold", IntRange(-1).check),
    "--allowed_failed_percent": Flag("allowed_failed_percent", IntRange(0, 100).check),
    "--task_overhead_timeout": Flag("task_overhead_timeout", _TIMEOUT.check),
    "--progress_update_timeout": Flag("progress_update_timeout", _TIMEOUT.check),
    "--first_task_creation_timeout": Flag("first_task_creation_timeout", _TIMEOUT.check),
    "--resource_monitor_interval": Flag("resource_monitor_interval", IntRange(0).check),
    "--copy_logs_to_parent": Flag("copy_logs_to_parent", _to_bool),
    "--profiling_module": Flag("profiling_module", _profiler),
    "--append_row_dataframe_header": Flag("append_row_dataframe_header", _to_bool, switch=True),
    "--append_row_file_name": Flag("append_row_file_name", _file_name),
}


@dataclass(frozen=True)
class PrsProblem:
    """A problem with one flag; ``severity`` is ``error`` or ``warning``."""

    message: str
    severity: str = "error"
    code: str = "range"
    hint: str | None = None


def parse_prs_arguments(args: Sequence[str]) -> tuple[dict[str, Any], list[PrsProblem]]:
    """The :class:`~mlpipe.plan.PrsOptions` fields set by ``args`` and the problems found."""
    values: dict[str, Any] = {}
    problems: list[PrsProblem] = []
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if not token.startswith("--"):
            continue
        name, eq, inline = token.partition("=")
        flag = KNOWN_FLAGS.get(name)
        if flag is None:
            near = difflib.get_close_matches(name, KNOWN_FLAGS, n=1, cutoff=0.85)
            if near:
                problems.append(PrsProblem(
                    f"unknown parallel-run flag '{name}' is passed to the entry script but not "
                    f"applied", severity="warning", code="prs-flag",
                    hint=f"did you mean '{near[0]}'?"))
            continue
        if eq:
            text: str | None = inline
        elif i < len(args) and not args[i].startswith("--"):
            text = args[i]
            i += 1
        else:
            text = "True" if flag.switch else None
        if text is None:
            problems.append(PrsProblem(f"{name} needs a value", code="type"))
            continue
        try:
            values[flag.field] = flag.parse(text)
        except SettingError as exc:
            problems.append(PrsProblem(f"{name}: {exc.message}", code=exc.code, hint=exc.hint))
    return values, problems


__all__ = ["KNOWN_FLAGS", "PROFILERS", "PrsProblem", "parse_prs_arguments"]
