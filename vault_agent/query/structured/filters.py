"""vault_query's filters (SPEC "Structured queries") → the plan; also the filters that
`search` and `vault_search` take (`tags`, `folder`, `modified_after/before`).

All filters combine with AND. Errors name the filter (`where[1].op`) and what was expected,
as `INVALID_QUERY`; a comparison no value can satisfy is a warning, not an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vault_agent.contracts import MAX_PATH_CHARS
from vault_agent.errors import InvalidParameter, InvalidQuery
from vault_agent.paths import normalize_rel_path
from vault_agent.query.globmatch import compile_glob
from vault_agent.query.structured.dql_where import compare_field, fold_tag
from vault_agent.query.structured.fields import SORT_FIELDS, dotted_expr, property_ref
from vault_agent.query.structured.plan import (
    Column,
    FalseP,
    FileCmp,
    FolderP,
    GlobP,
    LinkP,
    Plan,
    Pred,
    PropContains,
    PropExists,
    SortKey,
    TagP,
    TrueP,
    conj,
    disj,
    negate,
)
from vault_agent.query.structured.values import (
    Clock,
    Lit,
    relative_or_iso,
    text_filter_literal,
    typed_literal,
)

OPS = ("=", "!=", "<", "<=", ">", ">=", "in", "contains", "exists", "missing")
MAX_TAGS = 50
MAX_WHERE = 50
MAX_SELECT = 50
MAX_IN = 500


@dataclass(frozen=True)
class WhereItem:
    field: str
    op: str
    value: Any = None


@dataclass(frozen=True)
class SearchFilters:
    """The filters search, vault_search and vault_query share (vault_query's rules): notes
    with every tag (or a child of it), in a folder and below, modified at or after / before.
    None / empty: not given."""

    tags: tuple[str, ...] = ()
    folder: str | None = None
    modified_after: str | None = None
    modified_before: str | None = None


@dataclass(frozen=True)
class Filters(SearchFilters):
    """The filters of one vault_query request: the search filters and vault_query's own
    (None / empty: not given)."""

    any_tags: tuple[str, ...] = ()
    where: tuple[WhereItem, ...] = ()
    glob: str | None = None
    created_after: str | None = None
    created_before: str | None = None
    links_to: str | None = None
    linked_from: str | None = None
    sort: str | None = None
    select: tuple[str, ...] = ()

    @classmethod
    def of(cls, search: SearchFilters) -> Filters:
        """vault_query's filters holding only `search`'s (what the checks and predicates take)."""
        if isinstance(search, Filters):
            return search
        return cls(
            tags=search.tags,
            folder=search.folder,
            modified_after=search.modified_after,
            modified_before=search.modified_before,
        )

    def selecting(self) -> bool:
        """True when some filter restricts the notes (sort and select do not)."""
        return bool(
            self.tags or self.any_tags or self.where or self.folder or self.glob or self.links_to
            or self.linked_from or self.modified_after or self.modified_before or self.created_after
            or self.created_before
        )  # fmt: skip

    def given(self) -> bool:
        return self.selecting() or bool(self.sort or self.select)


MAX_NAME_CHARS = 1_000  # a tag, a property name, a value, a date, a sort, a glob


def check_sizes(filters: Filters) -> None:
    """Bounds the published schema leaves out to stay small (docs/mcp.md).

    Raises:
        InvalidParameter: a text too long or a list too long.
    """
    for name in ("folder", "links_to", "linked_from"):
        value = getattr(filters, name)
        if value is not None and len(value) > MAX_PATH_CHARS:
            raise InvalidParameter.about(name, f"must be at most {MAX_PATH_CHARS} characters")
    texts = [("glob", filters.glob), ("sort", filters.sort)] + [
        (n, getattr(filters, n))
        for n in ("modified_after", "modified_before", "created_after", "created_before")
    ]
    texts += [("tags", t) for t in filters.tags] + [("any_tags", t) for t in filters.any_tags]
    texts += [("select", t) for t in filters.select] + [("where.field", w.field) for w in filters.where]
    texts += [("where.value", w.value) for w in filters.where if isinstance(w.value, str)]
    for name, value in texts:
        if isinstance(value, str) and len(value) > MAX_NAME_CHARS:
            raise InvalidParameter.about(name, f"must be at most {MAX_NAME_CHARS} characters")
    for name, items, most in (
        ("tags", filters.tags, MAX_TAGS), ("any_tags", filters.any_tags, MAX_TAGS),
        ("where", filters.where, MAX_WHERE), ("select", filters.select, MAX_SELECT),
    ):  # fmt: skip
        if len(items) > most:
            raise InvalidParameter.about(name, f"must have at most {most} items")


def _tag(raw: object, name: str) -> str:
    if not isinstance(raw, str) or not fold_tag(raw):
        raise InvalidQuery(f"{name}: expected a tag like 'project' or '#project/alpha'")
    return fold_tag(raw)


def _date(raw: str | None, name: str, clock: Clock) -> int | None:
    if raw is None:
        return None
    value = relative_or_iso(raw, clock) if isinstance(raw, str) else None
    if value is None:
        raise InvalidQuery(
            f"{name}: expected an ISO date or datetime (2024-05-01, 2024-05-01T10:30), "
            "today, yesterday, or a time ago like 12h, 7d, 2w, 3mo, 1y"
        )
    return value


def folder_pred(folder: str | None) -> Pred:
    """Notes in the folder or below (the vault root: every note).

    Raises:
        InvalidPath: an absolute path, `..` leaving the vault, or a NUL.
    """
    if folder is None:
        return TrueP()
    rel = normalize_rel_path(folder.strip().rstrip("/"), allow_root=True)
    return FolderP(rel) if rel else TrueP()


def time_preds(filters: Filters, clock: Clock) -> list[Pred]:
    """The modified/created bounds: after = at or after, before = strictly before."""
    out: list[Pred] = []
    for name, fld, op in (
        ("modified_after", "mtime", ">="),
        ("modified_before", "mtime", "<"),
        ("created_after", "ctime", ">="),
        ("created_before", "ctime", "<"),
    ):
        value = _date(getattr(filters, name), name, clock)
        if value is not None:
            out.append(FileCmp(fld, op, Lit("date", value)))  # type: ignore[arg-type]
    return out


def tag_preds(filters: Filters) -> list[Pred]:
    out: list[Pred] = [TagP(_tag(t, f"tags[{i}]")) for i, t in enumerate(filters.tags)]
    if filters.any_tags:
        out.append(disj([TagP(_tag(t, f"any_tags[{i}]")) for i, t in enumerate(filters.any_tags)]))
    return out


def _where(item: WhereItem, i: int, warnings: list[tuple[str, str]]) -> Pred:
    name = f"where[{i}]"
    if not isinstance(item.field, str) or not item.field.strip():
        raise InvalidQuery(f"{name}.field: expected a property name")
    op = item.op
    if op not in OPS:
        raise InvalidQuery(f"{name}.op: expected one of {' '.join(OPS)}")
    ref = property_ref(item.field.strip())
    value = item.value
    if op in ("exists", "missing"):
        if ref.file:
            return TrueP() if op == "exists" else FalseP()
        exists = PropExists(ref.name)
        return exists if op == "exists" else negate(exists)
    if op == "in":
        if isinstance(value, str):  # "draft,review": the CLI's form, and clients that send text only
            value = [v.strip() for v in value.split(",")]
        if not isinstance(value, list) or not value or len(value) > MAX_IN:
            raise InvalidQuery(f"{name}.value: 'in' expects a list of 1 to {MAX_IN} values")
        return disj([compare_field(ref, "=", _scalar(v, name), warnings) for v in value])
    lit = _scalar(value, name)
    if op == "contains":
        if ref.file:
            raise InvalidQuery(f"{name}: 'contains' applies to properties; filter file fields with = < >")
        return PropContains(ref.name, lit)
    return compare_field(ref, op, lit, warnings)


def _scalar(value: Any, name: str) -> Lit:
    if isinstance(value, list | dict):
        raise InvalidQuery(f"{name}.value: expected a string, number, boolean or null")
    return text_filter_literal(value) if isinstance(value, str) else typed_literal(value)


def sort_keys(sort: str | None) -> tuple[SortKey, ...]:
    """`path title mtime ctime size` or a property, `-` for descending; `a,-b` for several."""
    if sort is None or not sort.strip():
        return ()
    keys: list[SortKey] = []
    for i, part in enumerate(p.strip() for p in sort.split(",")):
        descending = part.startswith("-")
        name = part.lstrip("-+").strip()
        if not name:
            raise InvalidQuery(f"sort[{i}]: expected a field name like mtime or -priority")
        implicit = SORT_FIELDS.get(name.lower().removeprefix("file."))
        if implicit is not None and (name.lower() in SORT_FIELDS or name.lower().startswith("file.")):
            keys.append(SortKey(implicit, descending, file=True))
        else:
            keys.append(SortKey(property_ref(name).name, descending))
    return tuple(keys)


def selection_preds(filters: Filters, clock: Clock) -> list[Pred]:
    """The filters `search` and `vault_search` share with vault_query.

    Raises:
        InvalidQuery: a malformed filter. InvalidParameter: one too long.
        InvalidPath: a folder outside the vault.
    """
    check_sizes(filters)
    return [folder_pred(filters.folder), *tag_preds(filters), *time_preds(filters, clock)]


def compile_filters(filters: Filters, clock: Clock) -> Plan:
    """The plan of vault_query's filters.

    Raises:
        InvalidQuery: a malformed filter (which one, what was expected).
        InvalidParameter: a malformed glob.
    """
    warnings: list[tuple[str, str]] = []
    preds = selection_preds(filters, clock)
    preds += [_where(item, i, warnings) for i, item in enumerate(filters.where)]
    if filters.glob:
        compile_glob(filters.glob)
        preds.append(GlobP(filters.glob))
    if filters.links_to:
        preds.append(LinkP("to", filters.links_to))
    if filters.linked_from:
        preds.append(LinkP("from", filters.linked_from))
    columns: dict[str, Column] = {}
    for i, name in enumerate([*filters.select, *(w.field for w in filters.where)]):
        if not isinstance(name, str) or not name.strip():
            raise InvalidQuery(f"select[{i}]: expected a property name")
        ref = property_ref(name.strip())
        header = name.strip()
        if header in columns or ref.file and header not in filters.select:
            continue
        if ref.file:
            columns[header] = Column(header=header, expr=dotted_expr(header))
        else:
            columns[header] = Column(header=header, key=ref.name)
    return Plan(
        where=conj(preds),
        sort=sort_keys(filters.sort),
        columns=tuple(columns.values()),
        warnings=tuple(warnings),
    )
