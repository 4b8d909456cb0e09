"""Questions that wait for the person's reply outside MCP elicitation, and the replies.

`send_message(expect_reply)` asks through the client's form (MCP elicitation) when the
client offers one. Otherwise it waits here: an `ask` line in the record says that the
question is open, until when, and which process waits (its owner token, `liveness`); the
question goes to every live listener (`GET /messages/stream`, `messages --follow`, the web
page) and to the client as a log message (logger `vault-agent.questions`) naming the
command that answers it; the call then waits up to `conversations.reply_timeout_seconds`.

`reply_to_question` (HTTP `POST /conversations/{id}/reply`, CLI `conversations reply ID
TEXT`) appends the reply line once: `ConversationStore.append_once` runs under the
record's lock, so a reply racing the timeout either lands (the agent gets it) or finds the
timeout line (the person is told it came too late), never both. A reply given in the
waiting process wakes the waiter at once; one from another process (the CLI beside a
stdio `mcp`) is seen by watching the record's size every `POLL_S`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from vault_agent.contracts import Outcome
from vault_agent.conversations.digest import end_line
from vault_agent.conversations.hub import MAX_HTTP_WAITS, Channel, ConvContext, ConversationHub
from vault_agent.conversations.lines import AskLine, Line, MessageLine, ReplyLine, StartLine
from vault_agent.conversations.liveness import OPEN, owner_alive
from vault_agent.conversations.records import (
    MAX_MESSAGE_CHARS,
    OpenQuestion,
    QuestionList,
    ReplyResult,
    ReplyVia,
)
from vault_agent.conversations.store import ConversationStore, iso, valid_id
from vault_agent.errors import Conflict, InvalidParameter, TooLarge

POLL_S = 0.25  # how soon a reply written by another process reaches the waiting call


@dataclass
class Answer:
    reply: str | None
    reason: str | None  # None with a reply; else declined | timeout | unsupported
    via: ReplyVia | None
    note: str | None = None


def answer_command(cid: str) -> str:
    return f"vault-agent conversations reply {cid} TEXT"


def _is_reply_to(seq: int) -> Callable[[Line], bool]:
    return lambda line: isinstance(line, ReplyLine) and line.seq == seq


def _reply_in(lines: list[Line], seq: int) -> ReplyLine | None:
    return next((line for line in lines if isinstance(line, ReplyLine) and line.seq == seq), None)


def wait_for_reply(hub: ConversationHub, channel: Channel, cid: str, seq: int, text: str) -> Answer:
    """Ask outside the client and wait (bounded) for the reply; see the module docstring."""
    if not hub.owner.acquire():
        return Answer(
            None,
            "unsupported",
            None,
            "the client cannot show questions and the state dir is read-only, so nobody can "
            "answer here; ask the question in your own reply to the user instead",
        )
    event = hub.expect_reply(cid, seq, channel.transport)
    if event is None:
        return Answer(
            None,
            "unsupported",
            None,
            f"{MAX_HTTP_WAITS} questions sent over HTTP are already waiting for the user; ask "
            "this one in your own reply to the user instead",
        )
    now = hub.clock()
    until = now + hub.reply_timeout_s
    try:
        # To this record, even if the user ended it meanwhile (the hub would open a new one).
        hub.store.append(cid, [AskLine(at=now, seq=seq, via="reply", until=until, owner=hub.owner.token)])
        question = {
            "type": "question",
            "conversation_id": cid,
            "seq": seq,
            "at": iso(now),
            "expires_at": iso(until),
            "client": channel.client,
            "text": text,
            "answer_with": answer_command(cid),
        }
        hub.publish(question)
        channel.notify(question)
        line = _await_line(hub, cid, seq, event)
        if line is None:
            timeout = ReplyLine(at=hub.clock(), seq=seq, reply=None, reason="timeout", via=None)
            line = _stands(hub.store.append_once(cid, timeout, _is_reply_to(seq)))
    finally:
        hub.stop_expecting(cid, seq)
    if line.reply is not None:
        return Answer(line.reply, None, "cli" if line.via == "cli" else "http")
    if line.reason == "declined":
        return Answer(None, "declined", None, "the person ended this conversation instead of answering")
    return Answer(
        None,
        "timeout",
        None,
        f"nobody answered within {int(hub.reply_timeout_s)} seconds (the client cannot show "
        f"questions, so the person was asked to run '{answer_command(cid)}' or use the web page); "
        "ask the question in your own reply to the user instead",
    )


def _stands(line: Line) -> ReplyLine:
    """The reply line `append_once` kept (only reply lines pass `_is_reply_to`)."""
    assert isinstance(line, ReplyLine)
    return line


def _await_line(hub: ConversationHub, cid: str, seq: int, event: threading.Event) -> ReplyLine | None:
    """The reply line once one is recorded; None at the deadline. An ended conversation
    ends the wait with a `declined` line (the person closed it instead of answering)."""
    deadline = time.monotonic() + hub.reply_timeout_s
    seen = -1
    while True:
        size = hub.store.size(cid)
        if size != seen or event.is_set():
            seen = size
            event.clear()
            lines = hub.store.read(cid)
            found = _reply_in(lines, seq)
            if found is not None:
                return found
            if end_line(lines) is not None:
                ended = ReplyLine(at=hub.clock(), seq=seq, reply=None, reason="declined", via=None)
                return _stands(hub.store.append_once(cid, ended, _is_reply_to(seq)))
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        event.wait(min(POLL_S, remaining))


# ----------------------------------------------------------------------------- the person's side
def _open_in(store: ConversationStore, cid: str, lines: list[Line], now: float) -> list[OpenQuestion]:
    if end_line(lines) is not None:
        return []
    texts = {line.seq: line.text for line in lines if isinstance(line, MessageLine)}
    answered = {line.seq for line in lines if isinstance(line, ReplyLine)}
    start = lines[0]
    client = (start.client if isinstance(start, StartLine) else "") or "unknown"
    asked = [line for line in lines if isinstance(line, AskLine)]
    return [
        OpenQuestion(
            conversation_id=cid,
            message_seq=ask.seq,
            client=client,
            text=texts.get(ask.seq) or "",
            asked_at=iso(ask.at),
            expires_at=iso(ask.until),
            answer_with=answer_command(cid),
        )
        for ask in asked
        if ask.seq not in answered and ask.until > now and owner_alive(store.dir, ask.owner)
    ]


def _open_ids(store: ConversationStore) -> list[str]:
    """Conversations marked open by a live or dead server (liveness markers), oldest first."""
    try:
        return sorted(n for n in os.listdir(store.dir / OPEN) if valid_id(n))
    except FileNotFoundError:
        return []


def _now(ctx: ConvContext) -> float:
    return float(ctx.hub.clock()) if ctx.hub is not None else time.time()


def open_questions(ctx: ConvContext, cid: str | None) -> Outcome[QuestionList]:
    """The questions waiting for the person's reply: of one conversation, or of every open one.

    Raises:
        NotFound: unknown or corrupt id.
    """
    store = ConversationStore(ctx.settings.index_dir)
    now = _now(ctx)
    if cid is not None:
        return Outcome(data=QuestionList(questions=_open_in(store, cid, store.read(cid), now)))
    questions: list[OpenQuestion] = []
    for found, lines in store.read_many(_open_ids(store)):
        questions.extend(_open_in(store, found, lines, now))
    return Outcome(data=QuestionList(questions=questions))


def reply_to_question(
    ctx: ConvContext, cid: str, text: str, seq: int | None, via: ReplyVia
) -> Outcome[ReplyResult]:
    """Deliver the person's reply to the send_message waiting on it (see the module docstring).

    Raises:
        NotFound: unknown id. InvalidParameter: empty text, or several questions wait and
        `seq` does not say which. TooLarge: over 4,000 characters. Conflict: no question
        of that conversation waits (answered, timed out, or its server stopped).
    """
    if not text.strip():
        raise InvalidParameter("text must not be empty")
    if len(text) > MAX_MESSAGE_CHARS:
        raise TooLarge(f"text is longer than {MAX_MESSAGE_CHARS} characters; shorten it")
    store = ConversationStore(ctx.settings.index_dir)
    waiting = _open_in(store, cid, store.read(cid), _now(ctx))
    if seq is not None:
        waiting = [q for q in waiting if q.message_seq == seq]
    if not waiting:
        what = (
            f"question {seq} of that conversation is not"
            if seq is not None
            else "no question of that conversation is"
        )
        raise Conflict(
            f"{what} waiting for a reply (answered, timed out, or its server stopped); "
            "list the open ones with 'vault-agent conversations questions'"
        )
    if len(waiting) > 1:
        seqs = ", ".join(str(q.message_seq) for q in waiting)
        raise InvalidParameter(
            f"{len(waiting)} questions are waiting (message_seq {seqs}); pass seq to pick one"
        )
    target = waiting[0].message_seq
    line = ReplyLine(at=_now(ctx), seq=target, reply=text, reason=None, via=via)
    stands = store.append_once(cid, line, _is_reply_to(target))
    if stands is not line:
        raise Conflict(
            f"question {target} was answered or timed out a moment ago; your reply was not delivered"
        )
    if ctx.hub is not None:
        ctx.hub.reply_arrived(cid, target)
    return Outcome(data=ReplyResult(conversation_id=cid, message_seq=target, delivered=True))
