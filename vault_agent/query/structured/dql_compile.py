"""A parsed Dataview query → the plan (plan.py), with constants folded.

`FROM` sources and `WHERE` conditions become predicates over one note (the conditions in
dql_where.py; a comparison needs a field on one side and a constant on the other, which
dql_fold.py folds: `due < date(today) - dur(7 days)` compares with one date). `SORT` takes
fields; `LIMIT` caps the matches. `TABLE` columns and LIST's one expression stay
expressions, evaluated per result by `evaluate.py`.
"""

from __future__ import annotations

from vault_agent.query.structured import dql_ast as A
from vault_agent.query.structured.dql_fold import ConstFolder
from vault_agent.query.structured.dql_parse import parse_dql
from vault_agent.query.structured.dql_where import LIST_FIELDS, WhereCompiler, field_of, fold_tag
from vault_agent.query.structured.plan import (
    Column,
    FileP,
    FolderP,
    LinkP,
    Plan,
    Pred,
    SortKey,
    TagP,
    TrueP,
    conj,
    disj,
    negate,
)
from vault_agent.query.structured.values import Clock


class Compiler:
    """One DQL query → its plan: FROM and the clauses around WHERE here, WHERE in dql_where.py."""

    def __init__(self, text: str, clock: Clock) -> None:
        self.text = text
        self.consts = ConstFolder(text, clock)
        self.conditions = WhereCompiler(self.consts)

    # ------------------------------------------------------------------ the query
    def plan(self, query: A.Query) -> Plan:
        preds: list[Pred] = [self.source(query.source)] if query.source is not None else []
        preds += [self.conditions.cond(e) for e in query.where]
        sort = tuple(self.sort_key(item) for item in query.sort)
        columns = tuple(self.column(c) for c in query.columns)
        return Plan(
            where=conj(preds),
            sort=sort,
            limit=query.limit,
            columns=columns,
            warnings=tuple(self.conditions.warnings),
        )

    def column(self, col: A.Column) -> Column:
        from vault_agent.query.structured.display import check_expr

        check_expr(col.expr, self.text)
        return Column(header=col.header, expr=col.expr)

    def sort_key(self, item: A.SortItem) -> SortKey:
        ref = field_of(item.expr, self.text)
        if ref is None:
            raise self.consts.refuse("SORT by an expression (sort by a field)", item.expr)
        if ref.file:
            if ref.name in LIST_FIELDS:
                raise self.consts.refuse(f"SORT by file.{ref.name}", item.expr)
            name = {"mday": "mtime", "cday": "ctime", "link": "path"}.get(ref.name, ref.name)
            return SortKey(name, item.descending, file=True)
        return SortKey(ref.name, item.descending)

    # ------------------------------------------------------------------ sources
    def source(self, src: A.Source) -> Pred:
        if isinstance(src, A.STag):
            return TagP(fold_tag(src.tag))
        if isinstance(src, A.SFolder):
            path = src.path.strip().strip("/")
            if not path:
                return TrueP()
            if path.lower().endswith(".md"):
                return FileP(path)
            return disj([FolderP(path), FileP(path + ".md")])
        if isinstance(src, A.SLink):
            return LinkP("from" if src.outgoing else "to", src.target)
        if isinstance(src, A.SAnd):
            return conj([self.source(src.left), self.source(src.right)])
        if isinstance(src, A.SOr):
            return disj([self.source(src.left), self.source(src.right)])
        return negate(self.source(src.item))


def compile_dql(text: str, clock: Clock) -> Plan:
    """A DQL query → the plan.

    Raises:
        InvalidQuery: a syntax error or an unsupported construct (position, what was expected).
    """
    return Compiler(text, clock).plan(parse_dql(text))
