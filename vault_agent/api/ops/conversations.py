"""send_message, end_conversation, get_conversation on every surface (thin adapters).

The core lives in `vault_agent.conversations.tools`; on MCP the session's channel (client
notifications, elicitation, sampling) is bound around the call by `api.conversation_mcp`.
These tools never touch the vault, so they are listed with or without --allow-writes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from vault_agent.api.registry import AppContext, Operation, Params, register
from vault_agent.contracts import Outcome
from vault_agent.conversations import tools
from vault_agent.conversations.records import (
    MAX_MESSAGE_CHARS,
    MAX_TITLE_CHARS,
    ConversationAnswer,
    EndResult,
    SendResult,
)


# Parameter descriptions say only what the schema cannot: the caps are checked by the core
# (TOO_LARGE), not by the schema, and limit's range depends on whether id is given.
class SendMessageParams(Params):
    text: str = Field(description=f"1–{MAX_MESSAGE_CHARS:,} characters")
    priority: Literal["normal", "high"] = "normal"
    expect_reply: bool = Field(False, description="ask; returns reply or reason")


class EndConversationParams(Params):
    title: str | None = Field(None, description=f"one line, ≤ {MAX_TITLE_CHARS} chars")
    summary: str | None = Field(None, description="what was done, decided, left open")


class GetConversationParams(Params):
    id: str | None = Field(None, description="omit to list")
    limit: int | None = Field(None, description="list 1–100 (20); entries 1–500 (100)")
    cursor: str | None = Field(None, description="from next_cursor")


def _send(ctx: AppContext, p: SendMessageParams) -> Outcome[Any]:
    return tools.send_message(ctx, p.text, p.priority, p.expect_reply)


def _end(ctx: AppContext, p: EndConversationParams) -> Outcome[Any]:
    return tools.end_conversation(ctx, p.title, p.summary)


def _get(ctx: AppContext, p: GetConversationParams) -> Outcome[Any]:
    return tools.get_conversation(ctx, p.id, p.limit, p.cursor)


def _render_conversations(body: Any) -> str:
    data = body.get("data", {}) if isinstance(body, dict) else {}
    rows = data.get("conversations")
    if rows is None:
        head = data.get("conversation", {})
        out = [
            f"{head.get('id')}  {head.get('status')}  client {head.get('client')}  "
            f"{head.get('started_at')} -> {head.get('ended_at') or 'open'}",
            f"title: {head.get('title') or ''}",
            f"summary ({head.get('summary_source') or 'none'}): {head.get('summary') or ''}",
        ]
        out += [f"{e.get('at')}  {e.get('type')}  {_entry_text(e)}" for e in data.get("entries", [])]
        return "\n".join(out)
    return "\n".join(
        f"{r['id']}  {r['status']:<5}  {r['tool_calls']:>3} calls {r['writes']:>3} writes  {r.get('title') or ''}"
        for r in rows
    ) or "no conversations"


def _entry_text(e: dict[str, Any]) -> str:
    kind = e.get("type")
    if kind == "call":
        return f"{e.get('tool')} {' '.join(e.get('paths') or [])} -> {e.get('outcome')} ({e.get('ms')} ms)"
    if kind == "write":
        return f"{e.get('tool')} {e.get('path')} {str(e.get('before_sha') or 'new')[:12]} -> {str(e.get('after_sha'))[:12]}"
    if kind == "message":
        return f"[{e.get('priority')}] {e.get('text')}"
    if kind == "reply":
        return f"reply: {e.get('reply')}" if e.get("reply") is not None else f"no reply ({e.get('reason')})"
    if kind == "end":
        return f"ended ({e.get('reason')})"
    if kind == "undo":
        return f"the user undid {e.get('files')} file(s)"
    return str({k: v for k, v in e.items() if k not in ("type", "at")})


register(
    Operation(
        name="send-message",
        mcp_name="send_message",
        http_method="POST",
        http_path="/messages",
        params=SendMessageParams,
        func=_send,
        title="Message the user",
        description="Tell the user something now (progress, a result, a question); call it as often as needed.",
        result=SendResult,
        idempotent=False,
        cli_args=("text",),
        cli_help="Send a message to the user. Example: vault-agent send-message 'index rebuilt'",
        side_effect=True,
    )
)

register(
    Operation(
        name="end-conversation",
        mcp_name="end_conversation",
        http_method="POST",
        http_path="/conversations/end",
        params=EndConversationParams,
        func=_end,
        title="End conversation",
        description="Close this conversation with a title and summary; call it when the task is done or the "
        "topic changes.",
        result=EndResult,
        idempotent=False,
        cli_help="End the http conversation of the server. Example: vault-agent end-conversation --title 'Tidy'",
        side_effect=True,
    )
)

register(
    Operation(
        name="get-conversation",
        mcp_name="get_conversation",
        http_method="GET",
        http_path="/conversations",
        params=GetConversationParams,
        func=_get,
        title="Past conversations",
        description="Past conversations, or one's calls, writes and messages by id; use it to recall "
        "earlier sessions.",
        result=ConversationAnswer,
        cli_help="List or show conversations. Example: vault-agent get-conversation --id ID --json",
        render=_render_conversations,
    )
)
