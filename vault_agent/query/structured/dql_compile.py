"""A parsed Dataview query → the plan (plan.py), with constants folded.

`FROM` sources and `WHERE` conditions become predicates over one note; a comparison needs
a field on one side and a constant on the other (`due < date(today) - dur(7 days)` folds
the right side to one date). `SORT` takes fields; `LIMIT` caps the matches. `TABLE` columns
and LIST's one expression stay expressions, evaluated per result by `evaluate.py`.
"""

from __future__ import annotations

from vault_agent.errors import InvalidQuery
from vault_agent.query.structured import dql_ast as A
from vault_agent.query.structured.dql_lex import where
from vault_agent.query.structured.dql_parse import parse_dql
from vault_agent.query.structured.fields import FieldRef, field_ref
from vault_agent.query.structured.plan import (
    Column,
    FalseP,
    FileCmp,
    FileContains,
    FileP,
    FolderP,
    LinkP,
    ListHas,
    ListLength,
    Plan,
    Pred,
    PropCmp,
    PropContains,
    PropExists,
    PropLength,
    PropTruthy,
    SortKey,
    TagP,
    TrueP,
    conj,
    disj,
    negate,
)
from vault_agent.query.structured.values import (
    Clock,
    Duration,
    Lit,
    date_shorthand,
    parse_duration,
    shift,
    typed_literal,
)
from vault_agent.query.structured.warnings import const_mismatch_warning, mismatch_warning

FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}
COMPARE = ("=", "!=", "<", "<=", ">", ">=")
# Functions a WHERE may use (the rest of Dataview's library is refused by name).
CONDITION_FUNCTIONS = ("contains", "icontains", "econtains", "length", "date")
TEXT_FIELDS = ("name", "path", "folder", "ext")
DATE_FIELDS = ("mtime", "ctime", "mday", "cday")
LIST_FIELDS = ("tags", "etags", "aliases", "inlinks", "outlinks")


def fold_tag(tag: str) -> str:
    return tag.strip().lstrip("#").strip().casefold()


class Compiler:
    def __init__(self, text: str, clock: Clock) -> None:
        self.text = text
        self.clock = clock
        self.warnings: list[tuple[str, str]] = []

    def at(self, node: A.Node) -> str:
        return where(self.text, node.pos)

    def refuse(self, what: str, node: A.Node) -> InvalidQuery:
        return InvalidQuery(f"dql: {what} at {self.at(node)} is not supported (see docs/query.md)")

    # ------------------------------------------------------------------ the query
    def plan(self, query: A.Query) -> Plan:
        preds: list[Pred] = [self.source(query.source)] if query.source is not None else []
        preds += [self.cond(e) for e in query.where]
        sort = tuple(self.sort_key(item) for item in query.sort)
        columns = tuple(self.column(c) for c in query.columns)
        return Plan(
            where=conj(preds),
            sort=sort,
            limit=query.limit,
            columns=columns,
            warnings=tuple(self.warnings),
        )

    def column(self, col: A.Column) -> Column:
        from vault_agent.query.structured.display import check_expr

        check_expr(col.expr, self.text)
        return Column(header=col.header, expr=col.expr)

    def sort_key(self, item: A.SortItem) -> SortKey:
        ref = self.field(item.expr)
        if ref is None:
            raise self.refuse("SORT by an expression (sort by a field)", item.expr)
        if ref.file:
            if ref.name in LIST_FIELDS:
                raise self.refuse(f"SORT by file.{ref.name}", item.expr)
            name = {"mday": "mtime", "cday": "ctime", "link": "path"}.get(ref.name, ref.name)
            return SortKey(name, item.descending, file=True)
        return SortKey(ref.name, item.descending)

    # ------------------------------------------------------------------ sources
    def source(self, src: A.Source) -> Pred:
        if isinstance(src, A.STag):
            return TagP(fold_tag(src.tag))
        if isinstance(src, A.SFolder):
            path = src.path.strip().strip("/")
            if not path:
                return TrueP()
            if path.lower().endswith(".md"):
                return FileP(path)
            return disj([FolderP(path), FileP(path + ".md")])
        if isinstance(src, A.SLink):
            return LinkP("from" if src.outgoing else "to", src.target)
        if isinstance(src, A.SAnd):
            return conj([self.source(src.left), self.source(src.right)])
        if isinstance(src, A.SOr):
            return disj([self.source(src.left), self.source(src.right)])
        return negate(self.source(src.item))

    # ------------------------------------------------------------------ conditions
    def field(self, expr: A.Expr) -> FieldRef | None:
        if isinstance(expr, A.Call) and expr.name == "date" and len(expr.args) == 1:
            inner = field_ref(expr.args[0], self.text)  # date(due): props hold ISO text as dates
            if inner is not None:
                return inner
        return field_ref(expr, self.text)

    def cond(self, expr: A.Expr) -> Pred:
        if isinstance(expr, A.Binary) and expr.op in ("and", "or"):
            parts = [self.cond(expr.left), self.cond(expr.right)]
            return conj(parts) if expr.op == "and" else disj(parts)
        if isinstance(expr, A.Unary) and expr.op == "!":
            return negate(self.cond(expr.operand))
        if isinstance(expr, A.Binary) and expr.op in COMPARE:
            return self.comparison(expr)
        if isinstance(expr, A.Call):
            return self.call_cond(expr)
        if isinstance(expr, A.Bool):
            return TrueP() if expr.value else FalseP()
        ref = self.field(expr)
        if ref is not None:
            return self.truthy(ref)
        const = self.const(expr)
        if const is not None:
            return TrueP() if _truthy_const(const) else FalseP()
        raise self.refuse("this expression as a condition", expr)

    def truthy(self, ref: FieldRef) -> Pred:
        if not ref.file:
            return PropTruthy(ref.name)
        if ref.name in ("tags", "etags", "aliases", "outlinks"):
            return ListLength("tags" if ref.name == "etags" else ref.name, ">", 0)  # type: ignore[arg-type]
        if ref.name == "inlinks":
            raise InvalidQuery("dql: file.inlinks is supported only inside contains(file.inlinks, [[note]])")
        return TrueP()  # every note has a name, a path, dates and a size

    def comparison(self, expr: A.Binary) -> Pred:
        op = expr.op
        if isinstance(expr.left, A.Call) and expr.left.name == "length":
            return self.length(expr.left, op, expr.right)
        if isinstance(expr.right, A.Call) and expr.right.name == "length":
            return self.length(expr.right, FLIP[op], expr.left)
        for side in (expr.left, expr.right):
            if isinstance(side, A.Call) and side.name not in ("length", "date", "dur"):
                raise self.refuse(f"{side.name}() in a comparison", side)
        left, right = self.field(expr.left), self.field(expr.right)
        if left is not None and right is not None:
            raise self.refuse("comparing two fields", expr)
        if left is None and right is None:
            a, b = self.const(expr.left), self.const(expr.right)
            if a is None or b is None:
                raise self.refuse("this comparison (compare a field with a constant)", expr)
            if a.kind != b.kind and op not in ("=", "!="):
                self.warnings.append(const_mismatch_warning(a, b))
            return TrueP() if _compare_consts(a, op, b) else FalseP()
        ref, other, op = (left, expr.right, op) if left is not None else (right, expr.left, FLIP[op])
        assert ref is not None
        value = self.const(other)
        if value is None:
            raise self.refuse("this comparison (compare a field with a constant)", expr)
        return self.compare(ref, op, value)

    def compare(self, ref: FieldRef, op: str, value: Lit) -> Pred:
        return compare_field(ref, op, value, self.warnings)

    def length(self, call: A.Call, op: str, other: A.Expr) -> Pred:
        if op == "!=":
            return negate(self.length(call, "=", other))
        if len(call.args) != 1:
            raise InvalidQuery(f"dql: length() takes one argument at {self.at(call)}")
        ref = self.field(call.args[0])
        value = self.const(other)
        if ref is None or value is None or value.kind != "number":
            raise self.refuse("this use of length() (compare length(field) with a number)", call)
        assert isinstance(value.value, float)
        if ref.file:
            if ref.name not in ("tags", "etags", "aliases", "outlinks"):
                raise self.refuse(f"length(file.{ref.name})", call)
            return ListLength(ref.name, op, value.value)  # type: ignore[arg-type]
        return PropLength(ref.name, op, value.value)  # type: ignore[arg-type]

    def call_cond(self, call: A.Call) -> Pred:
        if call.name not in ("contains", "icontains", "econtains"):
            if call.name in CONDITION_FUNCTIONS:
                raise self.refuse(f"{call.name}() as a condition", call)
            raise self.refuse(f"the function {call.name}()", call)
        if len(call.args) != 2:
            raise InvalidQuery(f"dql: {call.name}() takes two arguments at {self.at(call)}")
        ref = self.field(call.args[0])
        value = self.const(call.args[1])
        if ref is None or value is None:
            raise self.refuse(f"this use of {call.name}() (contains(field, constant))", call)
        fold = call.name == "icontains"
        if not ref.file:
            return PropContains(ref.name, value, fold)
        return self.file_contains(ref.name, value, fold, call)

    def file_contains(self, name: str, value: Lit, fold: bool, call: A.Call) -> Pred:
        text = value.value if value.kind == "string" else None
        if name in ("tags", "etags"):
            if not isinstance(text, str):
                return FalseP()
            return TagP(fold_tag(text), nested=name == "tags")
        if name == "aliases":
            return ListHas("aliases", text) if isinstance(text, str) else FalseP()
        if name in ("outlinks", "inlinks"):
            if value.kind != "link":
                raise self.refuse(f"contains(file.{name}, …) without a link [[note]]", call)
            assert isinstance(value.value, str)
            return LinkP("to" if name == "outlinks" else "from", value.value)
        if name in TEXT_FIELDS and isinstance(text, str):
            return FileContains(name, text, fold)  # type: ignore[arg-type]
        raise self.refuse(f"contains(file.{name}, …)", call)

    # ------------------------------------------------------------------ constants
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


def compare_field(ref: FieldRef, op: str, value: Lit, warnings: list[tuple[str, str]]) -> Pred:
    """A field compared with a constant (`!=` is NOT `=`; a type the field never has adds
    a TYPE_MISMATCH warning and matches nothing).

    Raises:
        InvalidQuery: a list field compared as a whole.
    """
    if op == "!=":
        return negate(compare_field(ref, "=", value, warnings))
    label = f"file.{ref.name}" if ref.file else ref.name
    if value.kind == "null":
        if op == "=":
            return negate(PropExists(ref.name)) if not ref.file else FalseP()
        warnings.append(mismatch_warning(label, value))
        return FalseP()
    if not ref.file:
        if value.kind == "duration":
            warnings.append(mismatch_warning(label, value))
            return FalseP()
        return PropCmp(ref.name, op, value)  # type: ignore[arg-type]
    name = ref.name
    if name in LIST_FIELDS:
        raise InvalidQuery(f"dql: file.{name} is a list: use contains(file.{name}, …) or length(file.{name})")
    if name == "link":
        if value.kind != "link":
            warnings.append(mismatch_warning(label, value))
            return FalseP()
        return FileCmp("path", op, value)  # type: ignore[arg-type]
    if value.kind == "string" and name in DATE_FIELDS:
        value = typed_literal(value.value)  # "2024-05-01" read as the date it spells
    want = "date" if name in DATE_FIELDS else "number" if name == "size" else "string"
    if want == "string" and value.kind != "string" and value.text is not None:
        value = Lit("string", value.text)  # a filter's "3" compared with a file's name
    if value.kind != want:
        warnings.append(mismatch_warning(label, value))
        return FalseP()
    return FileCmp(name, op, value)  # type: ignore[arg-type]


def _truthy_const(value: Lit) -> bool:
    return value.kind not in ("null",) and value.value not in (False, 0.0, "")


def _compare_consts(a: Lit, op: str, b: Lit) -> bool:
    if a.kind != b.kind or a.kind in ("null", "link"):
        return op == "!=" if a.kind != b.kind else (op in ("=", "<=", ">=") and a.value == b.value)
    x, y = a.value, b.value
    if isinstance(x, Duration) and isinstance(y, Duration):
        x, y = x.approx_micros(), y.approx_micros()
    ops = {"=": x == y, "!=": x != y}
    if op in ops:
        return ops[op]
    return bool({"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op])  # type: ignore[operator]


def compile_dql(text: str, clock: Clock) -> Plan:
    """A DQL query → the plan.

    Raises:
        InvalidQuery: a syntax error or an unsupported construct (position, what was expected).
    """
    return Compiler(text, clock).plan(parse_dql(text))
