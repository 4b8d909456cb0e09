"""Conversations (`/ui/conversations`): what each agent said and did, answering its open
question, ending a conversation, and undoing its writes.

Reads go through `get-conversation` and `conversations-questions`; a reply through
`conversations-reply` (the reply channel: the waiting `send_message` returns it exactly as
a reply from any surface); ending through the core `conversations.tools.end_by_user` (the
CLI's `conversations end`); undo through `conversations-undo`: a dry run (each file's
plan and diff) first, then, after an explicit confirm, the undo, every file or none.
Where the dry run refuses a file that someone else changed, the page says why and offers
the merge variant when a dry run with `merge` would undo every file.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import Operation
from vault_agent.api.ops import conversations as conversation_ops
from vault_agent.conversations.store import ConversationStore
from vault_agent.conversations.tools import end_by_user
from vault_agent.conversations.write_diffs import write_diffs
from vault_agent.errors import Conflict, InvalidParameter, VaultAgentError
from vault_agent.web.page import Page, see_other
from vault_agent.web.session import Session

LIST_PAGE = 20
ENTRIES_PAGE = 100
DONE = {"replied": "Your reply was delivered to the agent.", "ended": "The conversation is ended."}


def _run(page: Page, op: Operation, raw: dict[str, Any]) -> dict[str, Any]:
    return body_of(op, invoke(op, page.ctx, raw))


def _listing(page: Page, cursor: str | None) -> dict[str, Any]:
    raw: dict[str, Any] = {"limit": LIST_PAGE}
    if cursor:
        raw["cursor"] = cursor
    return {
        "listing": _run(page, conversation_ops.GET_CONVERSATION, raw)["data"],
        "questions": _run(page, conversation_ops.QUESTIONS, {})["data"]["questions"],
    }


async def conversations(page: Page, request: web.Request, session: Session) -> web.StreamResponse:
    values = await page.call(_listing, page, request.query.get("cursor") or None)
    return page.page_html(
        request,
        session,
        "conversations.html",
        view="conversations",
        parts=("list", "questions"),
        here=None,
        **values,
    )


def _conversation(page: Page, cid: str, cursor: str | None) -> dict[str, Any]:
    raw: dict[str, Any] = {"id": cid, "limit": ENTRIES_PAGE}
    if cursor:
        raw["cursor"] = cursor
    shown = _run(page, conversation_ops.GET_CONVERSATION, raw)["data"]
    diffs = write_diffs(ConversationStore(page.ctx.settings.index_dir), cid, shown["entries"])
    questions = _run(page, conversation_ops.QUESTIONS, {"id": cid})["data"]["questions"]
    return {"shown": shown, "diffs": {i: d.model_dump() for i, d in diffs.items()}, "questions": questions}


async def conversation(
    page: Page,
    request: web.Request,
    session: Session,
    *,
    error: VaultAgentError | None = None,
    http_status: int = 200,
) -> web.StreamResponse:
    cid = request.match_info["id"]
    values = await page.call(_conversation, page, cid, request.query.get("cursor") or None)
    done = DONE.get(request.query.get("done", ""))
    return page.page_html(
        request,
        session,
        "conversation.html",
        http_status,
        view="conversations",
        parts=("questions",),
        cid=cid,
        here=cid,
        done=done,
        error=error,
        **values,
    )


async def reply(page: Page, request: web.Request, session: Session) -> web.StreamResponse:
    cid = request.match_info["id"]
    form = await request.post()
    text, seq = form.get("text"), form.get("seq")
    raw: dict[str, Any] = {"id": cid, "text": text if isinstance(text, str) else ""}
    if isinstance(seq, str) and seq:
        raw["seq"] = seq
    try:
        await page.call(_run, page, conversation_ops.REPLY, raw)
    except (Conflict, InvalidParameter) as exc:  # too late, or empty: the conversation, with why
        return await conversation(page, request, session, error=exc, http_status=exc.http_status)
    return see_other(f"/ui/conversations/{cid}?done=replied")


async def end(page: Page, request: web.Request, session: Session) -> web.StreamResponse:
    cid = request.match_info["id"]
    await page.call(end_by_user, page.ctx, cid)
    return see_other(f"/ui/conversations/{cid}?done=ended")


def _plans(page: Page, cid: str, merge: bool) -> dict[str, Any]:
    plan = _run(page, conversation_ops.UNDO, {"id": cid, "merge": merge})
    files = plan["data"]["files"]
    conflicts = [f for f in files if f["status"] == "conflict"]
    would_merge = False
    if conflicts and not merge:  # would the merge variant undo every file? then offer it
        merged = _run(page, conversation_ops.UNDO, {"id": cid, "merge": True})["data"]["files"]
        would_merge = not any(f["status"] == "conflict" for f in merged)
    return {
        "plan": plan["data"],
        "warnings": plan["warnings"],
        "conflicts": conflicts,
        "planned": [f for f in files if f["status"] == "planned"],
        "would_merge": would_merge,
    }


def _merge_flag(value: Any) -> bool:
    return value in ("1", "true", "on")


async def undo_preview(
    page: Page,
    request: web.Request,
    session: Session,
    *,
    error: VaultAgentError | None = None,
    http_status: int = 200,
) -> web.StreamResponse:
    cid = request.match_info["id"]
    merge = _merge_flag(request.query.get("merge"))
    values = await page.call(_plans, page, cid, merge)
    return page.page_html(
        request,
        session,
        "undo.html",
        http_status,
        view="conversations",
        cid=cid,
        merge=merge,
        error=error,
        result=None,
        **values,
    )


async def undo_apply(page: Page, request: web.Request, session: Session) -> web.StreamResponse:
    cid = request.match_info["id"]
    form = await request.post()
    merge = _merge_flag(form.get("merge"))
    if form.get("confirm") != "yes":
        raise InvalidParameter("undo needs the explicit confirmation of its dry run")
    try:
        result = await page.call(
            _run, page, conversation_ops.UNDO, {"id": cid, "apply": True, "merge": merge}
        )
    except Conflict as exc:  # refused, nothing changed: the dry run again, with the reason
        values = await page.call(_plans, page, cid, merge)
        return page.page_html(
            request,
            session,
            "undo.html",
            exc.http_status,
            view="conversations",
            cid=cid,
            merge=merge,
            error=exc,
            result=None,
            **values,
        )
    return page.page_html(
        request,
        session,
        "undo.html",
        view="conversations",
        cid=cid,
        merge=merge,
        error=None,
        result=result["data"],
        warnings=result["warnings"],
        plan=None,
        conflicts=[],
        planned=[],
        would_merge=False,
    )
