"""Print, as JSON, the public names and call signatures of the modules in ``sys.argv[1:]``
(``module:Name`` or ``module:Name.method``); run with the Python that has the real package.

Used by ``tests/sdk/test_signatures.py`` to compare mlpipe's mirrors with azure-ai-ml
installed in a scratch environment (``MLPIPE_AZURE_AI_ML_PYTHON=/tmp/aml/bin/python``).
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
from typing import Any


def describe(target: str) -> dict[str, Any]:
    module_name, _, attr_path = target.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
        for part in filter(None, attr_path.split(".")):
            value = getattr(value, part)
    except (ImportError, AttributeError) as error:
        return {"missing": f"{type(error).__name__}: {error}"}
    out: dict[str, Any] = {}
    if inspect.isclass(value) and not attr_path.count("."):
        constants = {k: getattr(value, k) for k in dir(value) if k.isupper()}
        out["constants"] = {k: str(getattr(v, "value", v)) for k, v in constants.items()
                            if isinstance(v, str)}
    function = value.__init__ if inspect.isclass(value) else value
    if callable(function):
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):
            return out
        out["parameters"] = [
            {"name": p.name, "kind": p.kind.name, "required": p.default is p.empty}
            for p in signature.parameters.values() if p.name != "self"]
    return out


if __name__ == "__main__":
    print(json.dumps({target: describe(target) for target in sys.argv[1:]}))
