"""The plan every task selection compiles to: filters, sort keys, a limit.

Two languages select tasks, and both end here, evaluated by one engine (`evaluate.py`) over
the snapshot's task columns (`columns.py`):

- `vault_tasks`' own filters (`filters.py`: status, dates, overdue, priority, tags, folder,
  glob, heading, text, recurring, blocked, sort);
- a Tasks plugin query (`lang_parse.py`), whose syntax tree *is* this plan's vocabulary:
  each filter line is a `lang_ast.Filter` (`Done`, `StatusTypeIs`, `DateIs`, `DatePresent`,
  `DateInvalid`, `TextMatch`, `PriorityIs`, `Flag`, `Not`, `BoolOp`), each `sort by` line a
  `lang_ast.SortKey`, `limit` the limit. `plan_of_query` makes the plan of a parsed query;
  `group by` and `limit groups` are the query runner's (they shape the answer, not the
  selection).

What a Tasks query cannot say, the plan adds as its own nodes: a tag with its children in
the task or its note (`TagIs`), a folder and below (`InFolder`), a path glob (`PathGlob`),
status symbols (`StatusSymbolIs`) and any-of lists (`AnyOf`). A predicate neither can
express has no escape hatch on purpose: an unsupported instruction is refused by name
(INVALID_QUERY), never evaluated by code.

Filters all must hold (a query's lines); `sorts` come before the plugin's default order
(`lang_order.DEFAULT_SORT`: status.type, urgency, due, priority, path), then (path, line).
"""

from __future__ import annotations

from dataclasses import dataclass

from vault_agent.query.tasks.lang_ast import Filter, Query, SortKey


@dataclass(frozen=True)
class TagIs:
    """The task carries `tag` (casefolded, no `#`) or, with `nested`, a child of it
    (`a` matches `a/b`); with `note`, the tags of the task's note count too."""

    tag: str
    nested: bool = True
    note: bool = True


@dataclass(frozen=True)
class InFolder:
    """The task's note lies in `folder` or below it ('' = the whole vault)."""

    folder: str


@dataclass(frozen=True)
class PathGlob:
    """The task's note path matches a glob (query/globmatch.py rules)."""

    glob: str


@dataclass(frozen=True)
class StatusSymbolIs:
    """The status symbol between the brackets is one of `symbols`."""

    symbols: frozenset[str]


@dataclass(frozen=True)
class AnyOf:
    """At least one item holds (no item: none does)."""

    items: tuple[Pred, ...]


Pred = Filter | TagIs | InFolder | PathGlob | StatusSymbolIs | AnyOf


@dataclass(frozen=True)
class TaskPlan:
    """What to select (all `filters` hold), in which order, how many at most."""

    filters: tuple[Pred, ...] = ()
    sorts: tuple[SortKey, ...] = ()
    limit: int | None = None


def plan_of_query(query: Query) -> TaskPlan:
    """The plan of a parsed Tasks query (its filter lines, sort lines and limit)."""
    return TaskPlan(
        filters=tuple(f.filter for f in query.filters), sorts=tuple(query.sorts), limit=query.limit
    )
