"""The plan → parameterised SQL over the pinned snapshot's `notes` (alias `n`), `props`
and `links` views. Every constant is a parameter; names in the SQL text are ours only.

A property predicate is a semi-join, `n.path IN (SELECT path FROM props WHERE key = ? AND
<typed condition>)`: props are sorted by key, so one property's rows are read, and a list
property matches when any of its items does. Comparisons are typed by the constant:

    constant   =, != (as NOT =)                   <, <=, >, >=
    number     kind number and n = ?              kind number and n < ?
    date       d = ? (or s = its text)            d < ?   (dates, datetimes, ISO text)
    text       s = ? (the value's text)           kind string and s < ? (code points)
    boolean    kind boolean and b = ?             kind boolean and b < ?
    link       [[target]] text equal, any case    never
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vault_agent.query.globmatch import glob_sql_regex
from vault_agent.query.structured.plan import (
    AndP,
    FalseP,
    FileCmp,
    FileContains,
    FileP,
    FolderP,
    GlobP,
    LinkP,
    ListHas,
    ListLength,
    NotP,
    OrP,
    Pred,
    PropCmp,
    PropContains,
    PropExists,
    PropLength,
    PropTruthy,
    SortKey,
    TagP,
    TrueP,
)
from vault_agent.query.structured.values import US_PER_DAY, Lit

LinkResolve = Callable[[LinkP], list[str]]

_NAME = r"regexp_replace(regexp_extract(n.path, '[^/]*$'), '\.[^.]*$', '')"
FILE_SQL: dict[str, str] = {
    "path": "n.path",
    "name": _NAME,
    "folder": "n.folder",
    "ext": r"regexp_extract(n.path, '\.([^./]*)$', 1)",
    "title": "n.title",
    "size": "n.size",
    "mtime": "(n.mtime_ns // 1000)",
    "ctime": "(n.ctime_ns // 1000)",
    "mday": f"((n.mtime_ns // 1000) // {US_PER_DAY} * {US_PER_DAY})",
    "cday": f"((n.ctime_ns // 1000) // {US_PER_DAY} * {US_PER_DAY})",
}
# The target of a `[[link]]` held as text in a property, lower-cased.
_LINK_TEXT = r"lower(trim(regexp_extract(s, '^\[\[([^\]|#]*)', 1)))"
_SCALAR = "kind NOT IN ('null', 'empty', 'object', 'list')"
_TRUTHY = (
    "(is_list AND kind <> 'empty') OR (NOT is_list AND ((kind = 'string' AND s <> '') "
    "OR (kind = 'number' AND n <> 0) OR (kind = 'boolean' AND b) OR kind IN ('date', 'datetime', 'object')))"
)
KIND_RANK = (
    "CASE {a}.kind WHEN 'number' THEN 0 WHEN 'date' THEN 1 WHEN 'datetime' THEN 1 "
    "WHEN 'string' THEN 2 WHEN 'boolean' THEN 3 ELSE 4 END"
)


def compatible(value: Lit) -> str | None:
    """The props condition of an item of the constant's type (for ordering), or None."""
    return {
        "number": "kind = 'number' AND n IS NOT NULL",
        "date": "d IS NOT NULL",
        "string": "kind = 'string'",
        "boolean": "kind = 'boolean'",
    }.get(value.kind)


class SqlBuilder:
    """Renders predicates into one SQL text and its parameter list (in order)."""

    def __init__(self, links: LinkResolve) -> None:
        self.params: list[Any] = []
        self.links = links

    def p(self, value: Any) -> str:
        self.params.append(value)
        return "?"

    # ------------------------------------------------------------------ predicates
    def pred(self, node: Pred) -> str:
        if isinstance(node, TrueP):
            return "true"
        if isinstance(node, FalseP):
            return "false"
        if isinstance(node, AndP):
            return "(" + " AND ".join(self.pred(i) for i in node.items) + ")"
        if isinstance(node, OrP):
            return "(" + " OR ".join(self.pred(i) for i in node.items) + ")"
        if isinstance(node, NotP):
            return f"(NOT {self.pred(node.item)})"
        if isinstance(node, TagP):
            if node.nested:
                return f"list_contains(n.tag_keys, {self.p(node.tag)})"
            return f"list_contains(list_transform(n.all_tags, lambda t: lower(t)), {self.p(node.tag.lower())})"
        if isinstance(node, FolderP):
            return f"(n.folder = {self.p(node.folder)} OR starts_with(n.folder, {self.p(node.folder + '/')}))"
        if isinstance(node, FileP):
            return f"n.path = {self.p(node.path)}"
        if isinstance(node, GlobP):
            rx = glob_sql_regex(node.glob)
            if rx is None:
                return "true"
            target = "regexp_extract(n.path, '[^/]*$')" if rx[1] else "n.path"
            return f"regexp_matches({target}, {self.p(rx[0])}, 'i')"
        if isinstance(node, LinkP):
            paths = self.links(node)
            if not paths:
                return "false"
            return f"n.path IN (SELECT unnest({self.p(paths)}::VARCHAR[]))"
        if isinstance(node, FileCmp):
            return self.file_cmp(node)
        if isinstance(node, FileContains):
            col = FILE_SQL[node.field]
            if node.fold:
                return f"contains(lower({col}), {self.p(node.text.lower())})"
            return f"contains({col}, {self.p(node.text)})"
        if isinstance(node, ListHas):
            return f"list_contains(n.aliases, {self.p(node.value)})"
        if isinstance(node, ListLength):
            return self.list_length(node)
        if isinstance(node, PropExists):
            return self.props(node.key, lambda: "NOT (kind = 'null' AND NOT is_list)")
        if isinstance(node, PropTruthy):
            return self.props(node.key, lambda: _TRUTHY)
        if isinstance(node, PropCmp):
            if self.cmp_cond(node.op, node.value, dry=True) is None:
                return "false"
            cmp = node
            return self.props(node.key, lambda: self.cmp_cond(cmp.op, cmp.value) or "false")
        if isinstance(node, PropContains):
            return self.contains(node)
        if isinstance(node, PropLength):
            return self.prop_length(node)
        raise TypeError(f"unknown predicate {type(node).__name__}")

    def props(self, key: str, cond: Callable[[], str]) -> str:
        """Notes with an item of property `key` meeting `cond()` (over props columns;
        rendered after the key, so that the parameters come in the text's order)."""
        key_param = self.p(key)
        return f"n.path IN (SELECT path FROM props WHERE key = {key_param} AND ({cond()}))"

    def cmp_cond(self, op: str, value: Lit, dry: bool = False) -> str | None:
        """The typed condition of one item against a constant (None: never true); `dry`
        only answers whether there is one, adding no parameter."""
        kind = value.kind
        if dry:
            return "" if kind in ("number", "boolean", "date", "string") or (kind == "link" and op == "=") else None
        if kind == "number":
            return f"kind = 'number' AND n {op} {self.p(value.value)}"
        if kind == "boolean":
            return f"kind = 'boolean' AND b {op} {self.p(value.value)}"
        if kind == "date":
            if op == "=" and value.text is not None:
                return f"(d = {self.p(value.value)} OR s = {self.p(value.text)})"
            return f"d {op} {self.p(value.value)}"
        if kind == "string":
            if op == "=":
                return f"s = {self.p(value.value)}"
            return f"kind = 'string' AND s {op} {self.p(value.value)}"
        if kind == "link" and op == "=":
            target = str(value.value).lower()
            return f"kind = 'string' AND (lower(s) = {self.p(target)} OR {_LINK_TEXT} = {self.p(target)})"
        return None

    def contains(self, node: PropContains) -> str:
        value = node.value
        if value.kind == "string" and isinstance(value.value, str):
            text = value.value.lower() if node.fold else value.value
            col = "lower(s)" if node.fold else "s"
            return self.props(
                node.key,
                lambda: f"(is_list AND {col} = {self.p(text)}) OR "
                f"(NOT is_list AND kind = 'string' AND contains({col}, {self.p(text)}))",
            )
        if self.cmp_cond("=", value, dry=True) is None:
            return "false"
        return self.props(node.key, lambda: self.cmp_cond("=", value) or "false")

    def prop_length(self, node: PropLength) -> str:
        size = (
            "CASE WHEN bool_or(is_list) THEN count(*) FILTER (WHERE kind <> 'empty') "
            "WHEN any_value(kind) = 'string' THEN length(any_value(s)) ELSE 0 END"
        )
        zero_matches = _holds(0.0, node.op, node.value)
        key_param = self.p(node.key)
        value_param = self.p(node.value)
        having = f"({size}) {node.op} {value_param}"
        if zero_matches:  # a note without the property has length 0 and matches too
            return f"n.path NOT IN (SELECT path FROM props WHERE key = {key_param} GROUP BY path HAVING NOT ({having}))"
        return f"n.path IN (SELECT path FROM props WHERE key = {key_param} GROUP BY path HAVING {having})"

    def list_length(self, node: ListLength) -> str:
        size = {
            "tags": "len(n.tag_keys)",
            "etags": "len(n.all_tags)",
            "aliases": "len(n.aliases)",
            "outlinks": "coalesce((SELECT count(DISTINCT lower(l.target)) FROM links l WHERE l.path = n.path), 0)",
        }[node.field]
        return f"({size}) {node.op} {self.p(node.value)}"

    def file_cmp(self, node: FileCmp) -> str:
        col = FILE_SQL[node.field]
        value = node.value.value
        if node.value.kind == "link":
            return f"lower({_NAME}) = {self.p(str(value).lower())}"
        return f"{col} {node.op} {self.p(value)}"

    # ------------------------------------------------------------------ order
    def order(self, keys: tuple[SortKey, ...]) -> tuple[str, str]:
        """(joins, ORDER BY list) for the sort keys, ending with the path (deterministic)."""
        joins: list[str] = []
        terms: list[str] = []
        for i, key in enumerate(keys):
            direction = " DESC" if key.descending else ""
            if key.file:
                terms.append(f"{FILE_SQL[key.key]}{direction}")
                continue
            alias = f"sk{i}"
            joins.append(
                f"LEFT JOIN (SELECT path, kind, s, n, d, b FROM props WHERE key = {self.p(key.key)} AND item = 0) "
                f"{alias} ON {alias}.path = n.path"
            )
            terms += [
                f"({alias}.path IS NULL)",
                KIND_RANK.format(a=alias),  # types in a fixed order; values within each by `direction`
                # each type by its own column only (1 and 1.0 tie, then go by path)
                f"CASE WHEN {alias}.kind = 'number' THEN {alias}.n END{direction} NULLS LAST",
                f"CASE WHEN {alias}.kind IN ('date', 'datetime') THEN {alias}.d END{direction} NULLS LAST",
                f"CASE WHEN {alias}.kind = 'string' THEN {alias}.s END{direction} NULLS LAST",
                f"CASE WHEN {alias}.kind = 'boolean' THEN {alias}.b END{direction} NULLS LAST",
            ]
        terms.append("n.path")
        return " ".join(joins), ", ".join(terms)


def _holds(left: float, op: str, right: float) -> bool:
    return {"=": left == right, "<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]


def mismatch_sql(key: str, value: Lit) -> tuple[str, list[Any]] | None:
    """SQL counting notes that hold `key` with a scalar of another type than `value`'s."""
    cond = compatible(value)
    if cond is None:
        return None
    return (
        f"SELECT count(DISTINCT path) FROM props WHERE key = ? AND {_SCALAR} AND NOT ({cond})",
        [key],
    )
