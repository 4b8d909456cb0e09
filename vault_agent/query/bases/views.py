"""A view of a base, checked before any row is read: what runs, what is refused, and why.

`compile_view(spec, view)` parses every expression the view needs (its filters and the
base's, the formulas its columns, sort, groups, filters and summaries read, and their
formulas in turn) and refuses the view, with the construct and its place in the file,
when one of them is not supported, does not parse, or reads a formula that does not
exist or reads itself (INVALID_QUERY). One exception, so that a view with one formula
column we cannot compute still shows its rows: a formula that breaks only that column
(no filter, sort, group, summary or other column reads it) leaves the column's values
null with an `UNSUPPORTED` (or `FORMULA_ERROR`) warning naming the column and construct.

View types: `table`, `cards` and `list` show the same rows (what differs is drawing);
`map` (markers from coordinates, a community plugin) and any type a plugin registers are
refused by name: their rows depend on semantics we do not implement.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field

from vault_agent.contracts import WarningItem
from vault_agent.errors import InvalidQuery
from vault_agent.query.bases import expr_ast as A
from vault_agent.query.bases.base_file import BaseSpec, Filter, Group, Source, Statement, ViewSpec
from vault_agent.query.bases.expr_errors import ExpressionError, FormulaCycle, Unsupported
from vault_agent.query.bases.expr_parse import parse_expression
from vault_agent.query.bases.formulas import FormulaSet
from vault_agent.query.bases.row_scope import ViewError, locate
from vault_agent.query.bases.rows import Needs
from vault_agent.query.bases.shapes import PropertyRef, property_id
from vault_agent.query.bases.summaries import DEFAULT_SUMMARIES
from vault_agent.query.bases.support import check_supported, formula_refs

RUNNABLE_TYPES = ("table", "cards", "list")
_LINK_NAMES = frozenset(("links", "embeds", "hasLink", "linksTo"))
_FILE_ONLY_FIELDS = frozenset(("ext",))  # fields whose filters pick attachments in Obsidian


@dataclass(frozen=True)
class CompiledStatement:
    expr: A.Expr
    source: Source


@dataclass(frozen=True)
class CompiledGroup:
    op: str
    items: tuple[CompiledFilter, ...]


CompiledFilter = CompiledStatement | CompiledGroup


@dataclass(frozen=True)
class Column:
    """One shown property: `id` as the view's `order` writes it, `name` its display name."""

    id: str
    name: str
    ref: PropertyRef
    broken: bool = False  # a formula we cannot compute: its values are null


@dataclass(frozen=True)
class OrderKey:
    id: str
    ref: PropertyRef
    descending: bool


@dataclass(frozen=True)
class Summary:
    """A summary of one column: a default (`Average`) or a custom formula of the base."""

    property: str
    ref: PropertyRef
    name: str
    custom: A.Expr | None
    source: Source | None


@dataclass
class CompiledView:
    spec: BaseSpec
    view: ViewSpec
    filters: tuple[CompiledFilter, ...]
    columns: tuple[Column, ...]
    sort: tuple[OrderKey, ...]
    group: OrderKey | None
    summaries: tuple[Summary, ...]
    formulas: FormulaSet
    formula_sources: dict[str, Source]
    needs: Needs
    warnings: list[WarningItem] = field(default_factory=list)


def _statement(source: Source) -> CompiledStatement:
    try:
        expr = parse_expression(source.text)
        check_supported(expr)
    except ExpressionError as err:
        raise locate(err, source) from None
    return CompiledStatement(expr, source)


def compile_filter(node: Filter) -> CompiledFilter:
    """A filter tree with every statement parsed and checked.

    Raises:
        ViewError: a statement does not parse or is not supported (positioned in the file).
    """
    if isinstance(node, Statement):
        return _statement(node.source)
    assert isinstance(node, Group)
    return CompiledGroup(node.op, tuple(compile_filter(item) for item in node.items))


def statements(node: CompiledFilter) -> Iterator[CompiledStatement]:
    """Every statement of a compiled filter tree."""
    if isinstance(node, CompiledStatement):
        yield node
    else:
        for item in node.items:
            yield from statements(item)


class _Formulas:
    """The base's formulas: which are usable, and what breaks the others."""

    def __init__(self, spec: BaseSpec) -> None:
        self.sources = spec.formulas
        self.set = _formula_set(tuple((name, source.text) for name, source in spec.formulas.items()))

    def problem(self, name: str, where: Source | None, pos: A.Position) -> tuple[str, ViewError] | None:
        """(the broken formula, its positioned error) for `formula.name` and what it reads."""
        if name not in self.sources:
            err = Unsupported(f"formula.{name} (no formula of that name in this base)", pos)
            return name, (locate(err, where) if where is not None else ViewError(err))
        seen: set[str] = set()
        pending = [name]
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            formula = self.set.formulas[current]
            source = self.sources[current]
            if formula.error is not None:
                return current, locate(formula.error, source)
            circle = self.set.cycle(current)
            if circle is not None:
                text = " → ".join(f"formula.{n}" for n in circle)
                return current, locate(
                    FormulaCycle(f"formulas reference each other in a circle: {text}"), source
                )
            assert formula.expr is not None
            for ref, ref_pos in formula_refs(formula.expr):
                if ref not in self.sources:
                    err = Unsupported(f"formula.{ref} (no formula of that name in this base)", ref_pos)
                    return current, locate(err, source)
                pending.append(ref)
        return None

    def closure(self, names: list[str]) -> set[str]:
        out: set[str] = set()
        pending = list(names)
        while pending:
            name = pending.pop()
            if name in out or name not in self.set.formulas:
                continue
            out.add(name)
            expr = self.set.formulas[name].expr
            if expr is not None:
                pending.extend(ref for ref, _ in formula_refs(expr))
        return out


@functools.lru_cache(maxsize=64)
def _formula_set(texts: tuple[tuple[str, str], ...]) -> FormulaSet:
    """The parsed formulas of a base, once for all its views (FormulaSet is never changed)."""
    return FormulaSet.parse(dict(texts))


def _refs_of_filter(node: CompiledFilter) -> list[tuple[str, A.Position, Source]]:
    return [(name, pos, st.source) for st in statements(node) for name, pos in formula_refs(st.expr)]


def _view_type(view: ViewSpec) -> None:
    if view.type in RUNNABLE_TYPES:
        return
    what = (
        "the view type 'map' (markers placed from coordinates, the Maps plugin's own semantics)"
        if view.type == "map"
        else f"the view type '{view.type[:60]}' (registered by a plugin)"
    )
    raise InvalidQuery(
        f"bases view: {what} is not supported; table, cards and list views run ({view.context})"
    )


def _formula_refs(keys: list[PropertyRef]) -> list[str]:
    return [ref.name for ref in keys if ref.namespace == "formula"]


def _columns(spec: BaseSpec, view: ViewSpec, formulas: _Formulas) -> tuple[list[Column], list[WarningItem]]:
    """The view's columns; a formula column that only it reads and that cannot run is kept
    with null values and a warning (module doc)."""
    columns = [
        Column(pid, spec.display_names.get(pid, pid), property_id(pid))
        for pid in view.order or ("file.name",)
    ]
    users: dict[str, int] = {}
    for column in columns:
        for name in formulas.closure(_formula_refs([column.ref])):
            users[name] = users.get(name, 0) + 1
    warnings: list[WarningItem] = []
    for i, column in enumerate(columns):
        if column.ref.namespace != "formula":
            continue
        found = formulas.problem(column.ref.name, None, A.NOWHERE)
        if found is None:
            continue
        broken, error = found
        if users.get(broken, 0) != 1:
            raise error
        code = "UNSUPPORTED" if isinstance(error.original, Unsupported) else "FORMULA_ERROR"
        columns[i] = Column(column.id, column.name, column.ref, broken=True)
        warnings.append(
            WarningItem(code=code, message=f"column {column.id}: its values are null: {error.message}")
        )
    return columns, warnings


def _needs(
    filters: tuple[CompiledFilter, ...], used: set[str], formulas: _Formulas, summaries: tuple[Summary, ...]
) -> Needs:
    exprs = [st.expr for tree in filters for st in statements(tree)]
    exprs += [e for n in used if (e := formulas.set.formulas[n].expr) is not None]
    exprs += [s.custom for s in summaries if s.custom is not None]
    names = {n.name for e in exprs for n in A.walk(e) if isinstance(n, A.Member | A.MethodCall)}
    return Needs(links=bool(names & _LINK_NAMES))


def _notes_only(filters: tuple[CompiledFilter, ...]) -> list[WarningItem]:
    """A warning when a filter reads a field only attachments differ by (`file.ext`)."""
    for tree in filters:
        for st in statements(tree):
            for n in A.walk(st.expr):
                if (
                    isinstance(n, A.Member)
                    and n.name in _FILE_ONLY_FIELDS
                    and isinstance(n.obj, A.Ident)
                    and n.obj.name == "file"
                ):
                    return [
                        WarningItem(
                            code="NOTES_ONLY",
                            message="this view filters on file.ext; vault-agent lists notes only (Markdown "
                            "files), so attachments and other files Obsidian would list are not rows",
                        )
                    ]
    return []


def compile_view(spec: BaseSpec, view: ViewSpec) -> CompiledView:
    """Everything the view needs, checked (module doc).

    Raises:
        InvalidQuery: the view's type is not supported, or a summary is not defined.
        ViewError: an expression does not parse, is not supported, or reads a missing or
            circular formula (positioned in the file).
    """
    _view_type(view)
    formulas = _Formulas(spec)
    filters = tuple(compile_filter(f) for f in (spec.filters, view.filters) if f is not None)
    filter_refs = [(name, pos, source) for tree in filters for name, pos, source in _refs_of_filter(tree)]
    for name, pos, source in filter_refs:
        found = formulas.problem(name, source, pos)
        if found is not None:
            raise found[1]
    sort = tuple(OrderKey(k.property, property_id(k.property), k.direction == "DESC") for k in view.sort)
    group = None
    if view.group_by is not None:
        by = view.group_by
        group = OrderKey(by.property, property_id(by.property), by.direction == "DESC")
    summaries = tuple(_summary(spec, pid, name, view) for pid, name in view.summaries.items())
    keyed = [k.ref for k in (*sort, *([group] if group else []))] + [s.ref for s in summaries]
    for name in _formula_refs(keyed):
        found = formulas.problem(name, None, A.NOWHERE)
        if found is not None:
            raise found[1]
    columns, warnings = _columns(spec, view, formulas)
    shown = [c.ref for c in columns if not c.broken]
    used = formulas.closure(
        _formula_refs(shown) + [name for name, _, _ in filter_refs] + _formula_refs(keyed)
    )
    return CompiledView(
        spec=spec,
        view=view,
        filters=filters,
        columns=tuple(columns),
        sort=sort,
        group=group,
        summaries=summaries,
        formulas=formulas.set,
        formula_sources=dict(formulas.sources),
        needs=_needs(filters, used, formulas, summaries),
        warnings=[*warnings, *_ignored_keys(spec, view), *_notes_only(filters)],
    )


def _summary(spec: BaseSpec, prop: str, name: str, view: ViewSpec) -> Summary:
    ref = property_id(prop)
    if name in DEFAULT_SUMMARIES:
        return Summary(prop, ref, name, None, None)
    source = spec.summaries.get(name)
    if source is None:
        defaults = ", ".join(DEFAULT_SUMMARIES)
        raise InvalidQuery(
            f"bases view: the summary '{name[:60]}' of {prop[:60]} is neither a default ({defaults}) nor in "
            f"the base's summaries ({view.context})"
        )
    return Summary(prop, ref, name, _statement(source).expr, source)


# Keys that only set how Obsidian draws a view (the help pages' view settings): no warning.
_DRAWING_KEYS = frozenset(
    ("columnSize", "image", "imageFit", "imageAspectRatio", "cardSize", "rowHeight", "markers",
     "indentProperties", "separator", "nestedProperties")
)  # fmt: skip


def _ignored_keys(spec: BaseSpec, view: ViewSpec) -> list[WarningItem]:
    keys = [k for k in (*spec.ignored, *view.ignored) if k not in _DRAWING_KEYS]
    if not keys:
        return []
    shown = ", ".join(sorted(set(keys))[:10])
    return [
        WarningItem(
            code="BASE_KEYS_IGNORED",
            message=f"keys vault-agent does not use were ignored ({shown}): they set how Obsidian draws the view",
        )
    ]
