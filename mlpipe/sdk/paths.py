"""Local paths in a job document: made absolute (to compare jobs) or rebased (to dump them);
and copying a local output somewhere (``download``)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def is_local(value: Any) -> bool:
    """True for a relative or absolute file-system path (not a URI, binding or asset reference)."""
    if not isinstance(value, str) or not value or "${{" in value:
        return False
    return not (_SCHEME.match(value) and not re.match(r"^[A-Za-z]:[\\/]", value))


def relative_to(path: Path | str, base: Path) -> str:
    """``path`` written relative to ``base`` (``./x`` style kept for children)."""
    path = Path(path)
    try:
        rel = os.path.relpath(path, base)
    except ValueError:  # pragma: no cover - different drives on Windows
        return str(path)
    rel = rel.replace(os.sep, "/")
    if rel.split("/")[:3] == ["..", "..", ".."]:
        return str(path.absolute()).replace(os.sep, "/")  # far away: absolute is clearer
    return rel if rel.startswith("..") else f"./{rel}" if rel != "." else "."


Rewrite = Callable[[str], str]


def _rewrite_component(data: dict[str, Any], fix: Rewrite) -> None:
    for key in ("code",):
        if is_local(data.get(key)):
            data[key] = fix(data[key])
    task = data.get("task")
    if isinstance(task, dict):
        if is_local(task.get("code")):
            task["code"] = fix(task["code"])
        _rewrite_environment(task, fix)
    _rewrite_environment(data, fix)
    for section in ("inputs", "outputs"):
        ports = data.get(section)
        if isinstance(ports, dict):
            for port in ports.values():
                if isinstance(port, dict) and is_local(port.get("path")):
                    port["path"] = fix(port["path"])


def _rewrite_environment(owner: dict[str, Any], fix: Rewrite) -> None:
    env = owner.get("environment")
    if isinstance(env, dict) and is_local(env.get("conda_file")):
        env["conda_file"] = fix(env["conda_file"])


def rewrite_paths(document: Mapping[str, Any], fix: Rewrite) -> dict[str, Any]:
    """A deep copy of a pipeline ``document`` with ``fix`` applied to each local path.

    The paths are the ones a pipeline YAML resolves against its own folder:
    pipeline/step input and output ``path``, ``code``, ``task.code``,
    ``environment.conda_file`` and ``component: file:...`` references.
    """
    import copy

    data = copy.deepcopy(dict(document))
    _rewrite_component(data, fix)
    jobs = data.get("jobs")
    if isinstance(jobs, dict):
        for job in jobs.values():
            if not isinstance(job, dict):
                continue
            _rewrite_component(job, fix)
            component = job.get("component")
            if isinstance(component, str):
                prefixed = component.startswith("file:")
                raw = component[5:] if prefixed else component
                if (prefixed or raw.endswith((".yml", ".yaml"))) and is_local(raw):
                    job["component"] = ("file:" if prefixed else "") + fix(raw)
            elif isinstance(component, dict):
                _rewrite_component(component, fix)
    return data


def absolute_paths(document: Mapping[str, Any], base: Path) -> dict[str, Any]:
    """``document`` with every local path absolute and normalised against ``base``."""
    return rewrite_paths(document, lambda p: os.path.normpath(str(base / p)).replace(os.sep, "/"))


def rebase_paths(document: Mapping[str, Any], base: Path, new_base: Path) -> dict[str, Any]:
    """``document`` (relative to ``base``) with its relative paths made relative to ``new_base``."""
    base, new_base = base.resolve(), new_base.resolve()
    if base == new_base:
        return rewrite_paths(document, lambda p: p)

    def fix(p: str) -> str:
        if Path(p).is_absolute():
            return p
        return relative_to(Path(os.path.normpath(base / p)), new_base)

    return rewrite_paths(document, fix)
