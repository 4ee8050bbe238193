"""Evaluating a checked ``filter`` expression over a DataFrame (worker side).

See :mod:`mlpipe.data.filter_expr` for the supported subset.
"""

from __future__ import annotations

import ast
from typing import Any

import pandas as pd

from mlpipe.data.filter_expr import BINARY_OPS, COMPARE_OPS, FilterSyntaxError


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
        mask = values[0]
        for value in values[1:]:
            mask = (mask & value) if isinstance(node.op, ast.And) else (mask | value)
        return mask
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, frame)
        if isinstance(node.op, ast.Not):
            return ~_as_mask(operand, frame)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        return BINARY_OPS[type(node.op)](_eval(node.left, frame), _eval(node.right, frame))
    if isinstance(node, ast.Compare):
        left = _eval(node.left, frame)
        result: Any = True
        for op, right_node in zip(node.ops, node.comparators, strict=True):
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
                part = COMPARE_OPS[type(op)](a, b)
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
