"""send_message, end_conversation, get_conversation on every surface (thin adapters).

The core lives in `vault_agent.conversations.tools`; on MCP the session's channel (client
notifications, elicitation, sampling) is bound around the call by `api.conversation_mcp`.
These tools never touch the vault, so they are listed with or without --allow-writes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from vault_agent.api.human.conversations import render_conversations as _render_conversations
from vault_agent.api.operation import AppContext, Operation, Params
from vault_agent.contracts import Outcome
from vault_agent.conversations import replies, tools, undo
from vault_agent.conversations.records import (
    MAX_MESSAGE_CHARS,
    MAX_TITLE_CHARS,
    ConversationAnswer,
    EndResult,
    QuestionList,
    ReplyResult,
    SendResult,
    UndoResult,
)
from vault_agent.conversations.tools import ENTRIES_MAX


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
    limit: int | None = Field(None, ge=1, le=ENTRIES_MAX, description="list ≤ 100 (20); entries (100)")
    cursor: str | None = None


class QuestionsParams(Params):
    id: str | None = Field(None, description="omit for every open conversation")


class ReplyParams(Params):
    id: str = Field(description="the conversation that asked")
    text: str = Field(description=f"1–{MAX_MESSAGE_CHARS:,} characters")
    seq: int | None = Field(None, description="message_seq of the question; needed only when several wait")


class UndoParams(Params):
    id: str = Field(description="the conversation whose writes to revert")
    apply: bool = Field(False, description="false: dry run, a diff per file")
    merge: bool = Field(False, description="keep others' edits, take out the agent's")


def _undo(ctx: AppContext, p: UndoParams) -> Outcome[Any]:
    return undo.undo_conversation(ctx, p.id, apply=p.apply, merge=p.merge)


def _questions(ctx: AppContext, p: QuestionsParams) -> Outcome[Any]:
    return replies.open_questions(ctx, p.id)


def _reply(ctx: AppContext, p: ReplyParams) -> Outcome[Any]:
    return replies.reply_to_question(ctx, p.id, p.text, p.seq, "http")


def _send(ctx: AppContext, p: SendMessageParams) -> Outcome[Any]:
    return tools.send_message(ctx, p.text, p.priority, p.expect_reply)


def _end(ctx: AppContext, p: EndConversationParams) -> Outcome[Any]:
    return tools.end_conversation(ctx, p.title, p.summary)


def _get(ctx: AppContext, p: GetConversationParams) -> Outcome[Any]:
    return tools.get_conversation(ctx, p.id, p.limit, p.cursor)


SEND_MESSAGE = Operation(
    name="send-message",
    mcp_name="send_message",
    http_method="POST",
    http_path="/messages",
    params=SendMessageParams,
    func=_send,
    title="Message the user",
    description="Call it to tell the user something now, or to ask.",
    result=SendResult,
    idempotent=False,
    cli_args=("text",),
    cli_help="Send a message to the user. Example: vault-agent send-message 'index rebuilt'",
    side_effect=True,
    # A question may wait minutes for the user: progress notifications keep clients that
    # time out idle requests (unless progress resets the clock) from giving up on it.
    long_running=True,
)

END_CONVERSATION = Operation(
    name="end-conversation",
    mcp_name="end_conversation",
    http_method="POST",
    http_path="/conversations/end",
    params=EndConversationParams,
    func=_end,
    title="End conversation",
    description="Call it when the task is done or the topic changes.",
    result=EndResult,
    idempotent=False,
    cli_help="End the http conversation of the server. Example: vault-agent end-conversation --title 'Tidy'",
    side_effect=True,
)

GET_CONVERSATION = Operation(
    name="get-conversation",
    mcp_name="get_conversation",
    http_method="GET",
    http_path="/conversations",
    params=GetConversationParams,
    func=_get,
    title="Past conversations",
    description="Use it to recall earlier work: past sessions, or one's calls and writes.",
    result=ConversationAnswer,
    cli_help="List or show conversations. Example: vault-agent get-conversation --id ID --json",
    render=_render_conversations,
)

# The person's side of a question (agent_tool=False: HTTP routes, also under
# /conversations/{id}/..., and local `conversations questions|reply` commands; never MCP tools).
QUESTIONS = Operation(
    name="conversations-questions",
    mcp_name="conversation_questions",
    http_method="GET",
    http_path="/conversations/questions",
    params=QuestionsParams,
    func=_questions,
    title="Open questions",
    description="The agents' questions waiting for the person's reply (send_message with expect_reply "
    "from a client that cannot show a form).",
    result=QuestionList,
    agent_tool=False,
)

REPLY = Operation(
    name="conversations-reply",
    mcp_name="conversation_reply",
    http_method="POST",
    http_path="/conversations/reply",
    params=ReplyParams,
    func=_reply,
    title="Reply to the agent",
    description="Answer an agent's open question; the waiting send_message returns the text as its reply.",
    result=ReplyResult,
    idempotent=False,
    side_effect=True,
    agent_tool=False,
)

# Undo is the owner's action (the web page, `conversations undo`, a bearer-token HTTP call),
# never the agent's: no MCP tool. It is not gated by --allow-writes, which governs the
# agent's write tools: undo only puts back what the vault held before an agent's writes and
# refuses any file someone else changed (docs/web.md, README "Decisions").
UNDO = Operation(
    name="conversations-undo",
    mcp_name="conversation_undo",
    http_method="POST",
    http_path="/conversations/undo",
    params=UndoParams,
    func=_undo,
    title="Undo a conversation's writes",
    description="Revert the files a conversation wrote, every file or none: a dry run with a diff per "
    "file by default, apply to do it; a file someone else changed since is a conflict unless merge.",
    result=UndoResult,
    idempotent=False,
    side_effect=True,
    agent_tool=False,
)

OPERATIONS: tuple[Operation, ...] = (SEND_MESSAGE, END_CONVERSATION, GET_CONVERSATION, QUESTIONS, REPLY, UNDO)
