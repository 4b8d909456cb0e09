"""The plan → parameterised SQL over the request's relations `q_notes` (alias `n`),
`q_props`, `q_tags` (relations.py) and the snapshot's `links`. Every constant is a
parameter; names in the SQL text are ours.

A plan renders as a *set* of note paths, so that a query costs about what it selects, not
what the vault holds: a property or a tag is a scan of that key's rows only (`props` and
`tags` are sorted by key), `and` is INTERSECT, `or` is UNION, `not` is EXCEPT from every
note; only conditions on the notes' own columns (folder, dates, size, names, globs) scan
`notes`, all of one `and` in one scan. A list property matches when any of its items does.
Comparisons are typed by the constant:

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
ALL_NOTES = "SELECT path FROM q_notes"
NO_NOTES = "SELECT NULL::VARCHAR AS path WHERE false"
# Predicates answered from the notes' own columns (one scan of `notes` for all of an `and`).
NOTE_COLUMNS = (FolderP, FileP, GlobP, FileCmp, FileContains, ListHas, ListLength)


def compatible(value: Lit) -> str | None:
    """The props condition of an item of the constant's type (for ordering), or None."""
    return {
        "number": "kind = 'number' AND n IS NOT NULL",
        "date": "d IS NOT NULL",
        "string": "kind = 'string'",
        "boolean": "kind = 'boolean'",
    }.get(value.kind)


def on_columns_only(pred: Pred) -> bool:
    """True when a plan reads only the notes' own columns (or nothing: every note)."""
    return isinstance(pred, TrueP) or _on_columns(pred)


def unique_paths(pred: Pred) -> bool:
    """True when `matches(pred)` yields each path once (a tag's rows: one per note and tag)."""
    return isinstance(pred, TagP)


def _on_columns(pred: Pred) -> bool:
    if isinstance(pred, NOTE_COLUMNS) and not (isinstance(pred, ListLength) and pred.field == "tags"):
        return True
    if isinstance(pred, AndP | OrP):
        return all(_on_columns(i) for i in pred.items)
    return isinstance(pred, NotP) and _on_columns(pred.item)


class SqlBuilder:
    """Renders a plan into SQL text and its parameter list (in text order)."""

    def __init__(self, links: LinkResolve) -> None:
        self.params: list[Any] = []
        self.links = links

    def p(self, value: Any) -> str:
        self.params.append(value)
        return "?"

    # ------------------------------------------------------------------ sets of notes
    def matches(self, node: Pred) -> str:
        """A SELECT of the paths of the live notes matching `node` (a set: no duplicates
        are guaranteed; the caller takes DISTINCT)."""
        if isinstance(node, TrueP):
            return ALL_NOTES
        if isinstance(node, FalseP):
            return NO_NOTES
        if _on_columns(node):
            return f"SELECT n.path FROM q_notes n WHERE {self.on_columns(node)}"
        if isinstance(node, AndP):
            return self.conjunction(node)
        if isinstance(node, OrP):
            return " UNION ".join(f"(SELECT path FROM ({self.matches(i)}))" for i in node.items)
        if isinstance(node, NotP):
            return f"({ALL_NOTES}) EXCEPT (SELECT path FROM ({self.matches(node.item)}))"
        if isinstance(node, TagP):
            exact = "" if node.nested else " AND exact"
            return f"SELECT path FROM q_tags WHERE tag = {self.p(node.tag)}{exact}"
        if isinstance(node, LinkP):
            paths = self.links(node)
            return f"SELECT unnest({self.p(paths)}::VARCHAR[]) AS path" if paths else NO_NOTES
        if isinstance(node, ListLength):  # of file.tags: the `tags` rows
            return self.counted("q_tags", "tag", None, "count(*)", node.op, node.value)
        return self.property(node)

    def conjunction(self, node: AndP) -> str:
        """AND: one scan of `notes` for the column conditions, INTERSECT the property, tag
        and link sets, EXCEPT the negated ones (positive sets first: they are small)."""
        columns = [i for i in node.items if _on_columns(i)]
        negated = [i.item for i in node.items if isinstance(i, NotP) and not _on_columns(i)]
        positive = [i for i in node.items if not _on_columns(i) and not isinstance(i, NotP)]
        parts = [f"(SELECT path FROM ({self.matches(i)}))" for i in positive]
        if columns:
            parts.append(
                f"(SELECT n.path FROM q_notes n WHERE {' AND '.join(self.on_columns(c) for c in columns)})"
            )
        sql = " INTERSECT ".join(parts) or f"({ALL_NOTES})"
        for item in negated:
            sql = f"(SELECT path FROM ({sql})) EXCEPT (SELECT path FROM ({self.matches(item)}))"
        return sql

    def property(self, node: Pred) -> str:
        """The notes whose property rows meet a property predicate."""
        if isinstance(node, PropExists):
            return self.props(node.key, lambda: "NOT (kind = 'null' AND NOT is_list)")
        if isinstance(node, PropTruthy):
            return self.props(node.key, lambda: _TRUTHY)
        if isinstance(node, PropCmp):
            if self.cmp_cond(node.op, node.value, dry=True) is None:
                return NO_NOTES
            cmp = node
            return self.props(node.key, lambda: self.cmp_cond(cmp.op, cmp.value) or "false")
        if isinstance(node, PropContains):
            return self.contains(node)
        if isinstance(node, PropLength):
            size = (
                "CASE WHEN bool_or(is_list) THEN count(*) FILTER (WHERE kind <> 'empty') "
                "WHEN any_value(kind) = 'string' THEN length(any_value(s)) ELSE 0 END"
            )
            return self.counted("q_props", "key", node.key, size, node.op, node.value)
        raise TypeError(f"unknown predicate {type(node).__name__}")

    def props(self, key: str, cond: Callable[[], str]) -> str:
        """Notes with an item of property `key` meeting `cond()` (rendered after the key,
        so that the parameters come in the text's order)."""
        key_param = self.p(key)
        return f"SELECT path FROM q_props WHERE key = {key_param} AND ({cond()})"

    def counted(self, table: str, column: str, key: str | None, size: str, op: str, value: float) -> str:
        """Notes whose rows of `table` (for `key`) number or measure `size op value`; a note
        without rows has size 0 (and matches when 0 does)."""
        where = f"WHERE {column} = {self.p(key)} " if key is not None else ""
        having = f"({size}) {op} {self.p(value)}"
        if _holds(0.0, op, value):
            return (
                f"({ALL_NOTES}) EXCEPT (SELECT path FROM {table} {where}GROUP BY path HAVING NOT ({having}))"
            )
        return f"SELECT path FROM {table} {where}GROUP BY path HAVING {having}"

    def cmp_cond(self, op: str, value: Lit, dry: bool = False) -> str | None:
        """The typed condition of one item against a constant (None: never true); `dry`
        only answers whether there is one, adding no parameter."""
        kind = value.kind
        if dry:
            return (
                ""
                if kind in ("number", "boolean", "date", "string") or (kind == "link" and op == "=")
                else None
            )
        if kind in ("number", "boolean"):
            column = "n" if kind == "number" else "b"
            typed = f"kind = '{kind}' AND {column} {op} {self.p(value.value)}"
            if op == "=" and value.text is not None:
                return f"(({typed}) OR s = {self.p(value.text)})"
            return typed
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
                lambda: (
                    f"(is_list AND {col} = {self.p(text)}) OR "
                    f"(NOT is_list AND kind = 'string' AND contains({col}, {self.p(text)}))"
                ),
            )
        if self.cmp_cond("=", value, dry=True) is None:
            return NO_NOTES
        return self.props(node.key, lambda: self.cmp_cond("=", value) or "false")

    # ------------------------------------------------------------------ note columns
    def on_columns(self, node: Pred) -> str:
        """A condition over the notes' own columns (alias `n`)."""
        if isinstance(node, AndP):
            return "(" + " AND ".join(self.on_columns(i) for i in node.items) + ")"
        if isinstance(node, OrP):
            return "(" + " OR ".join(self.on_columns(i) for i in node.items) + ")"
        if isinstance(node, NotP):
            return f"(NOT {self.on_columns(node.item)})"
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
        if isinstance(node, FileCmp):
            if node.value.kind == "link":
                return f"lower({_NAME}) = {self.p(str(node.value.value).lower())}"
            return f"{FILE_SQL[node.field]} {node.op} {self.p(node.value.value)}"
        if isinstance(node, FileContains):
            col = FILE_SQL[node.field]
            if node.fold:
                return f"contains(lower({col}), {self.p(node.text.lower())})"
            return f"contains({col}, {self.p(node.text)})"
        if isinstance(node, ListHas):
            return f"list_contains(n.aliases, {self.p(node.value)})"
        if isinstance(node, ListLength):
            size = {
                "etags": "len(n.all_tags)",
                "aliases": "len(n.aliases)",
                "outlinks": "coalesce((SELECT count(DISTINCT lower(l.target)) FROM links l WHERE l.path = n.path), 0)",
            }[node.field]
            return f"({size}) {node.op} {self.p(node.value)}"
        raise TypeError(f"not a condition on note columns: {type(node).__name__}")

    # ------------------------------------------------------------------ order
    def order(self, keys: tuple[SortKey, ...], path: str = "n.path") -> tuple[str, str]:
        """(joins, ORDER BY list) for the sort keys over the matches' `path`, ending with
        the path (deterministic); file fields read the notes as `n`."""
        joins: list[str] = []
        terms: list[str] = []
        for i, key in enumerate(keys):
            direction = " DESC" if key.descending else ""
            if key.file:
                terms.append(f"{path if key.key == 'path' else FILE_SQL[key.key]}{direction}")
                continue
            alias = f"sk{i}"
            joins.append(
                f"LEFT JOIN (SELECT path, kind, s, n, d, b FROM q_props WHERE key = {self.p(key.key)} AND item = 0) "
                f"{alias} ON {alias}.path = {path}"
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
        terms.append(path)
        return " ".join(joins), ", ".join(terms)


def _holds(left: float, op: str, right: float) -> bool:
    return {
        "=": left == right,
        "<": left < right,
        "<=": left <= right,
        ">": left > right,
        ">=": left >= right,
    }[op]


def mismatch_sql(key: str, value: Lit) -> tuple[str, list[Any]] | None:
    """SQL counting notes that hold `key` with a scalar of another type than `value`'s."""
    cond = compatible(value)
    if cond is None:
        return None
    return (
        f"SELECT count(DISTINCT path) FROM q_props WHERE key = ? AND {_SCALAR} AND NOT ({cond})",
        [key],
    )
