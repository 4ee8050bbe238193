"""Running published azure-ai-ml / azureml v1 scripts and notebooks unchanged.

:func:`install_mirrors` forces the import hook of :mod:`mlpipe.import_mirrors` (Azure's
module names give mlpipe's mirrors even where the real packages are installed) in this
process and, through ``MLPIPE_IMPORT_MIRRORS=1``, in the step workers and command steps it
starts; URLs that ``mlpipe.toml`` maps read their local stand-ins
(:mod:`mlpipe.url_stand_ins`).

:func:`run_path` runs a ``.py`` file or the code cells of an ``.ipynb`` in order.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlpipe.errors import MlpipeError
from mlpipe.import_mirrors import ENV_FLAG, install
from mlpipe.limits import MAX_NOTEBOOK_BYTES, InputLimitError, check_file_size, check_json_depth
from mlpipe.runs import RUNS_DIR_ENV, resolve_runs_dir
from mlpipe.url_stand_ins import install_url_stand_ins


def install_mirrors() -> None:
    """Resolve Azure's module names to mlpipe's mirrors in this process and the ones it
    starts, even where the real packages are installed (idempotent); mapped URLs read their
    ``mlpipe.toml`` stand-ins."""
    os.environ[ENV_FLAG] = "1"
    install("force")
    # Step workers resolve the same runs folder (registered models) whatever their folder.
    os.environ.setdefault(RUNS_DIR_ENV, str(resolve_runs_dir()))
    install_url_stand_ins()


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
        # IPython expands {name} (and {name.attr}, {name[0]}) in a magic's line from the
        # notebook's variables (``%%writefile {src_dir}/train.py``); text it cannot expand
        # stays as written
        body = "\n".join(lines[1:]) + "\n"
        return (f"try:\n    _mlpipe_path = {written.group(2)!r}.format_map(globals())\n"
                f"except (KeyError, AttributeError, IndexError, ValueError):\n"
                f"    _mlpipe_path = {written.group(2)!r}\n"
                f"with open(_mlpipe_path, {'a' if written.group(1) else 'w'!r}, "
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


def run_path(path: str | os.PathLike[str], argv: Sequence[str] = ()) -> int:
    """Run a ``.py`` script (like ``python FILE``) or the cells of an ``.ipynb`` notebook (in
    its folder, like Jupyter) with the mirrors installed; its exit code: 0, or what its
    ``sys.exit(...)`` says, as the interpreter reads it (``None`` 0, a number itself, any
    other value printed on stderr and 1)."""
    script = Path(path).resolve()
    install_mirrors()
    sys.path.insert(0, str(script.parent))
    try:
        if script.suffix == ".ipynb":
            os.chdir(script.parent)  # as Jupyter starts a kernel in the notebook's folder
            run_notebook(script, argv)
        else:
            sys.argv = [str(script), *argv]
            runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exit_:
        return exit_code(exit_.code)
    return 0


def exit_code(code: object) -> int:
    """The exit code of ``sys.exit(code)``, as the interpreter makes it: ``None`` is 0, an
    integer itself, anything else is printed on stderr and is 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return int(code)
    print(code, file=sys.stderr, flush=True)
    return 1


__all__ = ["NotebookError", "cell_code", "exit_code", "install_mirrors", "notebook_cells",
           "run_notebook", "run_path"]
