"""Names a query may use: Dataview's implicit `file.*` fields and property references.

Shared by the DQL compiler, the filters and the table evaluator, so the three agree on
which `file.*` fields exist and what a property name means.
"""

from __future__ import annotations

from dataclasses import dataclass

from vault_agent.errors import InvalidQuery
from vault_agent.property_values import canonical_key
from vault_agent.query.structured import dql_ast as A

# Implicit fields answered (Dataview's page fields, docs/query.md); others are refused.
FILE_FIELDS: tuple[str, ...] = (
    "name", "path", "folder", "ext", "link", "size", "ctime", "cday", "mtime", "mday",
    "tags", "etags", "inlinks", "outlinks", "aliases",
)  # fmt: skip
# Filters' `sort` names (SPEC) map onto these; `title` is ours (the note's title).
SORT_FIELDS: dict[str, str] = {
    "path": "path", "title": "title", "mtime": "mtime", "ctime": "ctime", "size": "size",
    "name": "name", "folder": "folder", "mday": "mtime", "cday": "ctime", "link": "path",
}  # fmt: skip


@dataclass(frozen=True)
class FieldRef:
    """A property (`file` False: its canonical key) or an implicit field (`file.<name>`)."""

    name: str
    file: bool = False


def field_ref(expr: A.Expr, text: str = "") -> FieldRef | None:
    """The field an expression names (`due`, `a.b`, `a["b"]`, `file.mtime`), else None.

    Raises:
        InvalidQuery: a `file.*` field that is not answered, or `file` alone.
    """
    parts = _path(expr)
    if parts is None:
        return None
    if parts[0].lower() == "file":
        if len(parts) != 2 or parts[1].lower() not in FILE_FIELDS:
            shown = ".".join(parts)[:60]
            raise InvalidQuery(
                f"dql: the implicit field '{shown}' is not supported; use one of "
                + ", ".join(f"file.{f}" for f in FILE_FIELDS)
            )
        return FieldRef(parts[1].lower(), file=True)
    if parts[0].lower() == "row" and len(parts) > 1:
        parts = parts[1:]  # row["where"]: a property named like a keyword
    return FieldRef(canonical_key(".".join(parts)))


def _path(expr: A.Expr) -> list[str] | None:
    if isinstance(expr, A.Ident):
        return [expr.name]
    if isinstance(expr, A.Member):
        head = _path(expr.obj)
        return None if head is None else [*head, expr.name]
    if isinstance(expr, A.Index) and isinstance(expr.index, A.Str):
        head = _path(expr.obj)
        return None if head is None else [*head, expr.index.value]
    return None


def property_ref(name: str) -> FieldRef:
    """A filter's field name: `file.mtime` or a property (canonical, case-insensitive).

    Raises:
        InvalidQuery: an unknown `file.*` field.
    """
    ref = field_ref(A.Ident(0, name)) if "." not in name else field_ref(dotted_expr(name))
    assert ref is not None
    return ref


def dotted_expr(name: str) -> A.Expr:
    """`a.b.c` as the expression a DQL query would parse it into."""
    head, *rest = name.split(".")
    node: A.Expr = A.Ident(0, head)
    for part in rest:
        node = A.Member(0, node, part)
    return node
