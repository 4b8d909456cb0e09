"""The lines of a conversation record: one model per kind, told apart by the tag `t`.

A record (`store.py`) is a sequence of frames (`vault_agent.framing`), one JSON object per
line. `parse_line` turns each into one of the models below, once, where the store reads
it; every consumer then dispatches on the class (`match`, `isinstance`), never on the tag:

    start    the conversation began (client, transport)
    call     one tool call: tool, vault-relative paths, outcome code, duration
    write    one write of the agent: the file's sha256 before and after (bytes kept for undo)
    message  send_message's text to the person
    ask      a question waits for a reply outside the client (until when, which process)
    reply    the person's reply, or why none came (declined, timeout, unsupported)
    end      the conversation ended: why, its title and summary
    undo     the person's undo of the conversation's writes, with each file's outcome

Lines never hold note text, and query text only when `conversations.record_queries` is on.

The format on disk is the contract: `payload` gives back exactly the keys a line was read
with or built with (`exclude_unset`), so a line read and written again is the same bytes,
and a key a newer version added rides along (`extra="allow"`). A frame that is valid JSON
but no line this version knows (an unknown tag, a field of the wrong type) is an
`OtherLine` holding its object as it is: shown as it is, counted as nothing. Torn or
corrupt frames never get here: the checksums of `framing` end a record's valid prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError


class _Line(BaseModel):
    # strict: a value of another JSON type is not this line (it would not write back the same)
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)
    omit_when_none: ClassVar[frozenset[str]] = frozenset()  # keys written only when they hold a value

    t: str  # the kind: each line's class fixes it
    at: float  # Unix time, seconds

    def payload(self) -> dict[str, Any]:
        """The line's JSON object, as written to the record (tag included)."""
        out = self.model_dump(mode="json", exclude_unset=True)
        for key in self.omit_when_none:
            if out.get(key, 0) is None:
                del out[key]
        return {"t": self.t, **out}


class StartLine(_Line):
    t: Literal["start"] = "start"
    client: str  # as the client named itself (cut to 100 characters)
    transport: str  # stdio | http | mcp-http


class CallLine(_Line):
    omit_when_none = frozenset({"query"})
    t: Literal["call"] = "call"
    tool: str
    paths: list[str]  # the vault-relative paths among its arguments
    outcome: str  # OK or the error code
    ms: float
    query: str | None = None  # only with conversations.record_queries


class WriteLine(_Line):
    omit_when_none = frozenset({"trashed_to"})
    t: Literal["write"] = "write"
    tool: str
    path: str
    before_sha: str | None  # None: the agent created the file
    after_sha: str | None  # None: the agent deleted it
    old: str  # backup (the bytes before are kept) | none
    trashed_to: str | None = None  # a delete: where the file went (the vault's .trash/)


class MessageLine(_Line):
    t: Literal["message"] = "message"
    seq: int
    text: str
    priority: str  # normal | high
    expect_reply: bool


class AskLine(_Line):
    t: Literal["ask"] = "ask"
    seq: int  # the message asked
    via: str  # reply: the reply channel (replies.py)
    until: float  # when the question stops waiting
    owner: str  # the owner token of the process that waits (liveness.py)


class ReplyLine(_Line):
    t: Literal["reply"] = "reply"
    seq: int
    reply: str | None
    reason: str | None  # None with a reply; else declined | timeout | unsupported
    via: str | None = None  # client | cli | http; records before the reply channel have none


class EndLine(_Line):
    t: Literal["end"] = "end"
    reason: str  # agent | user | idle | server stopped
    title: str
    summary: str
    summary_source: str  # agent | sampling | digest


class UndoneFile(BaseModel):
    """One file of an `undo` line: what undo did to it."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    path: str
    action: str  # restore | remove | merge
    state: str  # restored | rolled back | left restored | untouched
    sha: str | None  # sha256 of the bytes undo put back (None: removed)


class UndoLine(_Line):
    omit_when_none = frozenset({"reason"})
    t: Literal["undo"] = "undo"
    outcome: str | None = None  # done | rolled back | failed; older records have none
    files: list[UndoneFile] | int  # older records count the files only
    reason: str | None = None  # why it rolled back or failed


@dataclass(frozen=True)
class OtherLine:
    """A valid frame that is no line this version knows: kept as it was read."""

    data: dict[str, object]

    @property
    def at(self) -> float:
        """Its time when it has one (0 when not), like every line's `at`."""
        at = self.data.get("at")
        return float(at) if isinstance(at, int | float) else 0.0

    def payload(self) -> dict[str, Any]:
        return dict(self.data)


KnownLine = Annotated[
    StartLine | CallLine | WriteLine | MessageLine | AskLine | ReplyLine | EndLine | UndoLine,
    Field(discriminator="t"),
]
Line = StartLine | CallLine | WriteLine | MessageLine | AskLine | ReplyLine | EndLine | UndoLine | OtherLine

_KNOWN: TypeAdapter[KnownLine] = TypeAdapter(KnownLine)


def parse_line(data: dict[str, object]) -> Line:
    """The line a frame's object holds (see the module docstring for what is not known)."""
    try:
        return _KNOWN.validate_python(data)
    except ValidationError:
        return OtherLine(data)
