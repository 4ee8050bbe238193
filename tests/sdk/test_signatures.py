"""mlpipe's azure-ai-ml mirrors against the real package: every mirrored public name that
azure-ai-ml also has must take the calls azure-ai-ml takes (each of its parameters, in its
positional order, nothing more required) and constants must have azure-ai-ml's values.

Needs azure-ai-ml: importable here, or in the Python named by ``MLPIPE_AZURE_AI_ML_PYTHON``
(``python -m venv /tmp/aml && /tmp/aml/bin/pip install azure-ai-ml``). Skipped otherwise;
run it by hand before a release.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mlpipe.import_mirrors import MIRRORS, real_package_installed

DUMP = Path(__file__).with_name("dump_signatures.py")
# Operation groups of the local MLClient and their azure-ai-ml classes.
OPERATIONS = ("JobOperations", "ComputeOperations", "DataOperations", "ModelOperations",
              "EnvironmentOperations", "ComponentOperations", "WorkspaceOperations")


def _azure_python() -> str | None:
    configured = os.environ.get("MLPIPE_AZURE_AI_ML_PYTHON")
    if configured:
        return configured
    # find_spec would find mlpipe's own mirror: ask for the real package
    return sys.executable if real_package_installed("azure.ai.ml") else None


def _dump(python: str, targets: list[str]) -> dict[str, Any]:
    proc = subprocess.run([python, str(DUMP), *targets], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _pairs() -> list[tuple[str, str]]:
    """(azure-ai-ml target, mlpipe target) for every public name of the v2 mirrors."""
    pairs = []
    for azure_module, ours in MIRRORS.items():
        if not azure_module.startswith("azure.ai.ml"):
            continue
        module = importlib.import_module(ours)
        for name in getattr(module, "__all__", []):
            if not name.startswith("_") and not name.endswith("Operations"):
                pairs.append((f"{azure_module}:{name}", f"{ours}:{name}"))
    from mlpipe.sdk import operations

    for group in OPERATIONS:
        cls = getattr(operations, group)
        for method in (m for m in vars(cls) if not m.startswith("_")):
            pairs.append((f"azure.ai.ml.operations:{group}.{method}",
                          f"mlpipe.sdk.operations:{group}.{method}"))
    pairs.append(("azure.ai.ml:MLClient.from_config", "mlpipe.sdk.client:MLClient.from_config"))
    return pairs


def _accepts(theirs: list[dict[str, Any]], ours: list[dict[str, Any]]) -> list[str]:
    """Why a call azure-ai-ml takes would fail on ours (empty when every call works)."""
    problems = []
    names = {p["name"]: p for p in ours}
    var_kw = any(p["kind"] == "VAR_KEYWORD" for p in ours)
    var_pos = any(p["kind"] == "VAR_POSITIONAL" for p in ours)
    positional = [p["name"] for p in ours if p["kind"] in ("POSITIONAL_ONLY",
                                                           "POSITIONAL_OR_KEYWORD")]
    their_positional = [p["name"] for p in theirs if p["kind"] in ("POSITIONAL_ONLY",
                                                                   "POSITIONAL_OR_KEYWORD")]
    for index, name in enumerate(their_positional):
        if index < len(positional):
            if positional[index] != name:
                problems.append(f"positional parameter {index} is {positional[index]!r}, "
                                f"azure-ai-ml's is {name!r}")
        elif not var_pos:
            problems.append(f"takes no positional parameter {index} ({name!r})")
    for p in theirs:
        if p["kind"] in ("VAR_KEYWORD", "VAR_POSITIONAL"):
            continue
        if p["name"] not in names and not var_kw:
            problems.append(f"does not take {p['name']!r}")
    their_names = {p["name"] for p in theirs}
    their_var_kw = any(p["kind"] == "VAR_KEYWORD" for p in theirs)
    for p in ours:
        if p["required"] and p["kind"] not in ("VAR_KEYWORD", "VAR_POSITIONAL") \
                and (p["name"] not in their_names or not _required(theirs, p["name"])) \
                and not their_var_kw:
            problems.append(f"requires {p['name']!r}, which azure-ai-ml does not")
    return problems


# What azure-ai-ml has and mlpipe knowingly does not (docs/sdk.md, "Compatibility").
KNOWN = {
    "mlpipe.constants:JobType": "job types mlpipe does not run (base, component, distillation, "
                                "finetuning) are absent",
    "mlpipe.entities:PipelineJob": "PipelineJob(...) built by hand takes no compute=, "
                                   "identity=, component= (use settings.default_compute)",
}


def _required(params: list[dict[str, Any]], name: str) -> bool:
    return any(p["name"] == name and p["required"] for p in params)


def test_mirrors_take_azure_ai_mls_calls() -> None:
    python = _azure_python()
    if python is None:
        pytest.skip("azure-ai-ml is not installed (set MLPIPE_AZURE_AI_ML_PYTHON to a Python "
                    "that has it)")
    pairs = _pairs()
    theirs = _dump(python, [a for a, _ in pairs])
    ours = _dump(sys.executable, [o for _, o in pairs])
    problems = []
    compared = 0
    for azure_target, our_target in pairs:
        their, our = theirs[azure_target], ours[our_target]
        if "missing" in their:
            continue  # a name mlpipe adds (documented in docs/sdk.md)
        compared += 1
        if our_target in KNOWN:
            continue
        for key, value in their.get("constants", {}).items():
            if our.get("constants", {}).get(key) != value:
                problems.append(f"{our_target}.{key}: {our.get('constants', {}).get(key)!r}, "
                                f"azure-ai-ml: {value!r}")
        if "parameters" in their and "parameters" in our:
            problems += [f"{our_target}: {p}" for p in _accepts(their["parameters"],
                                                                our["parameters"])]
    assert compared > 40
    assert problems == []
