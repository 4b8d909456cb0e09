"""`vault_tasks(query=…)` and `vault_tasks(block=…)`: a Tasks query run over the pinned snapshot.

The query is parsed (lang_parse), its filter and sort lines become the same plan
`vault_tasks`' own filters compile to (`plan.plan_of_query`), and the one engine selects and
orders the tasks (evaluate.py, order.py over the snapshot's task columns); then the query's
`limit`, its groups (lang_groups) and `limit groups`, as the plugin does them. "Today" comes
from the caller's clock. The answer is `vault_tasks`' (`results`, `total`, `next_cursor`,
`counts`) plus `matched` (tasks the filters kept before the query's `limit`), `groups` (then
`results` is empty and the page runs over the groups' tasks in order) and `block`. `total`
is what the query lists: after its `limit`, and with groups the sum of their (limited) tasks.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from vault_agent.contracts import Outcome, WarningItem
from vault_agent.errors import InvalidParameter
from vault_agent.paging import decode_cursor, encode_cursor, fit
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.structured.values import Clock, system_clock
from vault_agent.query.tasks.blocks import TasksBlock, read_block
from vault_agent.query.tasks.evaluate import Context
from vault_agent.query.tasks.lang_ast import Query
from vault_agent.query.tasks.lang_groups import group_tasks
from vault_agent.query.tasks.lang_lines import QueryFile
from vault_agent.query.tasks.lang_models import BlockRef, TaskGroupOut
from vault_agent.query.tasks.lang_parse import parse_query
from vault_agent.query.tasks.order import Selection
from vault_agent.query.tasks.plan import plan_of_query
from vault_agent.query.tasks.rows import task_rows
from vault_agent.query.tasks.run import (
    MAX_ANSWER_CHARS,
    TASKS_LIMIT_DEFAULT,
    TASKS_LIMIT_MAX,
    TasksData,
    select,
    task_counts,
)
from vault_agent.task_model import TaskRow


@dataclass(frozen=True)
class QueryRequest:
    """Exactly one of `query` (a Tasks query's text) and `block` (`NOTE#N`, `NOTE#Heading`)."""

    query: str | None = None
    block: str | None = None
    limit: int | None = None
    cursor: str | None = None

    def fingerprint(self) -> str:
        """What a cursor of this request's pages carries (a page of another query is refused)."""
        source = f"query\n{self.query}" if self.query is not None else f"block\n{self.block}"
        return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class _Answer:
    """The query's tasks in answer order, each with its group (index into `groups`) or -1."""

    tasks: list[TaskRow]
    group_of: list[int]
    groups: list[tuple[list[str], int]]  # names, total (before `limit groups`)


def _answer(query: Query, ctx: Context, selection: Selection) -> _Answer:
    kept = len(selection) if query.limit is None else min(query.limit, len(selection))
    if not query.groups:
        return _Answer(task_rows(selection.take(0, kept), ctx), [-1] * kept, [])
    tasks, group_of, groups = [], [], []
    for k, g in enumerate(
        group_tasks(query.groups, task_rows(selection.take(0, kept), ctx), ctx.today, query.group_limit)
    ):
        groups.append((list(g.names), g.total))
        tasks += g.tasks
        group_of += [k] * len(g.tasks)
    return _Answer(tasks, group_of, groups)


def _page_groups(answer: _Answer, start: int, page: list[TaskRow]) -> list[TaskGroupOut]:
    out: list[TaskGroupOut] = []
    for offset, task in enumerate(page, start=start):
        k = answer.group_of[offset]
        names, total = answer.groups[k]
        if not out or out[-1].names != names:
            out.append(TaskGroupOut(names=names, total=total, tasks=[]))
        out[-1].tasks.append(task)
    return out


def _start(request: QueryRequest, snapshot_id: int) -> tuple[int, list[WarningItem]]:
    """(offset of the page, CURSOR_SNAPSHOT_CHANGED when the cursor is of an older snapshot).

    Raises:
        InvalidParameter: a cursor of another query.
    """
    if not request.cursor:
        return 0, []
    offset, owner, snapshot = decode_cursor(request.cursor, (int, str, int))
    if owner != request.fingerprint() or offset < 0:
        raise InvalidParameter.about("cursor", "belongs to another query; repeat the same query with it")
    if snapshot == snapshot_id:
        return offset, []
    changed = WarningItem(
        code="CURSOR_SNAPSHOT_CHANGED",
        message="the index changed since the previous page; results may repeat or skip a task",
    )
    return offset, [changed]


def run_tasks_query(
    reader: SnapshotReader, request: QueryRequest, clock: Clock = system_clock
) -> Outcome[TasksData]:
    """A Tasks query's text, or the ```tasks block an address names, run over one pinned
    snapshot: one page of its tasks (or of its groups' tasks).

    Raises:
        InvalidQuery: an instruction vault-agent does not run (named by line).
        InvalidParameter: both or neither of query and block, limit outside 1–500, a cursor of
            another query, a malformed block address.
        InvalidPath, Forbidden, NotFound, Ambiguous, TooLarge: the block's note or block.
    """
    if (request.query is None) == (request.block is None):
        raise InvalidParameter.naming("give either {query} (a Tasks query) or {block} (NOTE#N), not both")
    limit = TASKS_LIMIT_DEFAULT if request.limit is None else request.limit
    if not 1 <= limit <= TASKS_LIMIT_MAX:
        raise InvalidParameter.about("limit", f"must be from 1 to {TASKS_LIMIT_MAX}")
    today = clock().date()
    with reader.acquire() as view:
        warnings = view.warnings()
        found: TasksBlock | None = None
        text, query_file = request.query or "", None
        if request.block is not None:
            found, block_warnings = read_block(reader, view, request.block)
            warnings += block_warnings
            text, query_file = found.text, QueryFile(found.path)
        parsed = parse_query(text, today, query_file)
        ctx, selection = select(reader, view, plan_of_query(parsed), today)
        offset, moved = _start(request, ctx.snap.snapshot_id)
        answer = _answer(parsed, ctx, selection)
        counts = task_counts(ctx)
        freshness = view.freshness
    page = answer.tasks[offset : offset + limit]
    kept = fit(page, MAX_ANSWER_CHARS, lambda t: len(t.model_dump_json(by_alias=True)))
    if kept < len(page):
        warnings.append(
            WarningItem(
                code="RESULTS_TRUNCATED",
                message=f"this page stops at {kept} tasks to stay small; continue with next_cursor",
            )
        )
    page, end = page[:kept], offset + kept
    more = end < len(answer.tasks)
    data = TasksData(
        results=[] if parsed.groups else page,
        total=len(answer.tasks),
        next_cursor=encode_cursor(end, request.fingerprint(), ctx.snap.snapshot_id) if more else None,
        counts=counts,
        indexFreshness=freshness,
        matched=len(selection),
        groups=_page_groups(answer, offset, page) if parsed.groups else None,
        block=BlockRef(path=found.path, index=found.index, line=found.line, heading=found.heading)
        if found
        else None,
    )
    return Outcome(data=data, warnings=[*warnings, *moved], freshness=freshness)
