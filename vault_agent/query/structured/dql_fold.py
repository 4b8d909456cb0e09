"""Constant expressions of one DQL text folded to values (`date(today) - dur(7 days)` → one
date), and the error that names an unsupported construct by its position in that text.

Shared by the note query's compiler (dql_compile.py, its WHERE in dql_where.py) and the task
query's (query/tasks/dql_task.py).
"""

from __future__ import annotations

from vault_agent.errors import InvalidQuery
from vault_agent.query.structured import dql_ast as A
from vault_agent.query.structured.dql_lex import where
from vault_agent.query.structured.values import (
    Clock,
    Duration,
    Lit,
    date_shorthand,
    parse_duration,
    shift,
    typed_literal,
)


class ConstFolder:
    """Folds the constant parts of one query text; `today` is the clock's."""

    def __init__(self, text: str, clock: Clock) -> None:
        self.text = text
        self.clock = clock

    def at(self, node: A.Node) -> str:
        return where(self.text, node.pos)

    def refuse(self, what: str, node: A.Node) -> InvalidQuery:
        return InvalidQuery(f"dql: {what} at {self.at(node)} is not supported (see docs/query.md)")

    def const(self, expr: A.Expr) -> Lit | None:
        """The value of a constant expression, or None when it involves a field."""
        if isinstance(expr, A.Num):
            return Lit("number", expr.value)
        if isinstance(expr, A.Str):
            return Lit("string", expr.value)
        if isinstance(expr, A.Bool):
            return Lit("boolean", expr.value)
        if isinstance(expr, A.Null):
            return Lit("null", None)
        if isinstance(expr, A.LinkLit):
            return Lit("link", expr.target)
        if isinstance(expr, A.DateLit):
            return self.date_lit(expr)
        if isinstance(expr, A.DurLit):
            dur = parse_duration(expr.text)
            if dur is None:
                raise InvalidQuery(f"dql: expected a duration like dur(7 days) at {self.at(expr)}")
            return Lit("duration", dur)
        if isinstance(expr, A.Unary) and expr.op == "-":
            inner = self.const(expr.operand)
            if inner is None:
                return None
            if inner.kind == "number" and isinstance(inner.value, float):
                return Lit("number", -inner.value)
            if inner.kind == "duration" and isinstance(inner.value, Duration):
                return Lit("duration", -inner.value)
            raise self.refuse("'-' before this value", expr)
        if isinstance(expr, A.Call) and expr.name == "dur":
            text = self.const(expr.args[0]) if len(expr.args) == 1 else None
            dur = parse_duration(str(text.value)) if text is not None and text.kind == "string" else None
            if dur is None:
                raise InvalidQuery(f"dql: expected a duration like dur(7 days) at {self.at(expr)}")
            return Lit("duration", dur)
        if isinstance(expr, A.Call) and expr.name == "date" and len(expr.args) == 1:
            inner = self.const(expr.args[0])
            if inner is not None and inner.kind == "string":
                found = typed_literal(inner.value)
                if found.kind == "date":
                    return Lit("date", found.value)
            return None if inner is None else Lit("null", None)
        if isinstance(expr, A.Binary) and expr.op in ("+", "-", "*", "/", "%"):
            a, b = self.const(expr.left), self.const(expr.right)
            if a is None or b is None:
                return None
            return self.arith(expr, a, b)
        return None

    def date_lit(self, expr: A.DateLit) -> Lit:
        value = date_shorthand(expr.text, self.clock)
        if value is None:
            found = typed_literal(expr.text)
            if found.kind != "date":
                raise InvalidQuery(
                    f"dql: expected a date like date(2024-05-01) or date(today) at {self.at(expr)}"
                )
            value = found.value  # type: ignore[assignment]
        return Lit("date", value)

    def arith(self, expr: A.Binary, a: Lit, b: Lit) -> Lit:
        op = expr.op
        try:
            if a.kind == b.kind == "number":
                x, y = float(a.value), float(b.value)  # type: ignore[arg-type]
                result = {"+": x + y, "-": x - y, "*": x * y}.get(op)
                if result is None:
                    result = x / y if op == "/" else x % y
                return Lit("number", result)
            if a.kind == "date" and b.kind == "duration" and op in "+-":
                return Lit("date", shift(int(a.value), b.value, 1 if op == "+" else -1))  # type: ignore[arg-type]
            if a.kind == "duration" and b.kind == "date" and op == "+":
                return Lit("date", shift(int(b.value), a.value))  # type: ignore[arg-type]
            if a.kind == b.kind == "duration" and op in "+-":
                return Lit("duration", a.value + (b.value if op == "+" else -b.value))  # type: ignore[operator]
            if a.kind == b.kind == "date" and op == "-":
                return Lit("duration", Duration(0, int(a.value) - int(b.value)))  # type: ignore[arg-type]
            if a.kind == b.kind == "string" and op == "+":
                return Lit("string", f"{a.value}{b.value}")
        except (ZeroDivisionError, OverflowError, ValueError):
            return Lit("null", None)
        raise InvalidQuery(
            f"dql: cannot apply '{op}' to {a.describe()} and {b.describe()} at {self.at(expr)}"
        )


def truthy_const(value: Lit) -> bool:
    """A constant condition's truth (`WHERE 0` matches nothing)."""
    return value.kind not in ("null",) and value.value not in (False, 0.0, "")


def compare_consts(a: Lit, op: str, b: Lit) -> bool:
    """Two constants compared (a condition with no field folds to true or false)."""
    if a.kind != b.kind or a.kind in ("null", "link"):
        return op == "!=" if a.kind != b.kind else (op in ("=", "<=", ">=") and a.value == b.value)
    x, y = a.value, b.value
    if isinstance(x, Duration) and isinstance(y, Duration):
        x, y = x.approx_micros(), y.approx_micros()
    ops = {"=": x == y, "!=": x != y}
    if op in ops:
        return ops[op]
    return bool({"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op])  # type: ignore[operator]
