"""The lines of a conversation record and the models every surface returns.

A record is a sequence of frames (`vault_agent.framing`), one JSON object per line, with
`t` naming its kind: `start`, `call`, `write`, `message`, `reply`, `end`. Lines never hold
note text, and query text only when `conversations.record_queries` is on.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, RootModel

MAX_MESSAGE_CHARS = 4000  # send_message text cap (documented in README)
MAX_TITLE_CHARS = 200
MAX_SUMMARY_CHARS = 4000

EndReason = Literal["agent", "idle", "user"]
SummarySource = Literal["agent", "sampling", "digest"]


class ConversationSummary(BaseModel):
    """One conversation in a listing: no entries, only what identifies and sums it up."""

    id: str
    client: str
    started_at: str
    ended_at: str | None
    status: Literal["open", "ended"]
    end_reason: str | None
    title: str | None
    summary: str | None
    summary_source: SummarySource | None
    messages: int
    replies: int
    tool_calls: int
    writes: int


class ConversationList(BaseModel):
    conversations: list[ConversationSummary]
    total: int  # records kept (retention bounds it)
    truncated: bool  # more conversations follow: pass next_cursor as cursor
    next_cursor: str | None = None


class ConversationPage(BaseModel):
    """One conversation with a bounded page of its entries (paged like vault_read)."""

    conversation: ConversationSummary
    entries: list[dict[str, Any]]
    next_cursor: str | None = Field(description="pass as cursor for the next entries; null at the end")


class ConversationAnswer(RootModel[ConversationList | ConversationPage]):
    """What get_conversation returns: the list without an id, one record's page with it."""


class SendResult(BaseModel):
    conversation_id: str
    message_seq: int
    delivered_to: int  # live listeners (MCP client, SSE streams) that got it
    reply: str | None = None
    reason: Literal["unsupported", "declined", "timeout"] | None = None


class EndResult(BaseModel):
    conversation: ConversationSummary


class UndoItem(BaseModel):
    path: str
    action: Literal["restore", "remove"]  # restore the old bytes / remove a file the agent created
    status: Literal["planned", "done", "conflict"]


class UndoResult(BaseModel):
    conversation_id: str
    dry_run: bool
    files: list[UndoItem]
    not_undoable: list[str]  # calls recorded without old bytes (moves, folder deletes): revert by hand
