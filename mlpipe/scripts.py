"""Running published azure-ai-ml / azureml v1 scripts and notebooks unchanged.

:func:`install_mirrors` puts a meta-path finder first on ``sys.meta_path`` of the
current process: ``import azure.ai.ml``, ``azure.identity``, ``azureml.core``,
``azureml.pipeline.core``/``steps``, ``azureml.data`` (and their usual
submodules) then give mlpipe's mirrors. Only the process that installs it is
affected (``mlpipe run-script`` and, through ``MLPIPE_IMPORT_MIRRORS``, the
step workers it starts); the real packages stay untouched for every other one.

:func:`run_path` runs a ``.py`` file or the code cells of an ``.ipynb`` in order.
"""

from __future__ import annotations

import email.message
import importlib
import importlib.abc
import importlib.machinery
import json
import os
import re
import runpy
import sys
import types
import urllib.error
import urllib.request
import urllib.response
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlpipe.errors import MlpipeError
from mlpipe.limits import MAX_NOTEBOOK_BYTES, InputLimitError, check_file_size, check_json_depth
from mlpipe.runs import RUNS_DIR_ENV, resolve_runs_dir

ENV_FLAG = "MLPIPE_IMPORT_MIRRORS"

_V1 = "mlpipe.v1"
# Imported name -> the mlpipe module whose public names it gets.
MIRRORS: dict[str, str] = {
    "azure.ai.ml": "mlpipe.azure_ai_ml",
    "azure.ai.ml.dsl": "mlpipe.dsl",
    "azure.ai.ml.entities": "mlpipe.entities",
    "azure.ai.ml.constants": "mlpipe.constants",
    "azure.ai.ml.parallel": "mlpipe.parallel",
    "azure.ai.ml.operations": "mlpipe.sdk.operations",
    "azure.identity": "mlpipe.identity",
    "azure.core.exceptions": "mlpipe.sdk.exceptions",
    **{name: _V1 for name in (
        "azureml.core", "azureml.core.compute", "azureml.core.compute_target",
        "azureml.core.datastore", "azureml.core.dataset", "azureml.core.model",
        "azureml.core.runconfig", "azureml.core.environment", "azureml.core.experiment",
        "azureml.core.workspace", "azureml.core.run", "azureml.core.conda_dependencies",
        "azureml.core.authentication",
        "azureml.data", "azureml.data.dataset_consumption_config",
        "azureml.data.output_dataset_config", "azureml.data.data_reference",
        "azureml.data.datapath", "azureml.data.file_dataset", "azureml.data.tabular_dataset",
        "azureml.pipeline.core", "azureml.pipeline.core.graph", "azureml.pipeline.steps",
        "azureml.widgets",
    )},
}
# azureml's private telemetry and REST-client modules, which published scripts import to tag
# their runs: every name in them is :class:`Inert` (nothing is sent anywhere).
INERT = ("azureml._restclient", "azureml.telemetry", "azureml._base_sdk_common",
         "azureml._common")
# Mirrored only where the real package is not installed (azure-core's own modules use it).
FALLBACKS = frozenset({"azure.core.exceptions"})
_PARENTS = {".".join(name.split(".")[:i]) for name in MIRRORS
            for i in range(1, name.count(".") + 1)} - set(MIRRORS)


class Inert:
    """A name of an :data:`INERT` module: takes any call and attribute, does nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Inert()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return Inert()


def _inert(fullname: str) -> bool:
    return any(fullname == p or fullname.startswith(p + ".") for p in INERT)


class MirrorFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds mirrored names (and empty parent packages such as ``azureml``)."""

    def find_spec(self, fullname: str, path: Any = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if (fullname in _PARENTS or fullname in FALLBACKS) \
                and importlib.machinery.PathFinder.find_spec(fullname, path):
            return None  # a real package (azure-core's ``azure.core``): load it as is
        if fullname in MIRRORS or fullname in _PARENTS or _inert(fullname):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        parent = fullname.rpartition(".")[0]
        if parent in MIRRORS:
            raise ModuleNotFoundError(
                f"mlpipe run-script: {fullname} has no local mirror (mirrored: "
                f"{', '.join(sorted(n for n in MIRRORS if n.startswith(parent)))}); import the "
                "names from one of those, or run the script with the real package",
                name=fullname)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        module.__path__ = []
        if _inert(module.__name__):
            module.__getattr__ = lambda name: Inert  # type: ignore[method-assign]
            return
        target = MIRRORS.get(module.__name__)
        if target is None:  # a parent package (``azureml``) that is not installed
            return
        mirror = importlib.import_module(target)
        names = getattr(mirror, "__all__", None) or [n for n in vars(mirror) if
                                                     not n.startswith("_")]
        module.__all__ = list(names)  # type: ignore[attr-defined]
        module.__doc__ = f"mlpipe's local mirror of {module.__name__} (from {target})"
        for name, value in vars(mirror).items():
            if not name.startswith("_"):
                setattr(module, name, value)

        def __getattr__(name: str) -> Any:
            try:
                return getattr(mirror, name)
            except AttributeError:
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r} in "
                                     f"mlpipe's local mirror ({target})") from None

        module.__getattr__ = __getattr__  # type: ignore[method-assign]


def install_mirrors() -> MirrorFinder:
    """Resolve the mirrored imports to mlpipe in this process (idempotent)."""
    for finder in sys.meta_path:
        if isinstance(finder, MirrorFinder):
            return finder
    for name in list(sys.modules):
        if name in MIRRORS or name in _PARENTS or name.partition(".")[0] == "azureml":
            del sys.modules[name]
    finder = MirrorFinder()
    sys.meta_path.insert(0, finder)
    os.environ[ENV_FLAG] = "1"
    # Step workers resolve the same runs folder (registered models) whatever their folder.
    os.environ.setdefault(RUNS_DIR_ENV, str(resolve_runs_dir()))
    urllib.request.install_opener(urllib.request.build_opener(StandInHandler()))
    _install_requests_stand_ins()
    return finder


class StandInHandler(urllib.request.BaseHandler):
    """``urllib`` downloads of URLs that ``mlpipe.toml`` ``[assets]`` maps (the URL itself or
    a prefix of it, e.g. a blob container) read the local stand-in instead."""

    handler_order = 100  # before the real HTTP handlers

    def _open(self, request: urllib.request.Request) -> Any:
        from mlpipe.compiler.assets import stand_in

        local = stand_in(request.full_url)
        if local is None:
            return None  # not mapped: the real handlers fetch it
        if not local.is_file():
            raise urllib.error.URLError(f"{request.full_url} is mapped to {local} in "
                                        "mlpipe.toml, which is not a file")
        headers = email.message.Message()
        headers["Content-Length"] = str(local.stat().st_size)
        response = urllib.response.addinfourl(local.open("rb"), headers, request.full_url, 200)
        response.msg = "OK"  # type: ignore[attr-defined]
        return response

    http_open = _open
    https_open = _open


def _install_requests_stand_ins() -> None:
    """``requests`` (when installed) reads mapped URLs from their stand-ins, like urllib."""
    try:
        adapters: Any = importlib.import_module("requests.adapters")
        models: Any = importlib.import_module("requests.models")
    except ImportError:
        return
    original = adapters.HTTPAdapter.send
    if getattr(original, "mlpipe_stand_ins", False):
        return

    def send(self: Any, request: Any, **kwargs: Any) -> Any:
        from mlpipe.compiler.assets import stand_in

        local = stand_in(request.url)
        if local is None:
            return original(self, request, **kwargs)
        response = models.Response()
        found = local.is_file()
        response.status_code, response.reason = (200, "OK") if found else (404, "Not Found")
        response._content = local.read_bytes() if found else b""
        response.headers["Content-Length"] = str(len(response._content))
        response.url, response.request = request.url, request
        return response

    send.mlpipe_stand_ins = True  # type: ignore[attr-defined]
    adapters.HTTPAdapter.send = send


def install_from_environment() -> None:
    """Install the mirrors when the parent ``mlpipe run-script`` asked for them."""
    if os.environ.get(ENV_FLAG) == "1":
        install_mirrors()


# -- notebooks ------------------------------------------------------------------------------------

_WRITEFILE = re.compile(r"^%%writefile(?:\s+(-a|--append))?\s+(\S+)\s*$")


class NotebookError(MlpipeError, ValueError):
    """An ``.ipynb`` file that is not a readable Jupyter notebook."""


def notebook_cells(path: Path) -> list[str]:
    """The code cells of an ``.ipynb`` file, as source text, in order; :class:`NotebookError`
    for a file that is not a notebook, is over the size or nesting limits, or has a cell
    whose ``source`` is not text (a string or a list of strings)."""
    try:
        check_file_size(path, MAX_NOTEBOOK_BYTES)
        text = path.read_text(encoding="utf-8")
        check_json_depth(text)
        data = json.loads(text)
    except InputLimitError as error:
        raise NotebookError(f"{error.where(str(path))} (the notebook is not run)") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise NotebookError(f"{path}: not a Jupyter notebook (not JSON: {error})") from None
    except OSError as error:
        raise NotebookError(f"{path}: cannot read it: {error.strerror or error}") from None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise NotebookError(f"{path}: not a Jupyter notebook (no 'cells' list)")
    out = []
    for number, cell in enumerate(cells):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            if isinstance(source, list) and all(isinstance(line, str) for line in source):
                out.append("".join(source))
            elif isinstance(source, str):
                out.append(source)
            else:
                raise NotebookError(f"{path}: cells[{number}].source: expected text or a list "
                                    f"of text lines, got {_shape(source)}")
    return out


def _shape(value: Any) -> str:
    """``a list holding int`` / ``int``: what a value is, for messages."""
    if isinstance(value, list):
        kinds = sorted({type(item).__name__ for item in value if not isinstance(item, str)})
        return f"a list holding {', '.join(kinds)}"
    return type(value).__name__


def cell_code(source: str, index: int, note: Any = print) -> str:
    """A cell's Python: ``%%writefile`` writes its file; other magics and ``!`` shell escapes
    are skipped with a note (their lines become ``pass`` so indentation stays valid)."""
    lines = source.splitlines()
    first = lines[0].strip() if lines else ""
    written = _WRITEFILE.match(first)
    if written:
        body = "\n".join(lines[1:]) + "\n"
        return (f"with open({written.group(2)!r}, {'a' if written.group(1) else 'w'!r}, "
                f"encoding='utf-8') as _mlpipe_f:\n    _mlpipe_f.write({body!r})\n")
    if first.startswith("%%"):
        note(f"mlpipe run-script: cell {index}: skipped cell magic {first.split()[0]}")
        return ""
    kept = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            note(f"mlpipe run-script: cell {index}: skipped {stripped.split()[0]!r}")
            kept.append(line[: len(line) - len(stripped)] + "pass")
        else:
            kept.append(line)
    return "\n".join(kept) + "\n"


def _display_last_expression(code: str, namespace: dict[str, Any], filename: str) -> None:
    """Run ``code``; like Jupyter, print the value of a final bare expression."""
    import ast

    tree = ast.parse(code, filename)
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr):
        tree.body.pop()
        exec(compile(tree, filename, "exec"), namespace)
        value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
        if value is not None:
            print(repr(value))
    else:
        exec(compile(tree, filename, "exec"), namespace)


def _display(*values: Any, **kwargs: Any) -> None:
    """IPython's ``display(...)`` builtin, as text."""
    for value in values:
        print(repr(value))


def run_notebook(path: Path, argv: Sequence[str] = ()) -> None:
    """Run the code cells of ``path`` in order in one namespace (working folder: its folder)."""
    cells = notebook_cells(path)
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": str(path),
                                 "display": _display}
    sys.argv = [str(path), *argv]
    for index, source in enumerate(cells):
        code = cell_code(source, index, note=lambda text: print(text, file=sys.stderr))
        if code.strip():
            _display_last_expression(code, namespace, f"{path}#cell{index}")


def run_path(path: str | os.PathLike[str], argv: Sequence[str] = ()) -> None:
    """Run a ``.py`` script (like ``python FILE``) or the cells of an ``.ipynb`` notebook (in
    its folder, like Jupyter) with the mirrors installed."""
    script = Path(path).resolve()
    install_mirrors()
    sys.path.insert(0, str(script.parent))
    if script.suffix == ".ipynb":
        os.chdir(script.parent)  # as Jupyter starts a kernel in the notebook's folder
        run_notebook(script, argv)
    else:
        sys.argv = [str(script), *argv]
        runpy.run_path(str(script), run_name="__main__")


__all__ = ["ENV_FLAG", "FALLBACKS", "INERT", "MIRRORS", "Inert", "MirrorFinder", "NotebookError",
           "StandInHandler", "cell_code", "install_from_environment", "install_mirrors",
           "notebook_cells", "run_notebook", "run_path"]
