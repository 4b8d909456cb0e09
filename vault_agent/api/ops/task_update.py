"""vault_update_task on every surface (a write tool: listed and callable with --allow-writes).

The CLI (`task set PATH:LINE …`) is a dry run with the diff unless `--apply`; MCP and HTTP
take `dry_run` (default false). "Today" (done and cancelled stamps, `when done`) is the
context's clock, the system's local date by default.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field

from vault_agent.api.human.task_update import applied_value, removed_value, render_task_update
from vault_agent.api.operation import AppContext, CliOption, Operation, Params
from vault_agent.contracts import Outcome
from vault_agent.files import task_update
from vault_agent.files.models import UpdateTaskResult
from vault_agent.files.races import race_safe


# Lean on purpose (every byte is paid in each session's tool list): bounds are the core's.
class UpdateTaskParams(Params):
    path: str = Field(description="note path, or PATH:LINE")
    line: int | None = None
    status: str | None = None  # a symbol (' ', x, /, -), a type (todo, done, cancelled …) or a name
    due: str | None = None
    scheduled: str | None = None
    start: str | None = None
    priority: Literal["highest", "high", "medium", "none", "low", "lowest"] | None = None
    expected_line: str | None = Field(None, description="CONFLICT if the line changed")
    expected_sha256: str | None = None
    dry_run: bool = False
    wait_for_index: bool = False


def _update_task(ctx: AppContext, p: UpdateTaskParams) -> Outcome[UpdateTaskResult]:
    today = (ctx.clock() if ctx.clock is not None else dt.datetime.now()).date()
    request = task_update.TaskUpdate(**p.model_dump())
    return task_update.update_task(ctx, request, today)


UPDATE_TASK = Operation(
    name="task set",
    mcp_name="vault_update_task",
    http_method="POST",
    http_path="/files/task",
    params=UpdateTaskParams,
    func=race_safe(_update_task),
    kind="write",
    idempotent=False,  # completing a recurring task adds its next occurrence each time
    description="Change a task's status, dates (YYYY-MM-DD, tomorrow, in 3 days; 'none' removes) or priority in its notation; "
    "use it to tick off a task (status 'done' stamps today; a recurring task recurs).",
    title="Update task",
    result=UpdateTaskResult,
    cli_args=("path",),
    cli_options=(
        CliOption("--status", "status", help="symbol (' ', x, /, -) or todo, done, in_progress, cancelled"),
        CliOption("--due", "due", help="due date: YYYY-MM-DD, today, tomorrow, in 3 days, next friday"),
        CliOption("--no-due", "due", bool, help="remove the due date", convert=removed_value),
        CliOption(
            "--scheduled",
            "scheduled",
            help="scheduled date: YYYY-MM-DD, today, tomorrow, in 3 days, next friday",
        ),
        CliOption(
            "--no-scheduled", "scheduled", bool, help="remove the scheduled date", convert=removed_value
        ),
        CliOption("--start", "start", help="start date: YYYY-MM-DD, today, tomorrow, in 3 days, next friday"),
        CliOption("--no-start", "start", bool, help="remove the start date", convert=removed_value),
        CliOption("--priority", "priority", help="highest, high, medium, none, low or lowest"),
        CliOption("--line", "line", int, help="the task's line (or give PATH:LINE)"),
        CliOption("--expected-line", "expected_line", help="the line's text as read; CONFLICT if it changed"),
        CliOption(
            "--expected-sha256", "expected_sha256", help="the note's sha256 as read; CONFLICT if it changed"
        ),
        CliOption(
            "--apply",
            "dry_run",
            bool,
            help="write the change (default: show the diff)",
            convert=applied_value,
            absent=True,
        ),
        CliOption("--wait-for-index", "wait_for_index", bool, help="return once the index holds the write"),
    ),
    cli_help="Change a task: status, dates, priority (a dry run with the diff unless --apply). "
    "Example: vault-agent task set Projects/Garden.md:12 --status done --apply",
    render=render_task_update,
)

OPERATIONS: tuple[Operation, ...] = (UPDATE_TASK,)
