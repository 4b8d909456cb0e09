"""The search filters (`tags`, `folder`, `modified_after/before` of `search` and
`vault_search`): the notes they leave, from the pinned snapshot, before any ranking."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vault_agent.query.structured.filters import Filters, SearchFilters, selection_preds
from vault_agent.query.structured.plan import conj
from vault_agent.query.structured.relations import attach
from vault_agent.query.structured.sql import SqlBuilder
from vault_agent.query.structured.values import Clock, system_clock

if TYPE_CHECKING:
    from vault_agent.query.snapshot import SnapshotReader, SnapshotView


def candidate_paths(
    reader: SnapshotReader, view: SnapshotView, search: SearchFilters, clock: Clock = system_clock
) -> frozenset[str] | None:
    """The notes a filtered search may answer with; None without filters (all notes).

    Raises:
        InvalidQuery: a malformed filter. InvalidParameter: one too long.
    """
    filters = Filters.of(search)
    if not filters.selecting():
        return None
    where = conj(selection_preds(filters, clock))
    attach(reader, view)
    builder = SqlBuilder(lambda _link: [])  # these filters have no links
    sql = f"SELECT DISTINCT path FROM ({builder.matches(where)})"
    return frozenset(p for (p,) in view.con.execute(sql, builder.params).fetchall())
