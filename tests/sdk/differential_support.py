"""The differential check: what a job built in code *means*, read from either SDK's dump.

azure-ai-ml's ``job._to_dict()`` writes each step as the node's own settings plus an
inline ``component`` (its defaults and its input/output declarations); mlpipe's ``dump()``
writes a step inline, or a ``component: file:...`` reference plus the node's settings.
:func:`effective_job` reads either into the job the cloud runs, so that two dumps are
equal exactly when they describe the same job:

- a step's settings are its component's settings with the node's own over them (key by
  key inside ``resources``, ``retry_settings``, ``task``, ...); a component's
  ``environment_variables`` are left out (azure-ai-ml's component schemas drop them); a
  sweep's component is its ``trial``, whose settings are kept apart from the sweep's own
  (both have ``resources``), and its swept inputs have no value;
- an input is its value (a binding, a path or a literal) with its mode (the node's, else
  the declaration's), and for a data path its type; an input bound to another step or to
  the pipeline takes the type of what it is bound to, so its declared type is left out;
  an unbound input is its declared default; literal values are compared as text (azure-ai-ml
  writes a component file's defaults as text);
- an output is its type, mode, path (name, version), the node's over the declaration's,
  or the pipeline output it is bound to;
- a step's metadata is its own ``display_name``, ``tags`` and ``experiment_name``; its
  ``description`` and ``properties`` are not compared (azure-ai-ml does not send them to
  the cloud, mlpipe records them; neither changes a run); a component's metadata belongs to
  the component asset, not to the job;
- spellings with one meaning are made one: ``azureml:cpu`` and ``cpu`` as a compute or
  datastore,
  ``azureml:./src`` (azure-ai-ml's not-yet-uploaded local path) and ``src``,
  ``azureml:wasbs://...`` (its ``_to_dict()`` of a URL path) and the URL,
  ``mini_batch_size`` ``"10kb"`` and the ``"10240"`` azure-ai-ml converts it to (its
  ``"0"`` is no ``mini_batch_size``: azure-ai-ml writes it when none is given), an
  inline conda mapping and the file it was read from, ``is_deterministic: true`` and no key.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import REPO

HERE = REPO / "tests" / "sdk" / "differential"
PROGRAMS = HERE / "programs"
FIXTURES = HERE / "fixtures"
LITERAL_TYPES = {"integer", "number", "boolean", "string"}
JOB_META = ("display_name", "description", "tags", "properties", "experiment_name")
NODE_META = ("display_name", "tags", "experiment_name")
UNCOMPARED = ("description", "properties")
COMPONENT_META = {"name", "version", "$schema", "display_name", "description", "tags",
                  "is_deterministic", "type", "inputs", "outputs", "_source",
                  "environment_variables", "properties"}
_SIZE = re.compile(r"^(\d+)([kKmMgG][bB])?$")
_UNITS = {"k": 1024, "m": 1024**2, "g": 1024**3}


def program_names() -> list[str]:
    return sorted(p.stem for p in PROGRAMS.glob("*.py"))


def fixture(name: str) -> dict[str, Any]:
    """What azure-ai-ml made of program ``name``: ``{"job": ...}`` or ``{"error": ...}``."""
    data = yaml.safe_load((FIXTURES / f"{name}.yml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def mlpipe_results(names: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Every program built on mlpipe's mirrors, in one child process (as run-script would)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, str(HERE / "make_fixtures.py"), "--mirrors",
                           *(names or [])], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    assert isinstance(results, dict)
    return results


# -- the meaning of a dump ----------------------------------------------------------------------

def effective_job(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The pipeline job ``doc`` (either SDK's dump) as the cloud runs it; a standalone command
    or sweep job (what ``ml_client.jobs.create_or_update(node)`` submits) likewise."""
    if doc.get("type") in ("command", "sweep"):
        return _standalone(doc, PROGRAMS)
    return _pipeline(doc, PROGRAMS)


STANDALONE_SKIPPED = ("$schema", "type", "inputs", "outputs", "trial", *UNCOMPARED)


def _standalone(doc: Mapping[str, Any], base: Path) -> dict[str, Any]:
    """A standalone job: its metadata and settings, a sweep's trial (its variables too: they
    are sent with the trial), inputs as values and outputs as settings; empty values (the
    ``properties: {}``, ``parameters: {}`` azure-ai-ml writes) are no values."""
    out: dict[str, Any] = {"type": doc["type"]}
    for key, value in doc.items():
        if key not in STANDALONE_SKIPPED and _filled(value):
            out[key] = _setting(key, _paths(key, _filled(value), base), base)
    trial = {key: _setting(key, _paths(key, value, base), base)
             for key, value in (doc.get("trial") or {}).items() if _filled(value)}
    if trial:
        out["trial"] = {key: _filled(value) for key, value in trial.items()}
    inputs = {key: _data_value(value, base) for key, value in (doc.get("inputs") or {}).items()
              if value is not None}
    if inputs:
        out["inputs"] = inputs
    outputs = {key: _port({}, value, base) for key, value in (doc.get("outputs") or {}).items()}
    if outputs:
        out["outputs"] = outputs  # an output without settings ({}) counts: it is declared
    return out


def _filled(value: Any) -> Any:
    """``value`` without its empty mappings (``None`` when nothing is left)."""
    if isinstance(value, Mapping):
        kept = {key: _filled(item) for key, item in value.items()}
        kept = {key: item for key, item in kept.items() if item is not None}
        return kept or None
    return value


def _pipeline(doc: Mapping[str, Any], base: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in (*JOB_META, "name", "identity"):
        if doc.get(key) not in (None, {}, ""):
            out[key] = doc[key]
    if doc.get("compute"):
        out["compute"] = _compute(doc["compute"])
    settings = {k: v for k, v in dict(doc.get("settings") or {}).items() if v is not None}
    for key in ("default_compute", "default_datastore"):
        if key in settings:
            settings[key] = _compute(settings[key])
    if settings:
        out["settings"] = settings
    inputs = {key: _data_value(value, base) for key, value in (doc.get("inputs") or {}).items()}
    if inputs:
        out["inputs"] = inputs
    outputs = {key: _port({}, value, base) for key, value in (doc.get("outputs") or {}).items()}
    if outputs:
        out["outputs"] = outputs
    out["jobs"] = {name: _node(node, base) for name, node in (doc.get("jobs") or {}).items()}
    return out


def _node(node: Mapping[str, Any], base: Path) -> dict[str, Any]:
    sweep = node.get("type") == "sweep"
    holder = "trial" if sweep else "component"  # a sweep's component is its trial
    component, comp_base = _component(node.get(holder), base)
    kind = node.get("type") or component.get("type") or "command"
    out: dict[str, Any] = {"type": kind}
    for key in NODE_META:
        if node.get(key) not in (None, {}, ""):
            out[key] = node[key]
    if isinstance(node.get(holder), str) and not _is_file(node[holder]):
        out[holder] = node[holder]
    if kind == "pipeline":
        inner = _pipeline({"jobs": component.get("jobs") or {}}, comp_base)
        out["jobs"] = inner["jobs"]
    settings: dict[str, Any] = {}
    for key, value in component.items():
        if key not in COMPONENT_META and key != "jobs":
            settings[key] = _paths(key, value, comp_base)
    if sweep:  # the trial's settings, apart from the sweep's own (both have resources)
        trial = {key: _setting(key, value, comp_base) for key, value in settings.items()}
        out.update({"trial": trial} if trial else {})
        settings = {}
    for key, value in node.items():
        if key in (*NODE_META, *UNCOMPARED, "type", "component", "trial", "inputs", "outputs",
                   "name", "is_deterministic") or value is None:
            continue
        own = _paths(key, value, base)
        if isinstance(own, dict) and isinstance(settings.get(key), dict):
            settings[key] = {**settings[key], **own}
        else:
            settings[key] = own
    deterministic = node.get("is_deterministic", component.get("is_deterministic", True))
    if deterministic is False:
        settings["is_deterministic"] = False
    for key, value in settings.items():
        value = _setting(key, value, base)
        if value not in (None, {}):
            out[key] = value
    decls = {key: decl for key, decl in (component.get("inputs") or {}).items()
             if key not in (node.get("search_space") or {})}  # a swept input has no value
    inputs = _inputs(decls, node.get("inputs") or {}, base)
    if inputs:
        out["inputs"] = inputs
    decls = component.get("outputs") or {}
    outputs = {key: _port(decls.get(key) or {}, (node.get("outputs") or {}).get(key), base)
               for key in {**decls, **(node.get("outputs") or {})}}
    outputs = {key: value for key, value in outputs.items() if value}
    if outputs:
        out["outputs"] = outputs
    return out


def _component(value: Any, base: Path) -> tuple[dict[str, Any], Path]:
    """The component mapping of ``component:`` and the folder its relative paths start at."""
    if isinstance(value, Mapping):
        return dict(value), base
    if isinstance(value, str) and _is_file(value):
        path = (base / value.removeprefix("file:")).resolve()
        return dict(yaml.safe_load(path.read_text(encoding="utf-8"))), path.parent
    return {}, base


def _is_file(reference: str) -> bool:
    return reference.startswith("file:") or reference.endswith((".yml", ".yaml"))


def _inputs(decls: Mapping[str, Any], values: Mapping[str, Any], base: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in {**decls, **values}:
        decl = decls.get(key) if isinstance(decls.get(key), Mapping) else {}
        value = values.get(key)
        if value is None:
            if decl.get("default") is not None:
                out[key] = {"value": str(decl["default"])}
            continue
        if isinstance(value, Mapping) and "path" not in value and "value" not in value:
            if value.get("default") is not None:  # an inline declaration left unbound
                out[key] = {"value": str(value["default"])}
            continue
        out[key] = _data_value(value, base, decl)
    return out


def _data_value(value: Any, base: Path, decl: Mapping[str, Any] | None = None) -> Any:
    """An input: a literal as is; data (a binding or a path) with its type and mode."""
    decl = decl or {}
    if isinstance(value, Mapping):
        raw = value.get("path", value.get("value", value.get("default")))
        kind = value.get("type") or decl.get("type")
        mode = value.get("mode") or decl.get("mode")
    else:
        raw, kind, mode = value, decl.get("type"), decl.get("mode")
    literal = kind in LITERAL_TYPES or not isinstance(raw, str) or (
        kind is None and not raw.startswith("${{") and not isinstance(value, Mapping))
    if literal:
        return {"value": raw if isinstance(raw, str) and raw.startswith("${{") else str(raw)}
    if raw.startswith("${{"):
        kind = None  # the type of what it is bound to
    data = {"value": _local(raw, base), "type": kind, "mode": mode}
    return {k: v for k, v in data.items() if v is not None}


def _port(decl: Mapping[str, Any], value: Any, base: Path) -> dict[str, Any]:
    """An output: the pipeline output it is bound to (whose settings are the pipeline's), or
    its settings over the declaration's."""
    if isinstance(value, str):
        return {"binding": value}
    if isinstance(value, Mapping) and str(value.get("path", "")).startswith("${{parent.outputs."):
        return {"binding": value["path"]}
    own = dict(value) if isinstance(value, Mapping) else {}
    merged = {**{k: v for k, v in decl.items() if k in ("type", "mode")},
              **{k: v for k, v in own.items() if v is not None}}
    keep = ("type", "mode", "path", "name", "version")
    if isinstance(merged.get("path"), str):
        merged["path"] = _local(merged["path"], base)
    return {k: merged[k] for k in keep if merged.get(k) is not None}


def _setting(key: str, value: Any, base: Path) -> Any:
    if key == "compute" and isinstance(value, str):
        return _compute(value)
    if key == "mini_batch_size" and value is not None:
        return None if str(value) == "0" else _bytes_or_count(value)
    if key == "environment" or key == "task":
        return _environments(value, base)
    return value


def _environments(value: Any, base: Path) -> Any:
    """An environment (or a task holding one) with an inline conda file, no anonymous name."""
    if isinstance(value, Mapping) and "environment" in value:
        return {**value, "environment": _environments(value["environment"], base)}
    if isinstance(value, Mapping) and ("image" in value or "conda_file" in value):
        env = dict(value)
        if env.get("name") == "CliV2AnonymousEnvironment":
            env.pop("name")
            env.pop("version", None)
        conda = env.get("conda_file")
        if isinstance(conda, str):
            path = Path(conda) if Path(conda).is_absolute() else base / conda
            env["conda_file"] = yaml.safe_load(path.read_text(encoding="utf-8"))
        return env
    if isinstance(value, str) and value.startswith("azureml:") and value.count(":") == 2:
        return value
    return value


def _paths(key: str, value: Any, base: Path) -> Any:
    """``code`` (of a step or its task) as a path relative to the programs folder."""
    if key == "code" and isinstance(value, str):
        return _local(value, base)
    if key == "task" and isinstance(value, Mapping) and isinstance(value.get("code"), str):
        return {**value, "code": _local(value["code"], base)}
    return value


def _local(path: str, base: Path) -> str:
    """A local path relative to the programs folder; anything else as written (a URL without
    the ``azureml:`` azure-ai-ml's ``_to_dict()`` puts before it, its REST body has none)."""
    text = path.removeprefix("azureml:") if path.startswith(("azureml:./", "azureml:/",
                                                             "azureml:../")) else path
    if re.match(r"azureml:[a-z][a-z0-9+.-]*://", text):
        return text.removeprefix("azureml:")
    if "://" in text or text.startswith(("azureml:", "${{")):
        return path
    local = Path(text) if Path(text).is_absolute() else base / text
    return os.path.relpath(local.resolve(), PROGRAMS)


def _compute(value: str) -> str:
    return value.removeprefix("azureml:")


def _bytes_or_count(value: Any) -> Any:
    match = _SIZE.match(str(value))
    if not match:
        return value
    number, unit = match.groups()
    return str(int(number) * (_UNITS[unit[0].lower()] if unit else 1))


def differences(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Each key path where ``actual`` differs from ``expected``, with both values."""
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        out = []
        for key in {**expected, **actual}:
            where = f"{path}.{key}" if path else str(key)
            if key not in actual:
                out.append(f"{where}: azure-ai-ml {expected[key]!r}, mlpipe has none")
            elif key not in expected:
                out.append(f"{where}: mlpipe {actual[key]!r}, azure-ai-ml has none")
            else:
                out.extend(differences(expected[key], actual[key], where))
        return out
    if expected != actual:
        return [f"{path}: azure-ai-ml {expected!r}, mlpipe {actual!r}"]
    return []
