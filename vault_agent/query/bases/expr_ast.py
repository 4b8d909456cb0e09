"""The typed AST of a Bases expression: one frozen dataclass per construct.

Every node carries the `Position` of its first character in the expression text. Positions
do not take part in equality (`compare=False`), so the AST of a printed expression equals
the AST it was printed from (tests/query/bases: print → parse → equal).

A bare name is an `Ident`: inside `filter`/`map`/`reduce` arguments `value`, `index` and
`acc` are the lambda's variables (a summary's `values` too, when the caller binds it);
`file`, `note` and `formula` are the roots of file fields, note properties and formulas;
any other name is a note property. `this` is its own node.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, TypeAlias


@dataclass(frozen=True, slots=True)
class Position:
    """Where a node starts in its expression: 0-based offset, 1-based line and column."""

    offset: int
    line: int
    column: int

    def describe(self) -> str:
        """`line L, column C`, as error messages name a place."""
        return f"line {self.line}, column {self.column}"


NOWHERE = Position(0, 1, 1)
_POS = field(default=NOWHERE, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Str:
    value: str
    pos: Position = _POS


@dataclass(frozen=True, slots=True)
class Num:
    value: float
    pos: Position = _POS


@dataclass(frozen=True, slots=True)
class Bool:
    value: bool
    pos: Position = _POS


@dataclass(frozen=True, slots=True)
class Null:
    pos: Position = _POS


@dataclass(frozen=True, slots=True)
class Regex:
    """`/pattern/flags`: the pattern as written between the slashes (escapes kept)."""

    pattern: str
    flags: str
    pos: Position = _POS


@dataclass(frozen=True, slots=True)
class ListLit:
    items: tuple[Expr, ...]
    pos: Position = _POS


@dataclass(frozen=True, slots=True)
class ObjectLit:
    entries: tuple[tuple[str, Expr], ...]
    pos: Position = _POS


@dataclass(frozen=True, slots=True)
class Ident:
    name: str
    pos: Position = _POS


@dataclass(frozen=True, slots=True)
class This:
    pos: Position = _POS


@dataclass(frozen=True, slots=True)
class Member:
    """`obj.name`."""

    obj: Expr
    name: str
    pos: Position = _POS


@dataclass(frozen=True, slots=True)
class Index:
    """`obj[index]`."""

    obj: Expr
    index: Expr
    pos: Position = _POS


@dataclass(frozen=True, slots=True)
class Call:
    """A global function call `name(args)`."""

    name: str
    args: tuple[Expr, ...]
    pos: Position = _POS


@dataclass(frozen=True, slots=True)
class MethodCall:
    """`obj.name(args)`: `pos` is the position of `name` (where a wrong method is reported)."""

    obj: Expr
    name: str
    args: tuple[Expr, ...]
    pos: Position = _POS


UnaryOp = Literal["!", "-"]
BinaryOp = Literal["||", "&&", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%"]


@dataclass(frozen=True, slots=True)
class Unary:
    op: UnaryOp
    operand: Expr
    pos: Position = _POS


@dataclass(frozen=True, slots=True)
class Binary:
    op: BinaryOp
    left: Expr
    right: Expr
    pos: Position = _POS


Expr: TypeAlias = (
    Str
    | Num
    | Bool
    | Null
    | Regex
    | ListLit
    | ObjectLit
    | Ident
    | This
    | Member
    | Index
    | Call
    | MethodCall
    | Unary
    | Binary
)

# Binding power of each binary operator (JavaScript's order); all are left-associative.
PRECEDENCE: dict[str, int] = {
    "||": 1,
    "&&": 2,
    "==": 3,
    "!=": 3,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "+": 5,
    "-": 5,
    "*": 6,
    "/": 6,
    "%": 6,
}


def children(node: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of a node, in source order."""
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Member):
        return (node.obj,)
    if isinstance(node, Index):
        return (node.obj, node.index)
    if isinstance(node, Call):
        return node.args
    if isinstance(node, MethodCall):
        return (node.obj, *node.args)
    if isinstance(node, ListLit):
        return node.items
    if isinstance(node, ObjectLit):
        return tuple(value for _, value in node.entries)
    return ()


def walk(node: Expr) -> Iterator[Expr]:
    """Every node of the tree, parents before children, without recursion."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def depth(node: Expr) -> int:
    """The number of nodes on the longest root-to-leaf path, without recursion."""
    deepest = 0
    stack = [(node, 1)]
    while stack:
        current, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children(current))
    return deepest
