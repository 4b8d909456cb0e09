"""Run a Tasks query (`query=`) or a note's ```tasks block (`block=`) over the pinned snapshot.

The core `vault_tasks` calls for its `query` and `block` parameters: one snapshot answers
(the task columns are built once per snapshot and cached), "today" comes from the caller's
clock, never the wall clock. The answer lists tasks in the query's order, or its groups when
it has `group by` lines; `matched` is how many tasks the filters kept before `limit`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from vault_agent.contracts import Outcome
from vault_agent.query.snapshot import SnapshotReader, SnapshotView
from vault_agent.query.snapshot_cache import remember
from vault_agent.query.tasks.blocks import TasksBlock, read_block
from vault_agent.query.tasks.lang_columns import TaskColumns, build_columns
from vault_agent.query.tasks.lang_lines import QueryFile
from vault_agent.query.tasks.lang_parse import parse_query
from vault_agent.query.tasks.lang_run import QueryRun, run_query
from vault_agent.task_model import TaskRow
from vault_agent.task_syntax import PRIORITY_NAMES, is_valid_date

CACHE_KIND = "tasks_lang_columns"
_DATES = ("due", "scheduled", "start", "created", "done", "cancelled")


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


def task_columns(view: SnapshotView, cache: dict[Any, Any] | None) -> TaskColumns:
    """The pinned snapshot's task columns, built on first use and kept per snapshot."""
    key = (CACHE_KIND, view.manifest.snapshot_id)
    if cache is not None and key in cache:
        found: TaskColumns = cache[key]
        return found
    table: pa.Table = view.con.sql("SELECT * FROM tasks ORDER BY path, line").to_arrow_table()
    cols = build_columns(table, view.manifest.task_settings)
    if cache is not None:
        remember(cache, CACHE_KIND, view.manifest.snapshot_id, cols)
    return cols


def task_row(cols: TaskColumns, k: int) -> TaskRow:
    """Row k of the columns as the answer's TaskRow."""
    raw = {name: cols.table.column(name)[k].as_py() for name in cols.table.column_names}
    dates = {f: raw[f] for f in _DATES if raw[f] is not None}
    priority = int(raw["priority"]) if raw["priority"] is not None else 3
    return TaskRow(
        path=raw["path"],
        line=raw["line"],
        status=raw["status"],
        status_type=_type_name(cols, k),
        status_name=cols.status_name[k],
        description=raw["description"],
        tags=list(raw["tags"] or []),
        heading_path=list(raw["heading_path"] or []),
        parent_line=raw["parent_line"],
        invalid_dates=[f for f, v in dates.items() if not is_valid_date(v)],
        priority=None if priority == 3 else PRIORITY_NAMES[priority],  # type: ignore[arg-type]  # not 'none'
        recurrence=raw["recurrence"],
        id=raw["id"],
        depends_on=list(raw["depends_on"] or []),
        on_completion=raw["on_completion"],
        notation=raw["notation"],
        **dates,
    )


def _type_name(cols: TaskColumns, k: int) -> Any:
    from_codes = ("TODO", "DONE", "IN_PROGRESS", "ON_HOLD", "CANCELLED", "NON_TASK")
    return from_codes[int(cols.status_code[k])]


MAX_PAGE = 500  # tasks in one answer; more are reached with `offset`


def _result(
    cols: TaskColumns, run: QueryRun, block: TasksBlock | None, page: tuple[int, int]
) -> TasksQueryResult:
    """The page [offset, offset + limit) of the query's tasks (in group order when grouped)."""
    offset, limit = page
    ref = (
        BlockRef(path=block.path, index=block.index, line=block.line, heading=block.heading)
        if block
        else None
    )
    if run.groups is None:
        picked = run.rows[offset : offset + limit]
        more = offset + limit < len(run.rows)
        tasks = [task_row(cols, int(k)) for k in picked]
        return TasksQueryResult(
            tasks=tasks, matched=run.matched, block=ref, next_offset=offset + limit if more else None
        )
    groups, seen = [], 0
    for g in run.groups:
        start, stop = max(offset - seen, 0), min(len(g.rows), offset + limit - seen)
        if start < stop:
            tasks = [task_row(cols, int(k)) for k in g.rows[start:stop]]
            groups.append(TaskGroupOut(names=list(g.names), total=g.total, tasks=tasks))
        seen += len(g.rows)
    more = offset + limit < seen
    return TasksQueryResult(
        tasks=[], groups=groups, matched=run.matched, block=ref, next_offset=offset + limit if more else None
    )


def run_tasks_query(
    reader: SnapshotReader,
    today: dt.date,
    source: tuple[str | None, str | None],
    page: tuple[int, int] = (0, 50),
    cache: dict[Any, Any] | None = None,
) -> Outcome[TasksQueryResult]:
    """`source` = (query text, block address), exactly one given: run over one pinned
    snapshot; `page` = (offset, limit) over the tasks in answer order.

    Raises:
        InvalidQuery: an instruction vault-agent does not run (named by line).
        InvalidParameter, InvalidPath, Forbidden, NotFound, Ambiguous, TooLarge: the block
            address, its note or its block.
    """
    query, block = source
    with reader.acquire() as view:
        warnings = view.warnings()
        found: TasksBlock | None = None
        text, query_file = query or "", None
        if block is not None:
            found, block_warnings = read_block(reader, view, block)
            warnings += block_warnings
            text, query_file = found.text, QueryFile(found.path)
        parsed = parse_query(text, today, query_file)
        cols = task_columns(view, cache)
        run = run_query(parsed, cols, today)
        return Outcome(data=_result(cols, run, found, page), warnings=warnings, freshness=view.freshness)
