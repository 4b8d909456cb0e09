"""Run a Tasks query (`query=`) or a note's ```tasks block (`block=`) over the pinned snapshot.

What `vault_tasks` calls for its `query` and `block` parameters. The query is parsed
(lang_parse), its filter and sort lines become the same plan `vault_tasks`' own filters
compile to (`plan.plan_of_query`), and the one engine selects and orders the tasks
(evaluate.py, order.py over the snapshot's task columns); then the query's `limit`, its
groups (lang_groups) and `limit groups`, as the plugin does them. "Today" comes from the
caller's clock, never the wall clock. The answer lists the query's tasks in its order, or its
groups; `matched` is how many tasks its filters kept before `limit`; one page of at most
MAX_PAGE tasks, the next reached with `offset`.
"""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from vault_agent.contracts import Outcome
from vault_agent.errors import InvalidParameter
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.tasks.blocks import TasksBlock, read_block
from vault_agent.query.tasks.evaluate import Context
from vault_agent.query.tasks.lang_ast import Query
from vault_agent.query.tasks.lang_groups import group_tasks
from vault_agent.query.tasks.lang_lines import QueryFile
from vault_agent.query.tasks.lang_parse import parse_query
from vault_agent.query.tasks.order import Selection
from vault_agent.query.tasks.plan import plan_of_query
from vault_agent.query.tasks.rows import task_rows
from vault_agent.query.tasks.run import select
from vault_agent.task_model import TaskRow

MAX_PAGE = 500  # tasks in one answer; more are reached with `offset`


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)


class TaskGroupOut(_Wire):
    """One group of a `group by` query: its heading at each level and its tasks."""

    names: list[str]
    total: int  # tasks in the group before `limit groups`
    tasks: list[TaskRow]


class BlockRef(_Wire):
    """The ```tasks block that was run."""

    path: str
    index: int  # 1-based among the note's tasks blocks (`block: PATH#INDEX`)
    line: int
    heading: str | None = None


class TasksQueryResult(_Wire):
    """What a Tasks query selects (module doc)."""

    tasks: list[TaskRow]
    groups: list[TaskGroupOut] | None = None
    matched: int
    block: BlockRef | None = None
    next_offset: int | None = None  # the `offset` of the next page, None on the last


def _result(
    ctx: Context, selection: Selection, query: Query, block: TasksBlock | None, page: tuple[int, int]
) -> TasksQueryResult:
    """The page [offset, offset + limit) of the query's tasks (in group order when grouped)."""
    offset, limit = page
    ref = (
        BlockRef(path=block.path, index=block.index, line=block.line, heading=block.heading)
        if block
        else None
    )
    kept = len(selection) if query.limit is None else min(query.limit, len(selection))
    if not query.groups:
        stop = min(offset + limit, kept)
        tasks = task_rows(selection.take(offset, stop), ctx) if offset < stop else []
        more = offset + limit < kept
        return TasksQueryResult(
            tasks=tasks, matched=len(selection), block=ref, next_offset=offset + limit if more else None
        )
    groups, seen = [], 0
    for g in group_tasks(query.groups, task_rows(selection.take(0, kept), ctx), ctx.today, query.group_limit):
        start, stop = max(offset - seen, 0), min(len(g.tasks), offset + limit - seen)
        if start < stop:
            groups.append(TaskGroupOut(names=list(g.names), total=g.total, tasks=g.tasks[start:stop]))
        seen += len(g.tasks)
    more = offset + limit < seen
    return TasksQueryResult(
        tasks=[],
        groups=groups,
        matched=len(selection),
        block=ref,
        next_offset=offset + limit if more else None,
    )


def run_tasks_query(
    reader: SnapshotReader,
    today: dt.date,
    source: tuple[str | None, str | None],
    page: tuple[int, int] = (0, 50),
) -> Outcome[TasksQueryResult]:
    """`source` = (query text, block address), exactly one given: run over one pinned
    snapshot; `page` = (offset, limit) over the tasks in answer order.

    Raises:
        InvalidQuery: an instruction vault-agent does not run (named by line).
        InvalidParameter: a page out of range. InvalidParameter, InvalidPath, Forbidden, NotFound, Ambiguous, TooLarge: the block
            address, its note or its block.
    """
    query, block = source
    offset, limit = page
    if offset < 0 or not 1 <= limit <= MAX_PAGE:
        raise InvalidParameter(f"a page is 1 to {MAX_PAGE} tasks from an offset of 0 or more")
    with reader.acquire() as view:
        warnings = view.warnings()
        found: TasksBlock | None = None
        text, query_file = query or "", None
        if block is not None:
            found, block_warnings = read_block(reader, view, block)
            warnings += block_warnings
            text, query_file = found.text, QueryFile(found.path)
        parsed = parse_query(text, today, query_file)
        ctx, selection = select(reader, view, plan_of_query(parsed), today)
        data = _result(ctx, selection, parsed, found, page)
        return Outcome(data=data, warnings=warnings, freshness=view.freshness)
