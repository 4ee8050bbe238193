"""``mldesigner execute``: run one ``@command_component`` function in this process.

``python -m mlpipe.sdk.mldesigner_exec execute --source FILE --name NAME [--inputs k=v ...]
[--outputs k=v ...]`` (a command step's ``mldesigner`` is this module): imports ``FILE``
(its folder first on ``sys.path``, as mldesigner does), finds the component ``NAME``,
converts each input's text to its declared type (``integer``, ``number``, ``boolean``; data
inputs are paths), makes ``uri_folder`` output folders and calls the function. A primitive
return value is written as text to its output's path (``<path>/output`` when that is a
folder), as mldesigner writes it. Exit code 0 on success, 1 when the function raises,
2 for a wrong call.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlpipe.sdk.mldesigner import EXECUTING_FLAG, Port

_PARSERS = {"integer": int, "number": float, "string": str}


def _boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def _pairs(items: Sequence[str], flag: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"mldesigner execute: {flag} takes name=value, got {item!r}")
        out[key.replace("-", "_")] = value
    return out


def _find(source: Path, name: str) -> Any:
    sys.path.insert(0, str(source.parent))
    os.environ[EXECUTING_FLAG] = "1"
    spec = importlib.util.spec_from_file_location(source.stem, source)
    if spec is None or spec.loader is None:
        raise SystemExit(f"mldesigner execute: cannot import {source}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[source.stem] = module
    spec.loader.exec_module(module)
    found = [value for value in vars(module).values()
             if getattr(value, "_is_mldesigner_component", False)
             and getattr(value, "_mldesigner_name", None) == name]
    if not found:
        known = sorted(str(getattr(v, "_mldesigner_name", "")) for v in vars(module).values()
                       if getattr(v, "_is_mldesigner_component", False))
        raise SystemExit(f"mldesigner execute: no @command_component named {name!r} in "
                         f"{source} (found: {', '.join(known) or 'none'})")
    return found[0]


def _value(port: Port, text: str) -> Any:
    kind = str(port.declaration.get("type"))
    if kind == "boolean":
        return _boolean(text)
    parse = _PARSERS.get(kind)
    return parse(text) if parse else text


def _arguments(function: Any, inputs: dict[str, str], outputs: dict[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for port in function._mldesigner_signature.ports:
        if port.returned:
            continue  # written from the return value after the call
        given = outputs if port.kind == "output" else inputs
        if port.name in given:
            text = given[port.name]
            try:
                values[port.name] = _value(port, text) if port.kind == "input" else text
            except ValueError as exc:
                raise SystemExit(f"mldesigner execute: {function.__name__}(): input "
                                 f"{port.name!r}: {exc}") from None
            if port.kind == "output" and port.declaration.get("type") == "uri_folder":
                Path(text).mkdir(parents=True, exist_ok=True)
        elif port.kind == "input" and "default" in port.declaration:
            values[port.name] = port.declaration["default"]
        elif port.optional or port.kind == "input":
            values[port.name] = None  # optional, or a ``str = None`` parameter left unset
    return values


def _write_return(function: Any, result: Any, outputs: dict[str, str]) -> None:
    port = next((p for p in function._mldesigner_signature.ports if p.returned), None)
    if port is None or port.name not in outputs:
        return
    path = Path(outputs[port.name])
    if path.is_dir():
        path = path / "output"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(str(result), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mldesigner")
    verbs = parser.add_subparsers(dest="verb", required=True)
    run = verbs.add_parser("execute", help="run a @command_component function")
    run.add_argument("--source", required=True)
    run.add_argument("--name", required=True)
    run.add_argument("--inputs", nargs="*", default=[])
    run.add_argument("--outputs", nargs="*", default=[])
    args = parser.parse_args(argv)
    try:
        function = _find(Path(args.source).resolve(), args.name)
        outputs = _pairs(args.outputs, "--outputs")
        values = _arguments(function, _pairs(args.inputs, "--inputs"), outputs)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    try:
        result = function.__wrapped__(**values)
    except Exception:
        traceback.print_exc()
        return 1
    _write_return(function, result, outputs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
