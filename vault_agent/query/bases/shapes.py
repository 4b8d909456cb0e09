"""Recognise the simple filters that vault_query's plan can answer without evaluating rows.

bases-run compiles what `simple_filter` recognises to the same predicates and columns
`vault_query` uses, and evaluates everything else per candidate row. Each shape keeps the
exact semantics the interpreter gives it (tests/query/bases/test_shapes.py checks both agree):

- `TagFilter(("a", "b"))`: `file.hasTag("a", "b")`, `file.tags.contains("a")` (nested tags,
  case-insensitive, `#` optional).
- `FolderFilter("x")`: `file.inFolder("x")` (the folder and below, letter case as written).
- `Comparison(ref, op, literal)`: a property compared with a string, number, boolean or
  null literal (`status == "done"`, `rating > 3`, `3 < rating` is flipped, `file.ext == "md"`).
- `Negated(shape)`: `!` before one of these.

`property_ref` reads what a node names (`x`, `note.x`, `note["x"]`, `file.name`,
`formula.x`); `property_id` reads the property ids of a `.base` file's `order`, `sort`,
`groupBy` and `properties` keys (`note.Due Date` is a property with a space, not an expression).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from vault_agent.query.bases import expr_ast as A
from vault_agent.query.bases.catalog import FILE_FIELD_NAMES

Namespace = Literal["note", "file", "formula"]
_ROOTS = ("note", "file", "formula")
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
Literal_: TypeAlias = str | float | bool | None


@dataclass(frozen=True, slots=True)
class PropertyRef:
    namespace: Namespace
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}.{self.name}"


@dataclass(frozen=True, slots=True)
class TagFilter:
    tags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FolderFilter:
    folder: str


@dataclass(frozen=True, slots=True)
class Comparison:
    ref: PropertyRef
    op: str  # == != < <= > >=
    value: Literal_


@dataclass(frozen=True, slots=True)
class Negated:
    inner: Shape


Shape: TypeAlias = TagFilter | FolderFilter | Comparison | Negated


def property_id(text: str) -> PropertyRef:
    """A `.base` property id: `file.x` (a file field), `formula.x`, `note.x`, else a note property."""
    head, dot, rest = text.partition(".")
    if dot and head == "formula" and rest:
        return PropertyRef("formula", rest)
    if dot and head == "file" and rest in FILE_FIELD_NAMES:
        return PropertyRef("file", rest)
    if dot and head == "note" and rest:
        return PropertyRef("note", rest)
    return PropertyRef("note", text)


def property_ref(node: A.Expr) -> PropertyRef | None:
    """The property a node reads, or None (lambda variables count as properties only outside
    `filter`/`map`/`reduce`, which the caller's top-level position guarantees)."""
    if isinstance(node, A.Ident) and node.name not in _ROOTS:
        return PropertyRef("note", node.name)
    if isinstance(node, A.Member | A.Index) and isinstance(node.obj, A.Ident) and node.obj.name in _ROOTS:
        if isinstance(node, A.Member):
            name = node.name
        elif isinstance(node.index, A.Str):
            name = node.index.value
        else:
            return None
        root = node.obj.name
        if root == "file":
            return PropertyRef("file", name) if name in FILE_FIELD_NAMES else None
        return PropertyRef("note" if root == "note" else "formula", name)
    return None


def _literal(node: A.Expr) -> tuple[bool, Literal_]:
    if isinstance(node, A.Str | A.Num | A.Bool):
        return True, node.value
    if isinstance(node, A.Null):
        return True, None
    if isinstance(node, A.Unary) and node.op == "-" and isinstance(node.operand, A.Num):
        return True, -node.operand.value
    return False, None


def _string_args(args: tuple[A.Expr, ...]) -> tuple[str, ...] | None:
    if args and all(isinstance(arg, A.Str) for arg in args):
        return tuple(arg.value for arg in args if isinstance(arg, A.Str))
    return None


def _is_file(node: A.Expr) -> bool:
    return isinstance(node, A.Ident) and node.name == "file"


def simple_filter(expr: A.Expr) -> Shape | None:
    """The shape of a filter statement the plan can answer, or None (evaluate per row)."""
    if isinstance(expr, A.Unary) and expr.op == "!":
        inner = simple_filter(expr.operand)
        return Negated(inner) if inner is not None else None
    if isinstance(expr, A.MethodCall):
        args = _string_args(expr.args)
        if args is None:
            return None
        if _is_file(expr.obj) and expr.name == "hasTag":
            return TagFilter(args)
        if _is_file(expr.obj) and expr.name == "inFolder" and len(args) == 1:
            return FolderFilter(args[0])
        if (
            expr.name == "contains"
            and len(args) == 1
            and property_ref(expr.obj) == PropertyRef("file", "tags")
        ):
            return TagFilter(args)
        return None
    if isinstance(expr, A.Binary) and expr.op in _FLIP:
        for prop, lit, op in ((expr.left, expr.right, expr.op), (expr.right, expr.left, _FLIP[expr.op])):
            ref = property_ref(prop)
            is_literal, value = _literal(lit)
            if ref is not None and is_literal:
                return Comparison(ref, op, value)
    return None
