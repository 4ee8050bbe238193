"""One home for each word of the shared vocabulary (issue #27): the data and literal types
(``mlpipe/io_types.py``), a job's folder and its files (``mlpipe/runs.py``), the files of a
step's ``logs/`` folder (``mlpipe/runtime/step_logs.py``), the ``--set`` option
(``mlpipe/cli/arguments.py``) and the number parser (``mlpipe/schema/ranges.py``). Each test
reads every module's code (docstrings left out) and fails on a spelling outside the owner."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

from mlpipe.io_types import DATA_TYPES, INPUT_MODES, LITERAL_TYPES, OUTPUT_MODES
from mlpipe.runs import CANCEL_FILE, JOB_LOCK_FILE, JOB_RECORD_FILE, JOB_REPORT_FILE
from mlpipe.runtime.step_logs import LAYOUT

PACKAGE = Path(__file__).resolve().parent.parent / "mlpipe"


@functools.cache
def _modules() -> tuple[tuple[str, ast.Module], ...]:
    return tuple((path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
                 for path in sorted(PACKAGE.rglob("*.py")))


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)):
            found.add(id(body[0].value))
    return found


def _strings(tree: ast.Module) -> Iterator[ast.Constant]:
    """The string constants of the code (not docstrings)."""
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node


def _spelled(words: set[str], owner: str) -> list[str]:
    return [f"{module}:{node.lineno}: {node.value!r}" for module, tree in _modules()
            if module != owner for node in _strings(tree) if node.value in words]


def test_a_job_folder_and_its_files_are_named_in_runs_only() -> None:
    names = {JOB_RECORD_FILE, JOB_LOCK_FILE, CANCEL_FILE, JOB_REPORT_FILE}
    assert _spelled(names, "runs.py") == []
    joined = [f"{module}:{node.lineno}: {ast.unparse(node)}" for module, tree in _modules()
              if module != "runs.py" for node in ast.walk(tree)
              if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
              and ast.unparse(node.left).split(".")[-1] in ("runs", "runs_dir", "runs_dir()")
              and isinstance(node.right, (ast.Name, ast.Attribute))
              and ast.unparse(node.right).endswith("name")]
    assert joined == [], "a job's folder is runs.job_dir(runs_dir, name)"


def test_the_files_of_a_steps_logs_are_named_in_step_logs_only() -> None:
    layout = [LAYOUT.job_result, LAYOUT.readme, LAYOUT.master_role, LAYOUT.processed,
              LAYOUT.process_summary, LAYOUT.node_summary, LAYOUT.runs, LAYOUT.samples,
              LAYOUT.task_stream, LAYOUT.error_summary, LAYOUT.std_log]
    names = {path.name for path in layout} | {LAYOUT.relative(path) for path in layout}
    assert _spelled(names, "runtime/step_logs.py") == []


def _collections(tree: ast.Module) -> Iterator[tuple[int, set[str]]]:
    """The string members of each tuple, list, set and ``Literal[...]`` of the code."""
    for node in ast.walk(tree):
        items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            items = node.slice.elts
        if items:
            yield node.lineno, {item.value for item in items
                                if isinstance(item, ast.Constant) and isinstance(item.value, str)}


def test_the_data_and_literal_types_are_listed_in_io_types_only() -> None:
    lists = [f"{module}:{line}: {sorted(members)}" for module, tree in _modules()
             if module != "io_types.py" for line, members in _collections(tree)
             if len(members & set(DATA_TYPES)) >= 3 or members >= set(LITERAL_TYPES)]
    assert lists == []


def test_the_modes_are_listed_in_io_types_only() -> None:
    """A list of the input or output modes (``ro_mount``, ``download``, ...) is io_types'
    (``INPUT_MODES``, ``OUTPUT_MODES``, ``PORT_MODES``, ``EVAL_MODES``); a rule about some
    of them (which are read-only, which are streamed) stays with its owner."""
    lists = [f"{module}:{line}: {sorted(members)}" for module, tree in _modules()
             if module != "io_types.py" for line, members in _collections(tree)
             if members >= set(INPUT_MODES) or members >= set(OUTPUT_MODES)
             or members >= {"eval_mount", "eval_download"} and len(members) == 2]
    assert lists == []


def test_set_is_built_once() -> None:
    built = [f"{module}:{node.lineno}" for module, tree in _modules()
             if module != "cli/arguments.py" for node in ast.walk(tree)
             if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"
             and any(isinstance(a, ast.Constant) and a.value == "--set" for a in node.args)]
    assert built == [], "add --set with mlpipe.cli.arguments.add_overrides"


def test_numbers_are_read_by_one_parser() -> None:
    parsers = [f"{module}:{node.lineno}: {node.name}" for module, tree in _modules()
               if module != "schema/ranges.py" for node in ast.walk(tree)
               if isinstance(node, ast.FunctionDef) and node.name.strip("_") == "to_number"]
    assert parsers == [], "read a number with mlpipe.schema.ranges.to_number"


def _names_a_record(node: ast.expr) -> bool:
    """``record``, ``other_record``, ``self.record``, ``job_record``: a job record's name."""
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return name == "record" or name.endswith("_record")


def test_the_job_record_is_read_through_its_model_only() -> None:
    """No ``record["key"]`` or ``record.get("key")`` outside ``jobs/record.py``: a job's
    record is a :class:`~mlpipe.jobs.record.JobRecord`, read by attribute."""
    looked_up = [f"{module}:{node.lineno}: {ast.unparse(node)}" for module, tree in _modules()
                 if module != "jobs/record.py" for node in ast.walk(tree)
                 if (isinstance(node, ast.Subscript) and _names_a_record(node.value)
                     and isinstance(node.slice, ast.Constant))
                 or (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                     and node.func.attr == "get" and _names_a_record(node.func.value))]
    spelled = [f"{path.relative_to(PACKAGE)}: {word}" for path in sorted(PACKAGE.rglob("*.py"))
               if path.relative_to(PACKAGE).as_posix() != "jobs/record.py"
               for word in ('record["', "record['", "record.get(")
               if word in path.read_text(encoding="utf-8")]
    assert looked_up == [] and spelled == []
