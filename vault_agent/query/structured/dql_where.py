"""A DQL query's WHERE conditions → predicates over one note (plan.py).

A comparison needs a field on one side and a constant on the other (the constant folded by
dql_fold.py); `length(field)` compares with a number; `contains`, `icontains` and
`econtains` test a field against a constant. A condition with no field folds to true or
false; a type the field never has adds a TYPE_MISMATCH warning and matches nothing.
"""

from __future__ import annotations

from vault_agent.errors import InvalidQuery
from vault_agent.query.structured import dql_ast as A
from vault_agent.query.structured.dql_fold import ConstFolder, compare_consts, truthy_const
from vault_agent.query.structured.fields import FieldRef, field_ref
from vault_agent.query.structured.plan import (
    FalseP,
    FileCmp,
    FileContains,
    LinkP,
    ListHas,
    ListLength,
    Pred,
    PropCmp,
    PropContains,
    PropExists,
    PropLength,
    PropTruthy,
    TagP,
    TrueP,
    conj,
    disj,
    negate,
)
from vault_agent.query.structured.values import Lit, typed_literal
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


def field_of(expr: A.Expr, text: str) -> FieldRef | None:
    """The field an expression names (`date(due)` names `due`: props hold ISO text as dates)."""
    if isinstance(expr, A.Call) and expr.name == "date" and len(expr.args) == 1:
        inner = field_ref(expr.args[0], text)
        if inner is not None:
            return inner
    return field_ref(expr, text)


class WhereCompiler:
    """The WHERE conditions of one query; the warnings they raise collect in `warnings`."""

    def __init__(self, consts: ConstFolder) -> None:
        self.consts = consts
        self.text = consts.text
        self.warnings: list[tuple[str, str]] = []

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
        ref = field_of(expr, self.text)
        if ref is not None:
            return self.truthy(ref)
        const = self.consts.const(expr)
        if const is not None:
            return TrueP() if truthy_const(const) else FalseP()
        raise self.consts.refuse("this expression as a condition", expr)

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
                raise self.consts.refuse(f"{side.name}() in a comparison", side)
        left, right = field_of(expr.left, self.text), field_of(expr.right, self.text)
        if left is not None and right is not None:
            raise self.consts.refuse("comparing two fields", expr)
        if left is None and right is None:
            a, b = self.consts.const(expr.left), self.consts.const(expr.right)
            if a is None or b is None:
                raise self.consts.refuse("this comparison (compare a field with a constant)", expr)
            if a.kind != b.kind and op not in ("=", "!="):
                self.warnings.append(const_mismatch_warning(a, b))
            return TrueP() if compare_consts(a, op, b) else FalseP()
        ref, other, op = (left, expr.right, op) if left is not None else (right, expr.left, FLIP[op])
        assert ref is not None
        value = self.consts.const(other)
        if value is None:
            raise self.consts.refuse("this comparison (compare a field with a constant)", expr)
        return self.compare(ref, op, value)

    def compare(self, ref: FieldRef, op: str, value: Lit) -> Pred:
        return compare_field(ref, op, value, self.warnings)

    def length(self, call: A.Call, op: str, other: A.Expr) -> Pred:
        if op == "!=":
            return negate(self.length(call, "=", other))
        if len(call.args) != 1:
            raise InvalidQuery(f"dql: length() takes one argument at {self.consts.at(call)}")
        ref = field_of(call.args[0], self.text)
        value = self.consts.const(other)
        if ref is None or value is None or value.kind != "number":
            raise self.consts.refuse("this use of length() (compare length(field) with a number)", call)
        assert isinstance(value.value, float)
        if ref.file:
            if ref.name not in ("tags", "etags", "aliases", "outlinks"):
                raise self.consts.refuse(f"length(file.{ref.name})", call)
            return ListLength(ref.name, op, value.value)  # type: ignore[arg-type]
        return PropLength(ref.name, op, value.value)  # type: ignore[arg-type]

    def call_cond(self, call: A.Call) -> Pred:
        if call.name not in ("contains", "icontains", "econtains"):
            if call.name in CONDITION_FUNCTIONS:
                raise self.consts.refuse(f"{call.name}() as a condition", call)
            raise self.consts.refuse(f"the function {call.name}()", call)
        if len(call.args) != 2:
            raise InvalidQuery(f"dql: {call.name}() takes two arguments at {self.consts.at(call)}")
        ref = field_of(call.args[0], self.text)
        value = self.consts.const(call.args[1])
        if ref is None or value is None:
            raise self.consts.refuse(f"this use of {call.name}() (contains(field, constant))", call)
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
                raise self.consts.refuse(f"contains(file.{name}, …) without a link [[note]]", call)
            assert isinstance(value.value, str)
            return LinkP("to" if name == "outlinks" else "from", value.value)
        if name in TEXT_FIELDS and isinstance(text, str):
            return FileContains(name, text, fold)  # type: ignore[arg-type]
        raise self.consts.refuse(f"contains(file.{name}, …)", call)


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
