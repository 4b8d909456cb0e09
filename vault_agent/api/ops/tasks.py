"""vault_tasks on every surface: the vault's tasks by status, dates, priority, tags, place."""

from __future__ import annotations

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from vault_agent.api.human.tasks import false_value, render_tasks
from vault_agent.api.operation import AppContext, CliOption, Operation, Params
from vault_agent.contracts import Outcome
from vault_agent.errors import InvalidParameter
from vault_agent.query.structured import values
from vault_agent.query.tasks import lang_api, run
from vault_agent.query.tasks.filters import TaskFilters
from vault_agent.query.tasks.run import TasksData


# The published schema shows what an agent reaches for: a Tasks plugin query (which says any
# filter, sort, group and limit) or a note's block, overdue, and paging. Every byte of it is
# paid in each agent session and the default list stays within 12,000 characters
# (docs/mcp.md). The other filters are accepted on every surface but left out of the schema
# (SkipJsonSchema); docs/tasks.md and `vault-agent tasks --help` document them. The core
# checks each value.
class TasksParams(Params):
    # Tasks plugin query text, or a note's ```tasks block (NOTE#N, NOTE#Heading): alone. Their
    # lengths are checked by the core (no maxLength: the schema's bytes are the budget's).
    query: str | None = None
    block: str | None = Field(default=None, description="NOTE#N or NOTE#Heading")
    status: SkipJsonSchema[list[str] | None] = None
    due: SkipJsonSchema[str | None] = None
    overdue: bool | None = None
    tags: SkipJsonSchema[list[str] | None] = None
    limit: int | None = None
    cursor: str | None = None
    priority: SkipJsonSchema[list[str] | None] = None
    folder: SkipJsonSchema[str | None] = None
    text: SkipJsonSchema[str | None] = None
    sort: SkipJsonSchema[str | None] = None
    scheduled: SkipJsonSchema[str | None] = None
    start: SkipJsonSchema[str | None] = None
    done: SkipJsonSchema[str | None] = None
    glob: SkipJsonSchema[str | None] = None
    heading: SkipJsonSchema[str | None] = None
    recurring: SkipJsonSchema[bool | None] = None
    blocked: SkipJsonSchema[bool | None] = None


_FILTER_FIELDS = (
    "status", "due", "overdue", "tags", "priority", "folder", "text", "sort", "scheduled", "start", "done",
    "glob", "heading", "recurring", "blocked",
)  # fmt: skip


def _tasks(ctx: AppContext, p: TasksParams) -> Outcome[TasksData]:
    clock = ctx.clock or values.system_clock
    if p.query is not None or p.block is not None:
        given = [name for name in _FILTER_FIELDS if getattr(p, name) not in (None, [])]
        if given:
            raise InvalidParameter.naming(
                "{query} and {block} run alone: put {given} in the query instead (docs/tasks.md)",
                given=", ".join(given),
            )
        query_request = lang_api.QueryRequest(query=p.query, block=p.block, limit=p.limit, cursor=p.cursor)
        return lang_api.run_tasks_query(ctx.reader, query_request, clock=clock)
    request = run.TasksRequest(
        filters=TaskFilters(
            status=tuple(p.status or ()),
            due=p.due,
            scheduled=p.scheduled,
            start=p.start,
            done=p.done,
            overdue=p.overdue,
            priority=tuple(p.priority or ()),
            tags=tuple(p.tags or ()),
            folder=p.folder,
            glob=p.glob,
            heading=p.heading,
            text=p.text,
            recurring=p.recurring,
            blocked=p.blocked,
            sort=p.sort,
        ),
        limit=p.limit,
        cursor=p.cursor,
    )
    return run.vault_tasks(ctx.reader, request, clock=clock)


TASKS = Operation(
    name="tasks",
    mcp_name="vault_tasks",
    http_method="POST",
    http_both=True,
    http_path="/tasks",
    params=TasksParams,
    func=_tasks,
    description="Use it for open, due or overdue tasks, or a Tasks query.",
    title="Tasks",
    result=TasksData,
    max_answer_chars=run.MAX_ANSWER_CHARS + 10_000,  # the page's bound, plus counts and warnings
    cli_help="Tasks by status, dates, priority, tags or place. Example: vault-agent tasks --status open "
    "--due 'before today' --sort due",
    cli_options=(
        CliOption("--query", "query", help="A Tasks plugin query, run as written (alone)."),
        CliOption("--block", "block", help="A note's ```tasks block: NOTE#N or NOTE#Heading (alone)."),
        CliOption(
            "--status",
            "status",
            help="open, closed, todo, done, in_progress, cancelled or a symbol like '/' (repeatable: any).",
            multiple=True,
        ),  # fmt: skip
        CliOption("--due", "due", help="before today, after 2024-05-01, in next week, none, any, invalid."),
        CliOption("--scheduled", "scheduled", help="As --due, for the scheduled date."),
        CliOption("--start", "start", help="As --due, for the start date."),
        CliOption("--done", "done", help="As --due, for the done date."),
        CliOption("--overdue", "overdue", bool, "Open tasks due before today."),
        CliOption("--not-overdue", "overdue", bool, "Every task but the overdue ones.", convert=false_value),
        CliOption(
            "--priority",
            "priority",
            help="highest high medium none low lowest, or 'above medium' (repeatable: any).",
            multiple=True,
        ),  # fmt: skip
        CliOption(
            "--tag",
            "tags",
            help="The task or its note has this tag or a child of it (repeatable: all).",
            multiple=True,
        ),  # fmt: skip
        CliOption("--folder", "folder", help="Notes in this folder and below."),
        CliOption("--glob", "glob", help="Note path glob, e.g. 'Projects/**'."),
        CliOption("--heading", "heading", help="The heading above the task holds this text."),
        CliOption("--text", "text", help="The description holds this text."),
        CliOption("--recurring", "recurring", bool, "Recurring tasks only."),
        CliOption("--not-recurring", "recurring", bool, "Tasks that do not recur.", convert=false_value),
        CliOption("--blocked", "blocked", bool, "Tasks that depend on an open task."),
        CliOption("--not-blocked", "blocked", bool, "Tasks that are not blocked.", convert=false_value),
        CliOption("--sort", "sort", help="due, scheduled, priority, path, status, urgency …; '-' reverses."),
        CliOption("--limit", "limit", int, "Tasks per page, 1-500 (default 50)."),
        CliOption("--cursor", "cursor", help="next_cursor of the previous page."),
    ),
    render=render_tasks,
)

OPERATIONS: tuple[Operation, ...] = (TASKS,)
