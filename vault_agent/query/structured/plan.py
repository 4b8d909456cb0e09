"""The typed plan both filters and DQL compile to; `sql.py` renders it.

A plan selects notes (`where`, a tree of predicates over one note), orders them (`sort`),
caps them (`limit`, DQL's LIMIT) and names what each result shows (`columns`). Property
predicates follow SPEC: a list property matches when any item does; a note without the
property never matches a comparison (`PropCmp`), and `NotP` turns a match into its
complement (so `status != done` holds for a note without `status`, as in Dataview).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from vault_agent.query.structured.values import Lit

CmpOp = Literal["=", "<", "<=", ">", ">="]
FileField = Literal["path", "name", "folder", "ext", "title", "size", "mtime", "ctime", "mday", "cday"]
ListField = Literal["tags", "etags", "aliases"]


@dataclass(frozen=True)
class TrueP:
    pass


@dataclass(frozen=True)
class FalseP:
    pass


@dataclass(frozen=True)
class AndP:
    items: tuple[Pred, ...]


@dataclass(frozen=True)
class OrP:
    items: tuple[Pred, ...]


@dataclass(frozen=True)
class NotP:
    item: Pred


@dataclass(frozen=True)
class TagP:
    """The note carries `tag` (casefolded, no `#`), or with `nested` one of its children."""

    tag: str
    nested: bool = True


@dataclass(frozen=True)
class FolderP:
    """The note lies in `folder` or below ('' = the whole vault)."""

    folder: str


@dataclass(frozen=True)
class FileP:
    """Exactly the note at `path`."""

    path: str


@dataclass(frozen=True)
class GlobP:
    glob: str


@dataclass(frozen=True)
class LinkP:
    """`to`: notes that link to `target`; `from`: notes `target` links to (wikilink rules)."""

    direction: Literal["to", "from"]
    target: str


@dataclass(frozen=True)
class FileCmp:
    """An implicit field of the note compared with a constant (dates as µs UTC)."""

    field: FileField
    op: CmpOp
    value: Lit


@dataclass(frozen=True)
class FileContains:
    """Substring of a text implicit field (`contains(file.name, "WIP")`)."""

    field: FileField
    text: str
    fold: bool = False


@dataclass(frozen=True)
class ListHas:
    """An implicit list field holds the value (aliases: exact text; tags: see TagP)."""

    field: ListField
    value: str


@dataclass(frozen=True)
class ListLength:
    field: Literal["tags", "etags", "aliases", "outlinks"]
    op: CmpOp
    value: float


@dataclass(frozen=True)
class PropCmp:
    """Some item of property `key` compares true with `value` (typed; module doc)."""

    key: str
    op: CmpOp
    value: Lit


@dataclass(frozen=True)
class PropContains:
    """A list item equals `value`, or a text value holds it (`fold`: case-insensitively)."""

    key: str
    value: Lit
    fold: bool = False


@dataclass(frozen=True)
class PropExists:
    """The note has property `key` with a value other than null."""

    key: str


@dataclass(frozen=True)
class PropTruthy:
    """Dataview truthiness: not null, false, 0, "" or an empty list."""

    key: str


@dataclass(frozen=True)
class PropLength:
    """length(key) op value: items of a list, characters of a text, 0 when missing."""

    key: str
    op: CmpOp
    value: float


Pred = (
    TrueP | FalseP | AndP | OrP | NotP | TagP | FolderP | FileP | GlobP | LinkP | FileCmp
    | FileContains | ListHas | ListLength | PropCmp | PropContains | PropExists | PropTruthy | PropLength
)  # fmt: skip


@dataclass(frozen=True)
class SortKey:
    """`file` fields sort by the note's column; otherwise by property `key` (its first
    item, by type: numbers, dates, text, booleans; notes without it last either way)."""

    key: str
    descending: bool = False
    file: bool = False


@dataclass(frozen=True)
class Column:
    """One entry of a result's `properties`: a property (`key`) or, in a DQL table, an
    expression evaluated per result (`expr`, from dql_parse; opaque here)."""

    header: str
    key: str | None = None
    expr: object | None = None


@dataclass(frozen=True)
class Plan:
    where: Pred
    sort: tuple[SortKey, ...] = ()
    limit: int | None = None
    columns: tuple[Column, ...] = ()
    warnings: tuple[tuple[str, str], ...] = field(default=())  # found while compiling: (code, message)


def conj(items: list[Pred]) -> Pred:
    """AND of predicates, flattened (no items: every note)."""
    flat: list[Pred] = []
    for item in items:
        if isinstance(item, AndP):
            flat.extend(item.items)
        elif not isinstance(item, TrueP):
            flat.append(item)
    if any(isinstance(p, FalseP) for p in flat):
        return FalseP()
    return flat[0] if len(flat) == 1 else AndP(tuple(flat)) if flat else TrueP()


def disj(items: list[Pred]) -> Pred:
    """OR of predicates, flattened (no items: no note)."""
    flat: list[Pred] = []
    for item in items:
        if isinstance(item, OrP):
            flat.extend(item.items)
        elif not isinstance(item, FalseP):
            flat.append(item)
    if any(isinstance(p, TrueP) for p in flat):
        return TrueP()
    return flat[0] if len(flat) == 1 else OrP(tuple(flat)) if flat else FalseP()


def negate(item: Pred) -> Pred:
    if isinstance(item, NotP):
        return item.item
    if isinstance(item, TrueP):
        return FalseP()
    if isinstance(item, FalseP):
        return TrueP()
    return NotP(item)
