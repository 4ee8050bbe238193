"""The ``filter`` transformation's expression language: a safe subset, parsed with ``ast``.

Nothing is evaluated with ``eval``. An expression is checked once (when the
MLTable file is loaded) and then applied column-wise to a DataFrame.

Supported (the forms mltable documents, plus the obvious companions):

* columns: a bare name (``Price``) or ``col("Column Name")``
* literals: strings, integers, floats, ``True``, ``False``, ``None``; tuples/lists of literals
* comparisons: ``== != < <= > >=`` (chainable), ``in`` / ``not in`` a list,
  ``is None`` / ``is not None``
* boolean logic: ``and``, ``or``, ``not``; arithmetic: ``+ - * / // %`` and unary ``-``

A string literal compared with a numeric column is read as a number
(``target > "0.5"``), as mltable does. Rows where a comparison meets a null are
dropped.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from mlpipe.errors import MlpipeError

COMPARE_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
}
BINARY_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}


class FilterSyntaxError(MlpipeError, ValueError):
    """The expression uses something outside the supported subset."""


def check_expression(text: str) -> ast.Expression:
    """Parse ``text`` and make sure it only uses the supported subset."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise FilterSyntaxError(f"invalid filter expression {text!r}: {exc.msg}") from exc
    _check(tree.body)
    return tree


def _check(node: ast.AST) -> None:
    if isinstance(node, ast.BoolOp):
        for value in node.values:
            _check(value)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub, ast.UAdd)):
        _check(node.operand)
    elif isinstance(node, ast.BinOp) and type(node.op) in BINARY_OPS:
        _check(node.left)
        _check(node.right)
    elif isinstance(node, ast.Compare):
        _check(node.left)
        for op, right in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, (ast.In, ast.NotIn)):
                if not isinstance(right, (ast.List, ast.Tuple, ast.Set)):
                    raise FilterSyntaxError("'in' needs a list of literals, e.g. x in (1, 2)")
                for element in right.elts:
                    if not isinstance(element, ast.Constant):
                        raise FilterSyntaxError("'in' lists may hold literals only")
            elif isinstance(op, (ast.Is, ast.IsNot)):
                if not (isinstance(right, ast.Constant) and right.value is None):
                    raise FilterSyntaxError("'is' / 'is not' compare with None only")
            elif type(op) in COMPARE_OPS:
                _check(right)
            else:
                raise FilterSyntaxError(f"unsupported comparison {type(op).__name__}")
    elif isinstance(node, ast.Constant):
        if not isinstance(node.value, (str, int, float, bool)) and node.value is not None:
            raise FilterSyntaxError(f"unsupported literal {node.value!r}")
    elif isinstance(node, ast.Name):
        pass
    elif isinstance(node, ast.Call):
        if not (isinstance(node.func, ast.Name) and node.func.id == "col" and not node.keywords
                and len(node.args) == 1 and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            raise FilterSyntaxError('the only function is col("column name")')
    else:
        raise FilterSyntaxError(f"unsupported syntax in filter: {ast.unparse(node)!r}")
