"""The models every surface returns about conversations (the lines of a record on disk
are `lines.py`'s)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, RootModel

MAX_MESSAGE_CHARS = 4000  # send_message text cap (documented in README)
MAX_TITLE_CHARS = 200
MAX_SUMMARY_CHARS = 4000

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


ReplyVia = Literal["client", "cli", "http"]  # the client's form (elicitation), or the reply channel


class SendResult(BaseModel):
    conversation_id: str
    message_seq: int
    delivered_to: int  # live listeners (MCP client, SSE streams) that got it
    reply: str | None = None
    reason: Literal["unsupported", "declined", "timeout"] | None = None
    reply_via: ReplyVia | None = None
    note: str | None = Field(
        default=None, description="when no reply came: what happened and what to do instead"
    )


class OpenQuestion(BaseModel):
    """A send_message question waiting for the person's reply outside the agent's client."""

    conversation_id: str
    message_seq: int
    client: str
    text: str
    asked_at: str
    expires_at: str
    answer_with: str  # the CLI command that answers it


class QuestionList(BaseModel):
    questions: list[OpenQuestion]


class ReplyResult(BaseModel):
    conversation_id: str
    message_seq: int
    delivered: bool  # recorded; the waiting send_message returns it


class EndResult(BaseModel):
    conversation: ConversationSummary


UndoAction = Literal["restore", "remove", "merge"]
UndoStatus = Literal["planned", "done", "conflict", "undone"]


class UndoItem(BaseModel):
    """One file of an undo: what would happen (dry run) or happened, and why not when not."""

    path: str
    # restore: put back the bytes from before the agent's first write; remove: the agent
    # created the file (it goes to the trash); merge: take out only the agent's changes,
    # keeping edits made by someone else between or after them (--merge).
    action: UndoAction
    # planned (dry run) / done (applied) / conflict (refused, see reason) / undone (the
    # file already holds what undo would put there).
    status: UndoStatus
    reason: str | None = None  # why a conflict, or since when undone
    kept: str | None = None  # merge: the edits by someone else that the result keeps
    diff: str | None = None  # dry run: unified diff from the file now to the undone file
    diff_truncated: bool = False


class UndoResult(BaseModel):
    conversation_id: str
    dry_run: bool
    merge: bool
    files: list[UndoItem]
    not_undoable: list[str]  # calls recorded without old bytes (moves, folder deletes): revert by hand
