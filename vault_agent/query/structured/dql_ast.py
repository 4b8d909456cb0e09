"""The syntax tree of a Dataview query (the read subset: docs/query.md "Dataview queries").

Nodes carry the character offset where they start, so a compile error can say where.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class Node:
    pos: int


@dataclass(frozen=True)
class Num(Node):
    value: float


@dataclass(frozen=True)
class Str(Node):
    value: str


@dataclass(frozen=True)
class Bool(Node):
    value: bool


@dataclass(frozen=True)
class Null(Node):
    pass


@dataclass(frozen=True)
class LinkLit(Node):
    target: str  # inside `[[…]]`, without `|display` or `#heading`


@dataclass(frozen=True)
class DateLit(Node):
    text: str  # inside `date(…)`: a shorthand (`today`) or an ISO date


@dataclass(frozen=True)
class DurLit(Node):
    text: str  # inside `dur(…)`


@dataclass(frozen=True)
class ListLit(Node):
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Ident(Node):
    name: str  # as written (canonicalized when compiled)


@dataclass(frozen=True)
class Member(Node):
    obj: Expr
    name: str


@dataclass(frozen=True)
class Index(Node):
    obj: Expr
    index: Expr


@dataclass(frozen=True)
class Call(Node):
    name: str  # lower-cased
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Unary(Node):
    op: Literal["!", "-"]
    operand: Expr


@dataclass(frozen=True)
class Binary(Node):
    op: str  # and or = != < <= > >= + - * / %
    left: Expr
    right: Expr


Expr = (
    Num
    | Str
    | Bool
    | Null
    | LinkLit
    | DateLit
    | DurLit
    | ListLit
    | Ident
    | Member
    | Index
    | Call
    | Unary
    | Binary
)


@dataclass(frozen=True)
class STag(Node):
    tag: str  # without `#`


@dataclass(frozen=True)
class SFolder(Node):
    path: str  # a folder, or a file with or without `.md`


@dataclass(frozen=True)
class SLink(Node):
    target: str
    outgoing: bool  # outgoing([[x]]): the notes x links to; else the notes linking to x


@dataclass(frozen=True)
class SAnd(Node):
    left: Source
    right: Source


@dataclass(frozen=True)
class SOr(Node):
    left: Source
    right: Source


@dataclass(frozen=True)
class SNot(Node):
    item: Source


Source = STag | SFolder | SLink | SAnd | SOr | SNot


@dataclass(frozen=True)
class Column:
    expr: Expr
    header: str  # `AS` name, else the expression as written


@dataclass(frozen=True)
class SortItem:
    expr: Expr
    descending: bool


@dataclass(frozen=True)
class Query:
    kind: Literal["list", "table", "task"]
    without_id: bool
    columns: tuple[Column, ...]
    source: Source | None
    where: tuple[Expr, ...] = ()
    sort: tuple[SortItem, ...] = ()
    limit: int | None = None
    commands: tuple[str, ...] = field(default=())  # data commands in the order written
