"""An AST back to expression text that parses to the same AST (`to_source`).

Parentheses only where precedence needs them: a left operand of lower precedence, a right
operand of lower or equal precedence (all operators are left-associative), a unary or binary
receiver of a postfix. Strings are written with double quotes and JSON-style escapes
(a subset of JavaScript's); numbers in the shortest form that reads back the same float.
"""

from __future__ import annotations

import json
import math

from vault_agent.query.bases import expr_ast as A

_NAME_SAFE_KEYS = {"true", "false", "null", "this"}


def to_source(expr: A.Expr) -> str:
    """Expression text for an AST: `parse_expression(to_source(e)) == e`."""
    return _emit(expr)


def _string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _number(value: float) -> str:
    if math.isnan(value):
        return "(0 / 0)"
    if math.isinf(value):
        return "(1 / 0)" if value > 0 else "(-1 / 0)"
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def _is_name(key: str) -> bool:
    return key.isidentifier() and key not in _NAME_SAFE_KEYS


def _emit(node: A.Expr) -> str:
    if isinstance(node, A.Num):
        return _number(node.value)
    if isinstance(node, A.Str):
        return _string(node.value)
    if isinstance(node, A.Bool):
        return "true" if node.value else "false"
    if isinstance(node, A.Null):
        return "null"
    if isinstance(node, A.This):
        return "this"
    if isinstance(node, A.Ident):
        return node.name
    if isinstance(node, A.Regex):
        return f"/{node.pattern}/{node.flags}"
    if isinstance(node, A.ListLit):
        return "[" + ", ".join(_emit(item) for item in node.items) + "]"
    if isinstance(node, A.ObjectLit):
        pairs = (f"{key if _is_name(key) else _string(key)}: {_emit(v)}" for key, v in node.entries)
        return "{" + ", ".join(pairs) + "}"
    if isinstance(node, A.Call):
        return f"{node.name}({_args(node.args)})"
    if isinstance(node, A.Member):
        return f"{_receiver(node.obj)}.{node.name}"
    if isinstance(node, A.MethodCall):
        return f"{_receiver(node.obj)}.{node.name}({_args(node.args)})"
    if isinstance(node, A.Index):
        return f"{_receiver(node.obj)}[{_emit(node.index)}]"
    if isinstance(node, A.Unary):
        operand = _emit(node.operand)
        if isinstance(node.operand, A.Binary) or (isinstance(node.operand, A.Num) and node.operand.value < 0):
            operand = f"({operand})"
        elif node.op == "-" and operand.startswith("-"):
            operand = f" {operand}"  # `- -x`, never `--x`
        return f"{node.op}{operand}"
    power = A.PRECEDENCE[node.op]
    left, right = _emit(node.left), _emit(node.right)
    if isinstance(node.left, A.Binary) and A.PRECEDENCE[node.left.op] < power:
        left = f"({left})"
    if isinstance(node.right, A.Binary) and A.PRECEDENCE[node.right.op] <= power:
        right = f"({right})"
    return f"{left} {node.op} {right}"


def _args(args: tuple[A.Expr, ...]) -> str:
    return ", ".join(_emit(arg) for arg in args)


def _receiver(node: A.Expr) -> str:
    """A postfix's receiver: operators, negative numbers and numbers need parentheses
    (`(-1).abs()`, and `(2.5).round()` reads better than `2.5.round()`)."""
    text = _emit(node)
    if isinstance(node, A.Unary | A.Binary | A.Num) or text.startswith("("):
        return f"({text})"
    return text
