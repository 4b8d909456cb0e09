"""Tasks (`/ui/tasks`): what is overdue, what is due in the next 7 days, the open tasks by
note, and a form that runs a Tasks plugin query or a note's ```` ```tasks ```` block as written.

Every list is an answer of the `tasks` operation (`vault_tasks`, the same call every surface
makes): the first three with its filters (`overdue`; `status: open` with `due` from today
to 6 days on; `status: open` sorted by path), the form with its `query` or `block`. Each list
is bounded (a few tasks, "all N" opens that list alone, paged with the operation's cursor).
A query that does not read shows the operation's own message (`INVALID_QUERY` and the line).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.ops import tasks
from vault_agent.errors import InvalidParameter, VaultAgentError
from vault_agent.query.structured import values
from vault_agent.web.page import Page
from vault_agent.web.session import Session

PREVIEW = 10  # tasks of a list on the overview; "all N" opens the list alone
OPEN_PAGE = 25  # open tasks on the overview (grouped by note)
LIST_PAGE = 50  # tasks per page of one list alone
QUERY_PAGE = 30  # tasks per page of a query's answer (shown below the overview)
DESCRIPTION_CHARS = 240  # a task's text as the page shows it (the note holds the rest)
WEEK_DAYS = 7


@dataclass(frozen=True)
class TaskList:
    """One of the overview's lists: its name in the address, its heading, its filters."""

    key: str
    heading: str
    empty: str


OVERDUE = TaskList("overdue", "Overdue", "Nothing is overdue.")
WEEK = TaskList("week", "Due in the next 7 days", "Nothing is due in the next 7 days.")
OPEN = TaskList("open", "Open tasks by note", "No open task.")
LISTS = {t.key: t for t in (OVERDUE, WEEK, OPEN)}


def list_params(which: TaskList, today: dt.date) -> dict[str, Any]:
    """The `tasks` operation's filters for one of the overview's lists."""
    if which is OVERDUE:
        return {"overdue": True, "sort": "due"}
    if which is WEEK:
        last = today + dt.timedelta(days=WEEK_DAYS - 1)
        return {"status": ["open"], "due": f"in {today.isoformat()} {last.isoformat()}", "sort": "due"}
    return {"status": ["open"], "sort": "path"}


def shown_task(row: dict[str, Any]) -> dict[str, Any]:
    """A task as the page shows it: its text cut to DESCRIPTION_CHARS (the note has it whole)."""
    text = str(row.get("description", ""))
    cut = len(text) > DESCRIPTION_CHARS
    return {**row, "description": text[:DESCRIPTION_CHARS] + ("…" if cut else "")}


def by_note(rows: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Consecutive tasks of the same note together (the rows come sorted by path)."""
    groups: list[tuple[str, list[dict[str, Any]]]] = []
    for row in rows:
        if groups and groups[-1][0] == row["path"]:
            groups[-1][1].append(row)
        else:
            groups.append((row["path"], [row]))
    return groups


def shown_answer(body: dict[str, Any]) -> dict[str, Any]:
    """The operation's answer with every task (also inside groups) as the page shows it."""
    data = dict(body["data"])
    data["results"] = [shown_task(r) for r in data["results"]]
    if data.get("groups") is not None:
        data["groups"] = [{**g, "tasks": [shown_task(r) for r in g["tasks"]]} for g in data["groups"]]
    return {"data": data, "warnings": body.get("warnings", [])}


@dataclass(frozen=True)
class TasksWant:
    """What the view was asked: one list alone (`show`), a query or a block, cursors."""

    show: TaskList | None
    cursor: str | None
    query: str
    block: str
    query_cursor: str | None


def _run(page: Page, raw: dict[str, Any]) -> dict[str, Any]:
    return body_of(tasks.TASKS, invoke(tasks.TASKS, page.ctx, raw))


def _ran_query(page: Page, want: TasksWant) -> tuple[dict[str, Any] | None, VaultAgentError | None]:
    """The form's answer, or the operation's refusal (shown on the page as it says it)."""
    if not (want.query.strip() or want.block.strip()):
        return None, None
    raw: dict[str, Any] = {"limit": QUERY_PAGE, "cursor": want.query_cursor}
    if want.query.strip():
        raw["query"] = want.query
    if want.block.strip():
        raw["block"] = want.block.strip()
    try:
        return shown_answer(_run(page, raw)), None
    except VaultAgentError as exc:  # INVALID_QUERY, a block not found: the form stays usable
        return None, exc


def _tasks(page: Page, want: TasksWant) -> dict[str, Any]:
    today = (page.ctx.clock or values.system_clock)().date()
    lists: dict[str, dict[str, Any]] = {}
    for which in (want.show,) if want.show is not None else (OVERDUE, WEEK, OPEN):
        limit = LIST_PAGE if want.show is not None else (OPEN_PAGE if which is OPEN else PREVIEW)
        raw = {**list_params(which, today), "limit": limit, "cursor": want.cursor if want.show else None}
        lists[which.key] = shown = shown_answer(_run(page, raw))
        shown["notes"] = by_note(shown["data"]["results"]) if which is OPEN else None
    answer, problem = _ran_query(page, want)
    return {"lists": lists, "today": today.isoformat(), "answer": answer, "problem": problem}


async def tasks_view(page: Page, request: web.Request, session: Session) -> web.StreamResponse:
    q = request.query
    show = q.get("show") or None
    if show is not None and show not in LISTS:
        raise InvalidParameter(f"parameter 'show' must be one of {', '.join(LISTS)}")
    want = TasksWant(
        show=LISTS[show] if show else None,
        cursor=q.get("cursor") or None,
        query=q.get("query", ""),
        block=q.get("block", ""),
        query_cursor=q.get("qcursor") or None,
    )
    found = await page.call(_tasks, page, want)
    problem: VaultAgentError | None = found["problem"]
    return page.page_html(
        request,
        session,
        "tasks.html",
        http_status=problem.http_status if problem is not None else 200,
        view="tasks",
        parts=("answer",),
        show=want.show,
        lists_meta=LISTS,
        query=want.query,
        block=want.block,
        **found,
    )
