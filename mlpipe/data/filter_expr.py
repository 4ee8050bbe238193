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

import pandas as pd

_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
}
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}


class FilterSyntaxError(ValueError):
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
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        _check(node.left)
        _check(node.right)
    elif isinstance(node, ast.Compare):
        _check(node.left)
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)):
                if not isinstance(right, (ast.List, ast.Tuple, ast.Set)):
                    raise FilterSyntaxError("'in' needs a list of literals, e.g. x in (1, 2)")
                for element in right.elts:
                    if not isinstance(element, ast.Constant):
                        raise FilterSyntaxError("'in' lists may hold literals only")
            elif isinstance(op, (ast.Is, ast.IsNot)):
                if not (isinstance(right, ast.Constant) and right.value is None):
                    raise FilterSyntaxError("'is' / 'is not' compare with None only")
            elif type(op) in _COMPARE:
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


def columns_used(tree: ast.Expression) -> set[str]:
    """Column names an expression reads."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in ("True", "False", "None"):
            names.add(node.id)
        elif isinstance(node, ast.Call):
            names.add(node.args[0].value)  # type: ignore[attr-defined]
    return names


def evaluate(tree: ast.Expression, frame: pd.DataFrame) -> pd.Series:
    """The boolean row mask of ``tree`` over ``frame`` (nulls count as False)."""
    result = _eval(tree.body, frame)
    if not isinstance(result, pd.Series):
        return pd.Series(bool(result), index=frame.index)
    return result.fillna(False).astype(bool)


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    if name not in frame.columns:
        raise KeyError(name)
    return frame[name]


def _coerce(left: Any, right: Any) -> tuple[Any, Any]:
    """Read a string literal as a number when the other side is a numeric column."""
    def fix(series: Any, literal: Any) -> Any:
        if isinstance(series, pd.Series) and isinstance(literal, str) \
                and pd.api.types.is_numeric_dtype(series.dtype) \
                and not pd.api.types.is_bool_dtype(series.dtype):
            try:
                return float(literal)
            except ValueError:
                return literal
        return literal
    return fix(right, left), fix(left, right)


def _eval(node: ast.AST, frame: pd.DataFrame) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return _column(frame, node.id)
    if isinstance(node, ast.Call):
        return _column(frame, node.args[0].value)  # type: ignore[attr-defined]
    if isinstance(node, ast.BoolOp):
        values = [_as_mask(_eval(v, frame), frame) for v in node.values]
        result = values[0]
        for value in values[1:]:
            result = (result & value) if isinstance(node.op, ast.And) else (result | value)
        return result
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, frame)
        if isinstance(node.op, ast.Not):
            return ~_as_mask(operand, frame)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_eval(node.left, frame), _eval(node.right, frame))
    if isinstance(node, ast.Compare):
        left = _eval(node.left, frame)
        result: Any = True
        for op, right_node in zip(node.ops, node.comparators):
            if isinstance(op, (ast.Is, ast.IsNot)):
                isnull = left.isna() if isinstance(left, pd.Series) else left is None
                part = isnull if isinstance(op, ast.Is) else ~isnull
                right = None
            elif isinstance(op, (ast.In, ast.NotIn)):
                values = [e.value for e in right_node.elts]  # type: ignore[attr-defined]
                right = values
                if isinstance(left, pd.Series):
                    if pd.api.types.is_numeric_dtype(left.dtype):
                        values = [_number(v) for v in values]
                    part = left.isin(values)
                    if isinstance(op, ast.NotIn):
                        part = ~part & left.notna()
                else:
                    part = (left in values) == isinstance(op, ast.In)
            else:
                right = _eval(right_node, frame)
                a, b = _coerce(left, right)
                part = _COMPARE[type(op)](a, b)
            result = part if result is True else (_as_mask(result, frame) & _as_mask(part, frame))
            left = right
        return result
    raise FilterSyntaxError(f"unsupported syntax in filter: {ast.unparse(node)!r}")


def _number(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def _as_mask(value: Any, frame: pd.DataFrame) -> Any:
    if isinstance(value, pd.Series):
        return value.fillna(False).astype(bool)
    return pd.Series(bool(value), index=frame.index)
