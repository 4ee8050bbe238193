"""Extract the public methods of azureml's v1 run classes (``Run``, ``PipelineRun``,
``StepRun``) from the wheels, without installing them: each method's parameters, which of
them are required, the ``:rtype:`` its docstring states and the kind of value its code
returns (``generator`` where it yields or returns a generator expression, itself or through
another method of the class; the docstring says ``builtin.list`` for ``get_children``)::

    pip download azureml-core azureml-pipeline-core --no-deps -d WHEELS
    python tools/extract_azureml_run_signatures.py WHEELS > tests/sdk/v1/azureml_run_signatures.json

``tests/sdk/v1/test_run_signatures.py`` compares mlpipe's mirrors with the table.
"""

from __future__ import annotations

import ast
import copy
import json
import re
import sys
import zipfile
from pathlib import Path

SOURCES = {"Run": ("azureml_core-", "azureml/core/run.py"),
           "PipelineRun": ("azureml_pipeline_core-", "azureml/pipeline/core/run.py"),
           "StepRun": ("azureml_pipeline_core-", "azureml/pipeline/core/run.py")}
KINDS = {"builtin.list": "list", "list": "list", "dict": "dict", "str": "str", "None": "None",
         "builtin.generator": "generator", "bool": "bool"}


def _kind(rtype: str | None) -> str:
    if rtype is None:
        return "unknown"
    head = re.split(r"[\[ ]", rtype.strip(), maxsplit=1)[0]
    return KINDS.get(head, "object")


def _generates(function: ast.FunctionDef) -> bool:
    return any(isinstance(node, (ast.Yield, ast.YieldFrom)) or
               (isinstance(node, ast.Return) and isinstance(node.value, ast.GeneratorExp))
               for node in ast.walk(function))


def _delegate(function: ast.FunctionDef) -> str | None:
    """``get_steps`` returns ``self.get_children()``: the method it hands over to."""
    returns = [n.value for n in ast.walk(function) if isinstance(n, ast.Return) and n.value]
    if len(returns) == 1 and isinstance(returns[0], ast.Call) \
            and isinstance(returns[0].func, ast.Attribute) \
            and ast.unparse(returns[0].func.value) == "self":
        return returns[0].func.attr
    return None


def methods(source: str, cls: str) -> dict[str, dict]:
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.ClassDef) and node.name == cls):
            continue
        found: dict[str, dict] = {}
        for function in node.body:
            if not isinstance(function, ast.FunctionDef) or function.name.startswith("_"):
                continue
            decorators = [ast.unparse(d) for d in function.decorator_list]
            if "property" in decorators or any(d.endswith(".setter") for d in decorators):
                continue
            args = function.args
            params = [a.arg for a in args.posonlyargs + args.args]
            if "staticmethod" not in decorators:
                params = params[1:]
            required = params[:len(params) - len(args.defaults)]
            rtype = re.search(r":rtype:\s*(.+)", ast.get_docstring(function) or "")
            found[function.name] = {
                "params": params, "required": required,
                "rtype": rtype.group(1).strip() if rtype else None,
                "returns": "generator" if _generates(function)
                else _kind(rtype.group(1) if rtype else None),
                "delegate": _delegate(function),
                "static": "staticmethod" in decorators or "classmethod" in decorators}
        return found
    raise SystemExit(f"class {cls} not found")


def main(wheels: Path) -> dict[str, dict]:
    table: dict[str, dict] = {}
    for cls, (prefix, member) in SOURCES.items():
        wheel = next(iter(sorted(wheels.glob(f"{prefix}*.whl"))), None)
        if wheel is None:
            raise SystemExit(f"no {prefix}*.whl in {wheels}")
        with zipfile.ZipFile(wheel) as archive:
            table[cls] = {"source": f"{wheel.name}:{member}",
                          "methods": methods(archive.read(member).decode("utf-8"), cls)}
    for cls in ("PipelineRun", "StepRun"):  # both subclass Run
        inherited = copy.deepcopy(table["Run"]["methods"])
        table[cls]["methods"] = {**inherited, **table[cls]["methods"]}
    for entry in table.values():
        for sig in entry["methods"].values():
            target = entry["methods"].get(sig.pop("delegate") or "")
            if target is not None and target["returns"] == "generator":
                sig["returns"] = "generator"
    return table


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1])), indent=1, sort_keys=True))
