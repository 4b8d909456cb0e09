"""`vault_tasks`: the tasks of the vault selected by filters, one page of them, from one pinned
snapshot (SPEC "Tasks", docs/tasks.md).

One request: compile the filters (filters.py) into a plan, pin the snapshot, take its task
columns (columns.py: loaded once per segment), evaluate the plan segment by segment
(evaluate.py), order every match (order.py), and answer one page: at most `limit` tasks and
at most MAX_ANSWER_CHARS characters of them (then `RESULTS_TRUNCATED`), with `total` and a
`next_cursor`. A cursor names the page's offset and its last task (path, line): when the
next page is read from a newer snapshot, it continues after that task wherever it moved
(`CURSOR_SNAPSHOT_CHANGED` says results may repeat or skip one).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from vault_agent.contracts import Outcome, WarningItem
from vault_agent.errors import InvalidParameter
from vault_agent.paging import decode_cursor, encode_cursor, fit
from vault_agent.query.structured.values import Clock, system_clock
from vault_agent.query.tasks.columns import task_snapshot, vocabs_of
from vault_agent.query.tasks.evaluate import Context, matching
from vault_agent.query.tasks.filters import TaskFilters, compile_filters, overdue_filter
from vault_agent.query.tasks.lang_ast import Done
from vault_agent.query.tasks.lang_models import BlockRef, TaskGroupOut
from vault_agent.query.tasks.order import Selection, order
from vault_agent.query.tasks.plan import TaskPlan
from vault_agent.query.tasks.rows import task_rows
from vault_agent.task_model import TaskRow

if TYPE_CHECKING:
    from vault_agent.query.snapshot import SnapshotReader, SnapshotView

TASKS_LIMIT_DEFAULT = 50
TASKS_LIMIT_MAX = 500
MAX_ANSWER_CHARS = 50_000  # a page stops early past this (RESULTS_TRUNCATED, next_cursor)


class TaskCounts(BaseModel):
    """The whole vault's open and overdue tasks, whatever the filters (orientation: seed
    000 fixes vault_overview's fields, so the counts travel here; docs/tasks.md)."""

    open: int
    overdue: int


class TasksData(BaseModel):
    """`{results, total, next_cursor, counts, indexFreshness}` (vault_query's shape, plus
    the vault's task counts)."""

    model_config = ConfigDict(populate_by_name=True)

    results: list[TaskRow]
    total: int  # every task the filters select
    next_cursor: str | None
    counts: TaskCounts
    index_freshness: str = Field(alias="indexFreshness")
    # A Tasks query (`query`, `block`; lang_api.py): how many tasks its filters kept before
    # its `limit`, its groups when it has `group by` lines (then `results` is empty), the block.
    matched: int | None = Field(default=None, exclude_if=lambda v: v is None)
    groups: list[TaskGroupOut] | None = Field(default=None, exclude_if=lambda v: v is None)
    block: BlockRef | None = Field(default=None, exclude_if=lambda v: v is None)


@dataclass(frozen=True)
class TasksRequest:
    filters: TaskFilters = field(default_factory=TaskFilters)
    limit: int | None = None
    cursor: str | None = None


def select(
    reader: SnapshotReader, view: SnapshotView, plan: TaskPlan, today: dt.date
) -> tuple[Context, Selection]:
    """Every task of the pinned snapshot the plan selects, in its order (before its limit)."""
    ctx = Context(
        snap=task_snapshot(reader, view),
        vocabs=vocabs_of(reader),
        today=today,
        note_tags=view.live.vocab("tags"),
    )
    return ctx, order(matching(plan.filters, ctx), plan.sorts, ctx, plan.default_order)


def task_counts(ctx: Context) -> TaskCounts:
    """Open and overdue tasks of the whole snapshot (computed once per snapshot and day)."""
    known = ctx.snap.counts.get(ctx.today)
    if known is None:
        open_ = sum(len(r) for r in matching((Done(False),), ctx))
        overdue = sum(len(r) for r in matching((overdue_filter(ctx.today),), ctx))
        known = ctx.snap.counts[ctx.today] = (open_, overdue)
    return TaskCounts(open=known[0], overdue=known[1])


def _position(ctx: Context, selection: Selection, path: str, line: int) -> int | None:
    """Where the task (path, line) stands in the selection, or None."""
    for k, sv in enumerate(ctx.snap.segments):
        note = sv.tasks.note_paths.index(path) if path in sv.tasks.note_paths else -1  # a tuple: C-level scan
        if note < 0:
            continue
        here = (selection.segment == k) & (sv.tasks.note_row[selection.row] == note)
        here &= sv.tasks.line[selection.row] == line
        found = np.flatnonzero(here)
        if len(found):
            return int(found[0])
    return None


def _start(request: TasksRequest, fingerprint: str, ctx: Context, selection: Selection) -> tuple[int, bool]:
    """(offset of the page, whether the cursor came from another snapshot).

    Raises:
        InvalidParameter: a cursor no previous answer of these filters gave.
    """
    if not request.cursor:
        return 0, False
    offset, owner, snapshot_id, path, line = decode_cursor(request.cursor, (int, str, int, str, int))
    if owner != fingerprint or offset < 0:
        raise InvalidParameter.about("cursor", "belongs to other filters; repeat the same filters with it")
    if snapshot_id == ctx.snap.snapshot_id:
        return offset, False
    at = _position(ctx, selection, path, line)
    return (offset if at is None else at + 1), True


def vault_tasks(
    reader: SnapshotReader, request: TasksRequest, clock: Clock = system_clock
) -> Outcome[TasksData]:
    """Tasks matching every filter, in order, one page of them, from one snapshot.

    Raises:
        InvalidQuery: a status, date, priority, tag or sort entry that does not read.
        InvalidParameter: limit outside 1–500, a bad glob or cursor, too many entries.
        InvalidPath: a folder outside the vault.
        IndexNotFound, IndexIncompatible: no usable snapshot.
    """
    limit = TASKS_LIMIT_DEFAULT if request.limit is None else request.limit
    if not 1 <= limit <= TASKS_LIMIT_MAX:
        raise InvalidParameter.about("limit", f"must be from 1 to {TASKS_LIMIT_MAX}")
    today = clock().date()
    plan = compile_filters(request.filters, today)
    fingerprint = request.filters.fingerprint()
    with reader.acquire() as view:
        ctx, selection = select(reader, view, plan, today)
        warnings = [*view.warnings()]
        offset, moved = _start(request, fingerprint, ctx, selection)
        if moved:
            warnings.append(
                WarningItem(
                    code="CURSOR_SNAPSHOT_CHANGED",
                    message="the index changed since the previous page; results may repeat or skip a task",
                )
            )
        page = task_rows(selection.take(offset, offset + limit), ctx)
        counts = task_counts(ctx)
        freshness = view.freshness
    kept = fit(page, MAX_ANSWER_CHARS, lambda t: len(t.model_dump_json(by_alias=True)))
    if kept < len(page):
        warnings.append(
            WarningItem(
                code="RESULTS_TRUNCATED",
                message=f"this page stops at {kept} tasks to stay small; continue with next_cursor",
            )
        )
    page = page[:kept]
    end = offset + len(page)
    last = page[-1] if page else None
    more = last is not None and end < len(selection)
    data = TasksData(
        results=page,
        total=len(selection),
        next_cursor=encode_cursor(end, fingerprint, ctx.snap.snapshot_id, last.path, last.line)
        if more and last is not None
        else None,
        counts=counts,
        indexFreshness=freshness,
    )
    return Outcome(data=data, warnings=warnings, freshness=freshness)
