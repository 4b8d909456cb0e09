"""Run a parsed Tasks query over a snapshot's task columns, in the plugin's order of work.

docs/Queries/Grouping.md "Notes": all filters run, then the sorting, then `limit`, then the
grouping, then `limit groups` (which caps each group and leaves the total alone).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np

from vault_agent.query.tasks.lang_ast import Query
from vault_agent.query.tasks.lang_columns import TaskColumns
from vault_agent.query.tasks.lang_eval import matching_rows
from vault_agent.query.tasks.lang_groups import Group, group_rows
from vault_agent.query.tasks.lang_order import sort_rows


@dataclass(frozen=True)
class QueryRun:
    """What a query selects: rows in its order (after `limit`), how many matched before
    `limit`, and its groups when it has `group by` lines."""

    rows: np.ndarray
    matched: int
    groups: list[Group] | None


def run_query(query: Query, cols: TaskColumns, today: dt.date) -> QueryRun:
    """The rows (indices into `cols`) a query selects, sorted, limited and grouped."""
    rows = matching_rows([f.filter for f in query.filters], cols)
    ordered = sort_rows(query.sorts, cols, rows, today)
    limited = ordered if query.limit is None else ordered[: query.limit]
    groups = group_rows(query.groups, cols, limited, today, query.group_limit) if query.groups else None
    return QueryRun(rows=limited, matched=len(rows), groups=groups)
