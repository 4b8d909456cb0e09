"""What a result shows: property values rebuilt from `props` rows, and the checks on DQL
table columns, which evaluate.py evaluates per result (a small interpreter over the parsed
expression, never Python code).

Values in answers: text, numbers, booleans and null as JSON; dates as written (ISO); lists
as arrays; maps as objects rebuilt from their `parent.child` rows; durations as ISO 8601
(`P3D`); links as `[[path]]`. Each answer value is bounded: text cut at 1,000 characters,
lists at 100 items (`cut` reports it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from vault_agent.errors import InvalidQuery
from vault_agent.property_values import iso_of_micros
from vault_agent.query.structured import dql_ast as A
from vault_agent.query.structured.dql_lex import where
from vault_agent.query.structured.fields import field_ref
from vault_agent.query.structured.values import (
    Duration,
)

MAX_TEXT = 1_000
MAX_ITEMS = 100
# Functions a table column may call: pure, bounded, over values already fetched.
FUNCTIONS = ("contains", "icontains", "econtains", "length", "lower", "upper", "default", "date", "dur",
             "round", "string", "number", "join", "min", "max", "sum", "list")  # fmt: skip
Row = tuple[str, int, bool, str, Any, Any, Any, Any]  # key, item, is_list, kind, s, n, d, b


@dataclass(frozen=True)
class DateV:
    us: int
    date_only: bool
    text: str | None = None  # as the note wrote it (answers show it so)


@dataclass(frozen=True)
class LinkV:
    target: str


@dataclass
class NoteContext:
    """Everything a column may read of one result."""

    path: str
    folder: str
    title: str
    size: int
    mtime_us: int
    ctime_us: int
    tags: list[str]
    aliases: list[str]
    props: dict[str, Any] = field(default_factory=dict)  # canonical key → typed value
    outlinks: Callable[[], list[str]] | None = None
    inlinks: Callable[[], list[str]] | None = None


# ---------------------------------------------------------------------- props → values
def _scalar(kind: str, s: Any, n: Any, d: Any, b: Any) -> Any:
    if kind == "number":
        if n is None:
            return None
        return (
            int(n) if float(n).is_integer() and "." not in str(s) and "e" not in str(s).lower() else float(n)
        )
    if kind == "boolean":
        return bool(b)
    if kind in ("date", "datetime"):
        return DateV(int(d), kind == "date", s)
    if kind == "string":
        return s
    if kind == "list":
        return []
    return None  # null, object (rebuilt by the caller)


def rebuild(rows: Iterable[Row]) -> dict[str, Any]:
    """Typed values per canonical key from `props` rows (sorted by key, item)."""
    by_key: dict[str, list[Row]] = {}
    for row in rows:
        by_key.setdefault(row[0], []).append(row)
    values: dict[str, Any] = {}
    for key in sorted(by_key, key=lambda k: k.count(".")):
        items = by_key[key]
        first = items[0]
        if first[2]:
            value: Any = [
                {} if r[3] == "object" else _scalar(r[3], r[4], r[5], r[6], r[7])
                for r in items
                if r[3] != "empty"
            ]
        elif first[3] == "object":
            value = {}
        else:
            value = _scalar(first[3], first[4], first[5], first[6], first[7])
        values[key] = value
        parent, _, child = key.rpartition(".")
        if parent and isinstance(values.get(parent), dict):
            values[parent][child] = value
    return values


def to_json(value: Any, cut: list[bool]) -> Any:
    """An answer value (module doc), bounded; `cut[0]` is set when something was cut."""
    if isinstance(value, DateV):
        return value.text or iso_of_micros(value.us, value.date_only)
    if isinstance(value, Duration):
        return value.iso()
    if isinstance(value, LinkV):
        return f"[[{value.target}]]"
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            cut[0] = True
            return value[:MAX_TEXT]
        return value
    if isinstance(value, list):
        if len(value) > MAX_ITEMS:
            cut[0] = True
        return [to_json(v, cut) for v in value[:MAX_ITEMS]]
    if isinstance(value, dict):
        return {k: to_json(v, cut) for k, v in list(value.items())[:MAX_ITEMS]}
    if isinstance(value, float) and value != value:
        return None
    return value


# ---------------------------------------------------------------------- checks
def check_expr(expr: A.Expr, text: str) -> None:
    """Refuse, before running anything, functions and fields a column cannot evaluate.

    Raises:
        InvalidQuery: an unknown function or `file.*` field.
    """
    if isinstance(expr, A.Call):
        if expr.name not in FUNCTIONS:
            raise InvalidQuery(f"dql: the function {expr.name}() at {where(text, expr.pos)} is not supported")
        for arg in expr.args:
            check_expr(arg, text)
        return
    if isinstance(expr, A.Ident | A.Member | A.Index):
        if field_ref(expr, text) is None:
            raise InvalidQuery(f"dql: this expression at {where(text, expr.pos)} is not supported")
        return
    if isinstance(expr, A.Unary):
        check_expr(expr.operand, text)
    elif isinstance(expr, A.Binary):
        check_expr(expr.left, text)
        check_expr(expr.right, text)
    elif isinstance(expr, A.ListLit):
        for item in expr.items:
            check_expr(item, text)


def referenced(exprs: Iterable[Any]) -> tuple[set[str], set[str]]:
    """(property keys, file fields) the expressions read."""
    props: set[str] = set()
    files: set[str] = set()

    def walk(e: Any) -> None:
        ref = field_ref(e) if isinstance(e, A.Ident | A.Member | A.Index) else None
        if ref is not None:
            (files if ref.file else props).add(ref.name)
            return
        for child in _children(e):
            walk(child)

    for e in exprs:
        walk(e)
    return props, files


def _children(e: Any) -> tuple[Any, ...]:
    if isinstance(e, A.Call):
        return e.args
    if isinstance(e, A.Unary):
        return (e.operand,)
    if isinstance(e, A.Binary):
        return (e.left, e.right)
    if isinstance(e, A.ListLit):
        return e.items
    return ()
