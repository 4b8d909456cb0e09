"""DQL table columns evaluated for one result: a small interpreter over the parsed
expression (never Python code), over the values display.py rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vault_agent.property_values import iso_of_micros
from vault_agent.query.structured import dql_ast as A
from vault_agent.query.structured.display import DateV, LinkV, NoteContext
from vault_agent.query.structured.fields import FieldRef, field_ref
from vault_agent.query.structured.values import (
    Clock,
    Duration,
    date_shorthand,
    parse_duration,
    shift,
    typed_literal,
)


class Evaluator:
    """Evaluates a column expression for one note; any type error yields null (Dataview
    shows nothing either), so one odd value never fails the whole answer."""

    def __init__(self, ctx: NoteContext, clock: Clock) -> None:
        self.ctx = ctx
        self.clock = clock

    def file_field(self, name: str) -> Any:
        c = self.ctx
        stem = c.path.rsplit("/", 1)[-1]
        values: dict[str, Callable[[], Any]] = {
            "name": lambda: stem.rsplit(".", 1)[0] if "." in stem else stem,
            "path": lambda: c.path,
            "folder": lambda: c.folder,
            "ext": lambda: stem.rsplit(".", 1)[1] if "." in stem else "",
            "link": lambda: LinkV(c.path),
            "size": lambda: c.size,
            "mtime": lambda: DateV(c.mtime_us, False),
            "ctime": lambda: DateV(c.ctime_us, False),
            "mday": lambda: DateV(c.mtime_us // 86_400_000_000 * 86_400_000_000, True),
            "cday": lambda: DateV(c.ctime_us // 86_400_000_000 * 86_400_000_000, True),
            "tags": lambda: _expanded_tags(c.tags),
            "etags": lambda: [f"#{t}" for t in c.tags],
            "aliases": lambda: list(c.aliases),
            "outlinks": lambda: [LinkV(p) for p in (c.outlinks() if c.outlinks else [])],
            "inlinks": lambda: [LinkV(p) for p in (c.inlinks() if c.inlinks else [])],
        }
        return values[name]()

    def value(self, e: Any) -> Any:
        try:
            return self._eval(e)
        except (TypeError, ValueError, ZeroDivisionError, OverflowError, AttributeError):
            return None

    def _eval(self, e: Any) -> Any:
        if isinstance(e, A.Num):
            return int(e.value) if e.value.is_integer() else e.value
        if isinstance(e, A.Str):
            return e.value
        if isinstance(e, A.Bool):
            return e.value
        if isinstance(e, A.Null):
            return None
        if isinstance(e, A.LinkLit):
            return LinkV(e.target)
        if isinstance(e, A.DateLit):
            found = date_shorthand(e.text, self.clock)
            if found is not None:
                return DateV(found, e.text.lower() != "now")
            lit = typed_literal(e.text)
            return DateV(int(lit.value), len(e.text) == 10) if lit.kind == "date" else None  # type: ignore[arg-type]
        if isinstance(e, A.DurLit):
            return parse_duration(e.text)
        if isinstance(e, A.ListLit):
            return [self._eval(i) for i in e.items]
        if isinstance(e, A.Ident | A.Member | A.Index):
            ref = field_ref(e)
            assert ref is not None
            return self.ref(ref)
        if isinstance(e, A.Unary):
            v = self._eval(e.operand)
            if e.op == "!":
                return not _truthy(v)
            return -v if not isinstance(v, Duration) else -v
        if isinstance(e, A.Binary):
            return self.binary(e)
        if isinstance(e, A.Call):
            return self.call(e)
        return None

    def ref(self, ref: FieldRef) -> Any:
        return self.file_field(ref.name) if ref.file else self.ctx.props.get(ref.name)

    def binary(self, e: A.Binary) -> Any:
        if e.op == "and":
            return _truthy(self._eval(e.left)) and _truthy(self._eval(e.right))
        if e.op == "or":
            return _truthy(self._eval(e.left)) or _truthy(self._eval(e.right))
        a, b = self._eval(e.left), self._eval(e.right)
        if e.op in ("=", "!=", "<", "<=", ">", ">="):
            return _compare(a, e.op, b)
        return _arith(e.op, a, b)

    def call(self, e: A.Call) -> Any:
        args = [self._eval(a) for a in e.args]
        name = e.name
        if name == "default":
            return args[0] if args[0] is not None else args[1]
        if name == "length":
            v = args[0]
            return len(v) if isinstance(v, list | str | dict) else 0
        if name in ("contains", "icontains", "econtains"):
            hay, needle = args[0], args[1]
            fold = name == "icontains"
            if isinstance(hay, list):
                return any(_equal(x, needle, fold) for x in hay)
            if isinstance(hay, str) and isinstance(needle, str):
                return needle.lower() in hay.lower() if fold else needle in hay
            return False
        if name in ("lower", "upper"):
            return args[0].lower() if name == "lower" else args[0].upper()
        if name == "string":
            return _text(args[0])
        if name == "number":
            return float(args[0]) if not isinstance(args[0], bool) else None
        if name == "round":
            digits = int(args[1]) if len(args) > 1 else 0
            return round(float(args[0]), digits)
        if name == "date":
            v = args[0]
            if isinstance(v, DateV):
                return v
            lit = typed_literal(v) if isinstance(v, str) else None
            return DateV(int(lit.value), len(v) == 10) if lit is not None and lit.kind == "date" else None  # type: ignore[arg-type]
        if name == "dur":
            return parse_duration(args[0]) if isinstance(args[0], str) else None
        if name == "join":
            sep = args[1] if len(args) > 1 else ", "
            return sep.join(_text(x) for x in args[0])
        if name == "list":
            return list(args)
        if name in ("min", "max", "sum"):
            items = args[0] if len(args) == 1 and isinstance(args[0], list) else args
            nums = [x for x in items if isinstance(x, int | float) and not isinstance(x, bool)]
            if not nums:
                return None
            return min(nums) if name == "min" else max(nums) if name == "max" else sum(nums)
        return None


def _expanded_tags(tags: list[str]) -> list[str]:
    out: dict[str, None] = {}
    for tag in tags:
        parts = tag.split("/")
        for i in range(1, len(parts) + 1):
            out["#" + "/".join(parts[:i])] = None
    return list(out)


def _truthy(v: Any) -> bool:
    if isinstance(v, list | str | dict):
        return len(v) > 0
    return v is not None and v is not False and v != 0


def _text(v: Any) -> str:
    if isinstance(v, DateV):
        return iso_of_micros(v.us, v.date_only)
    if isinstance(v, Duration):
        return v.iso()
    if isinstance(v, LinkV):
        return f"[[{v.target}]]"
    if isinstance(v, bool):
        return "true" if v else "false"
    return "" if v is None else str(v)


def _equal(a: Any, b: Any, fold: bool = False) -> bool:
    if isinstance(a, DateV) or isinstance(b, DateV):
        return bool(_key(_as_date(a)) == _key(_as_date(b)))
    if isinstance(a, LinkV) and isinstance(b, LinkV):
        return (
            a.target.lower().removesuffix(".md").rsplit("/", 1)[-1]
            == b.target.lower().removesuffix(".md").rsplit("/", 1)[-1]
        )
    if fold and isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    return bool(a == b)


def _as_date(v: Any) -> Any:
    """An ISO date held as text, read as the date it spells (as Dataview reads it)."""
    if isinstance(v, str):
        lit = typed_literal(v)
        if lit.kind == "date":
            return DateV(int(lit.value), len(v.strip()) == 10)  # type: ignore[arg-type]
    return v


def _key(v: Any) -> Any:
    if isinstance(v, DateV):
        return v.us
    if isinstance(v, Duration):
        return v.approx_micros()
    return v


def _compare(a: Any, op: str, b: Any) -> bool:
    if op == "=":
        return _equal(a, b)
    if op == "!=":
        return not _equal(a, b)
    if isinstance(a, DateV) or isinstance(b, DateV):
        a, b = _as_date(a), _as_date(b)
    x, y = _key(a), _key(b)
    if type(x) is not type(y) and not (isinstance(x, int | float) and isinstance(y, int | float)):
        return False
    return bool({"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op])


def _arith(op: str, a: Any, b: Any) -> Any:
    if isinstance(a, DateV | Duration) or isinstance(b, DateV | Duration):
        a, b = _as_date(a), _as_date(b)
    if isinstance(a, DateV) and isinstance(b, Duration) and op in "+-":
        return DateV(shift(a.us, b, 1 if op == "+" else -1), a.date_only and not b.micros % 86_400_000_000)
    if isinstance(a, DateV) and isinstance(b, DateV) and op == "-":
        return Duration(0, a.us - b.us)
    if isinstance(a, Duration) and isinstance(b, Duration) and op in "+-":
        return a + (b if op == "+" else -b)
    if isinstance(a, str) and op == "+":
        return a + _text(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return None
    if isinstance(a, int | float) and isinstance(b, int | float):
        if op == "+":
            result = a + b
        elif op == "-":
            result = a - b
        elif op == "*":
            result = a * b
        else:
            result = a / b if op == "/" else a % b
        return int(result) if isinstance(result, float) and result.is_integer() and op != "/" else result
    return None
