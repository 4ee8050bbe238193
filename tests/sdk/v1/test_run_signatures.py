"""mlpipe's v1 run mirrors against azureml's own: every method of azureml's ``Run``,
``PipelineRun`` and ``StepRun`` that mlpipe's mirror has takes the calls azureml's takes
(each public parameter at its position, nothing more required) and returns the same kind of
value (a generator where azureml's returns one: ``next(pipeline_run.get_children())``).

The reference table ``azureml_run_signatures.json`` was extracted once from the source of
azureml-core 1.61.0.post4 and azureml-pipeline-core 1.62.0 (``pip download azureml-core
azureml-pipeline-core --no-deps -d WHEELS && python tools/extract_azureml_run_signatures.py
WHEELS``), reading each method's code for the kind it returns, not only its docstring.
"""

from __future__ import annotations

import collections.abc
import inspect
import json
import typing
from pathlib import Path
from typing import Any

import pytest

from mlpipe.sdk.v1.run_context import Run, _OfflineRun
from mlpipe.sdk.v1.runs import PipelineRun, StepRun

TABLE = json.loads(Path(__file__).with_name("azureml_run_signatures.json").read_text())
# azureml class -> mlpipe's mirror of it (``Run.get_context()`` gives the offline run)
MIRRORS: dict[str, tuple[type, ...]] = {"PipelineRun": (PipelineRun,), "StepRun": (StepRun,),
                                        "Run": (Run, _OfflineRun)}
KINDS: dict[str, tuple[Any, ...]] = {
    "generator": (collections.abc.Iterator, collections.abc.Generator,
                  collections.abc.Iterable),
    "list": (list,), "dict": (dict,), "str": (str,), "bool": (bool,), "None": (type(None),)}


def _pairs() -> list[tuple[str, type, str]]:
    return [(azure, ours, name) for azure, mirrors in MIRRORS.items() for ours in mirrors
            for name in TABLE[azure]["methods"]
            if callable(getattr(ours, name, None)) and not hasattr(object, name)]


PAIRS = _pairs()


def test_the_table_has_the_methods_programs_call() -> None:
    for azure, name in [("PipelineRun", "get_children"), ("PipelineRun", "get_steps"),
                        ("StepRun", "get_details"), ("Run", "get_context")]:
        assert name in TABLE[azure]["methods"]
    assert len(PAIRS) >= 30


@pytest.mark.parametrize("azure,ours,name", PAIRS,
                         ids=[f"{o.__name__}.{n}" for _, o, n in PAIRS])
def test_mirror_takes_azureml_calls(azure: str, ours: type, name: str) -> None:
    theirs = TABLE[azure]["methods"][name]
    params = list(inspect.signature(getattr(ours, name)).parameters.values())
    if params and params[0].name in ("self", "cls") and not isinstance(
            inspect.getattr_static(ours, name), (staticmethod, classmethod)):
        params = params[1:]
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                        p.POSITIONAL_OR_KEYWORD)]
    var_keyword = any(p.kind is p.VAR_KEYWORD for p in params)
    for index, param in enumerate(theirs["params"]):
        if param.startswith("_"):  # azureml's internal switches: not for programs
            continue
        if param in positional:
            assert positional.index(param) == index, \
                f"{name}: {param} is at {positional.index(param)}, azureml's at {index}"
        else:
            assert var_keyword and index >= len(positional), \
                f"{name}: azureml's {param} (position {index}) is not taken"
    required = [p.name for p in params if p.default is p.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    assert set(required) <= set(theirs["required"]), (name, required, theirs["required"])


@pytest.mark.parametrize("azure,ours,name", PAIRS,
                         ids=[f"{o.__name__}.{n}" for _, o, n in PAIRS])
def test_mirror_returns_azureml_kind(azure: str, ours: type, name: str) -> None:
    wanted = KINDS.get(TABLE[azure]["methods"][name]["returns"])
    if wanted is None:  # an azureml object: mirrored by its own class
        return
    hint = typing.get_type_hints(getattr(ours, name)).get("return", Any)
    origin = typing.get_origin(hint) or hint
    assert origin in wanted, f"{ours.__name__}.{name} returns {hint}, azureml's a " \
                             f"{TABLE[azure]['methods'][name]['returns']}"
