"""Core functions behind send_message, end_conversation, get_conversation and the CLI.

Transports bind a `Channel` around a call (`hub.bound`); without one (HTTP, CLI) a call
belongs to the process's shared 'http' conversation and has no back channel. A question
goes through the client's form (MCP elicitation) when it has one, else through the reply
channel of `replies` (the person answers with `vault-agent conversations reply` or the web
page).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from typing import Any, Literal

from vault_agent.contracts import Outcome
from vault_agent.conversations.digest import digest, end_line, summary_of
from vault_agent.conversations.hub import CURRENT, Channel, ConvContext, ConversationHub, DetachedChannel
from vault_agent.conversations.lines import (
    AskLine,
    CallLine,
    EndLine,
    Line,
    MessageLine,
    ReplyLine,
    WriteLine,
)
from vault_agent.conversations.records import (
    MAX_MESSAGE_CHARS,
    MAX_SUMMARY_CHARS,
    MAX_TITLE_CHARS,
    ConversationList,
    ConversationPage,
    EndResult,
    SendResult,
)
from vault_agent.conversations.replies import Answer, wait_for_reply
from vault_agent.conversations.store import ConversationStore, iso
from vault_agent.errors import InvalidParameter, TooLarge, range_text
from vault_agent.paging import decode_cursor, encode_cursor, fit, json_chars, offset_of

log = logging.getLogger("vault_agent.conversations")

PATH_KEYS = ("path", "source", "destination", "relative_dir", "artifact_path", "source_path")
QUERY_KEYS = ("query", "q", "pattern", "find")
LIST_DEFAULT, LIST_MAX = 20, 100
ENTRIES_DEFAULT, ENTRIES_MAX = 100, 500
PAGE_MAX_CHARS = 20_000  # one page of get_conversation, as JSON (next_cursor for the rest)
_DETACHED = DetachedChannel()
_hub_lock = threading.Lock()


def hub_of(ctx: ConvContext) -> ConversationHub:
    """This process's hub (built once per context; installs the write hook)."""
    hub = ctx.hub
    if hub is not None:
        return hub
    with _hub_lock:
        if ctx.hub is None:
            s = ctx.settings
            built = ConversationHub(
                ConversationStore(s.index_dir),
                idle_s=s.conversations_idle_minutes * 60.0,
                retention=s.conversations_retention,
                reply_timeout_s=float(s.conversations_reply_timeout_seconds),
                clock=ctx.conversation_clock or time.time,
            )

            def record(
                tool: str, rel: str, before: bytes | None, after: bytes | None, moved_to: str | None = None
            ) -> None:
                observe_write(built, tool, rel, before, after, moved_to)

            ctx.write_observer = record
            ctx.hub = built
        return ctx.hub


def _channel() -> Channel:
    return CURRENT.get() or _DETACHED


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ----------------------------------------------------------------------------- recording
def observe_write(
    hub: ConversationHub,
    tool: str,
    rel: str,
    before: bytes | None,
    after: bytes | None,
    moved_to: str | None = None,
) -> None:
    """Record one write of the current session (after None: deleted), keeping the bytes for undo.

    Both sides are kept (content-addressed, so a chain of writes stores each version once):
    the bytes before restore the file, the bytes after let `undo --merge` tell the agent's
    own changes from edits someone else made between two writes.
    """
    channel = CURRENT.get()
    if channel is None:
        return  # not an agent session (HTTP script, CLI): nothing to attribute it to
    cid = hub.conversation_of(channel)
    before_sha = _sha(before) if before is not None else None
    if before is not None and before_sha is not None:
        hub.store.keep_old_bytes(cid, before_sha, before)
    if after is not None:
        hub.store.keep_old_bytes(cid, _sha(after), after)
    line = WriteLine(
        at=hub.clock(),
        tool=tool,
        path=rel,
        before_sha=before_sha,
        after_sha=_sha(after) if after is not None else None,
        old="backup" if before is not None else "none",
        trashed_to=moved_to,  # where the file itself went (the vault's .trash/)
    )
    hub.append(channel, [line])


def record_call(
    ctx: ConvContext, channel: Channel, tool: str, arguments: dict[str, Any], outcome: str, ms: float
) -> None:
    """One line per tool call: tool, vault-relative paths, outcome code, duration."""
    if tool == "end_conversation":
        return  # its `end` line is the record of that call
    hub = hub_of(ctx)
    paths = [v[:500] for k in PATH_KEYS if isinstance(v := arguments.get(k), str) and v]
    queries = [v[:1000] for k in QUERY_KEYS if isinstance(v := arguments.get(k), str)]
    query = queries[0] if queries and ctx.settings.conversations_record_queries else None
    line = CallLine(
        at=hub.clock(), tool=tool[:100], paths=paths, outcome=outcome, ms=round(ms, 1), query=query
    )
    hub.append(channel, [line])


# ----------------------------------------------------------------------------- tools
def _checked_text(text: str, what: str, cap: int, *, required: bool) -> str:
    if required and not text.strip():
        raise InvalidParameter.about(what, "must not be empty")
    if len(text) > cap:
        raise TooLarge.about(what, f"must be at most {cap:,} characters; shorten it or split it into several")
    return text


def _optional_text(text: str | None, what: str, cap: int) -> str | None:
    """A stripped optional text within its cap; blank counts as not given."""
    if text is None:
        return None
    return _checked_text(text, what, cap, required=False).strip() or None


def send_message(
    ctx: ConvContext, text: str, priority: Literal["normal", "high"], expect_reply: bool
) -> Outcome[SendResult]:
    """Record a message to the user and deliver it to every live listener; maybe wait for a reply.

    Raises:
        InvalidParameter: empty text. TooLarge: over MAX_MESSAGE_CHARS.
    """
    _checked_text(text, "text", MAX_MESSAGE_CHARS, required=True)
    channel, hub = _channel(), hub_of(ctx)
    cid, seq = hub.next_message_seq(channel)
    at = hub.clock()
    hub.append(
        channel, [MessageLine(at=at, seq=seq, text=text, priority=priority, expect_reply=expect_reply)]
    )
    event = {
        "type": "message",
        "conversation_id": cid,
        "seq": seq,
        "at": iso(at),
        "client": channel.client,
        "priority": priority,
        "expect_reply": expect_reply,
        "text": text,
    }
    delivered = hub.publish(event) + (1 if channel.notify(event) else 0)
    result = SendResult(conversation_id=cid, message_seq=seq, delivered_to=delivered)
    if expect_reply:
        answer = _ask(hub, channel, cid, seq, text)
        hub.publish(
            {
                "type": "reply",
                "conversation_id": cid,
                "seq": seq,
                "at": iso(hub.clock()),
                "reply": answer.reply,
                "reason": answer.reason,
                "via": answer.via,
            }
        )
        result.reply, result.reason = answer.reply, answer.reason  # type: ignore[assignment]
        result.reply_via, result.note = answer.via, answer.note
    return Outcome(data=result)


def _ask(hub: ConversationHub, channel: Channel, cid: str, seq: int, text: str) -> Answer:
    """The client's form when it has one, else the reply channel (`replies`)."""
    reply, reason = channel.ask(text, hub.reply_timeout_s)
    if reason == "unsupported":
        return wait_for_reply(hub, channel, cid, seq, text)
    if reply is not None and len(reply) > MAX_MESSAGE_CHARS:
        reply = reply[:MAX_MESSAGE_CHARS]
    hub.append(channel, [ReplyLine(at=hub.clock(), seq=seq, reply=reply, reason=reason, via="client")])
    note = None
    if reason == "timeout":
        note = (
            f"nobody answered the question in the client within {int(hub.reply_timeout_s)} seconds; "
            "ask it in your own reply to the user instead"
        )
    return Answer(reply, reason, "client" if reply is not None else None, note)


SAMPLING_PROMPT = (
    "Write a title (one line, at most 80 characters) and a summary (at most 5 sentences) of this "
    "agent session in a notes vault. Answer exactly as:\nTitle: ...\nSummary: ...\n\nSession digest:\n"
)


def _parse_sampled(text: str) -> tuple[str | None, str | None]:
    title = summary = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.lower().startswith("title:") and title is None:
            title = line[6:].strip() or None
        elif line.lower().startswith("summary:") and summary is None:
            summary = line[8:].strip() or None
    if title is None and summary is None and text.strip():
        first, _, rest = text.strip().partition("\n")
        title, summary = first.strip(), (rest.strip() or first.strip())
    return title, summary


def end_conversation(ctx: ConvContext, title: str | None, summary: str | None) -> Outcome[EndResult]:
    """Close the session's conversation; title and summary from the agent, sampling or a digest.

    Raises:
        TooLarge: title over 200 or summary over 4,000 characters.
    """
    title = _optional_text(title, "title", MAX_TITLE_CHARS)
    summary = _optional_text(summary, "summary", MAX_SUMMARY_CHARS)
    channel, hub = _channel(), hub_of(ctx)
    cid = hub.conversation_of(channel)
    lines = hub.store.read(cid)
    source = "agent"
    if title is None or summary is None:
        d_title, d_summary = digest(lines)
        sampled = channel.sample(SAMPLING_PROMPT + f"Title hint: {d_title}\n{d_summary}", hub.reply_timeout_s)
        s_title, s_summary = _parse_sampled(sampled) if sampled else (None, None)
        if s_summary is not None and summary is None:
            source = "sampling"
        elif summary is None:
            source = "digest"
        title = title or (s_title[:MAX_TITLE_CHARS] if s_title else None) or d_title
        summary = summary or (s_summary[:MAX_SUMMARY_CHARS] if s_summary else None) or d_summary
    hub.end(channel, title, summary, source)
    row = summary_of(cid, hub.store.read(cid), hub.clock(), hub.idle_s)
    return Outcome(data=EndResult(conversation=row))


def get_conversation(
    ctx: ConvContext, cid: str | None, limit: int | None, cursor: str | None
) -> Outcome[ConversationList | ConversationPage]:
    """No id: the newest conversations, one page; an id: that record, one page of its entries.

    Both pages stop at `limit` items or PAGE_MAX_CHARS characters and give `next_cursor`
    when more follow.

    Raises:
        NotFound: unknown or corrupt id. InvalidParameter: bad limit or cursor.
    """
    s = ctx.settings
    store = ConversationStore(s.index_dir)
    now, idle_s = _now(ctx), s.conversations_idle_minutes * 60.0
    if cid is None:
        n = LIST_DEFAULT if limit is None else limit
        if not 1 <= n <= LIST_MAX:
            raise InvalidParameter.about(
                "limit", f"must be an integer {range_text(1, LIST_MAX)} when listing conversations"
            )
        ids = store.ids()
        newest_first = list(reversed(ids))
        if cursor is not None:  # the id of the last conversation of the previous page
            (last_id,) = decode_cursor(cursor, (str,))
            newest_first = [i for i in newest_first if i < last_id]
        rows = []
        for found, lines in store.read_many(newest_first):
            rows.append(summary_of(found, lines, now, idle_s))
            if len(rows) == n:
                break
        shown = fit(rows, PAGE_MAX_CHARS, lambda row: json_chars(row.model_dump(mode="json")))
        # More follow when the page was cut, or when older records remain after its last one.
        more = shown < len(rows) or (bool(rows) and rows[-1].id != newest_first[-1])
        return Outcome(
            data=ConversationList(
                conversations=rows[:shown],
                total=len(ids),
                truncated=more,
                next_cursor=encode_cursor(rows[shown - 1].id) if more and shown else None,
            )
        )
    n = ENTRIES_DEFAULT if limit is None else limit
    if not 1 <= n <= ENTRIES_MAX:
        raise InvalidParameter.about(
            "limit", f"must be an integer {range_text(1, ENTRIES_MAX)} for the entries of one conversation"
        )
    start = offset_of(cursor)
    lines = store.read(cid)
    entries = [_entry(line) for line in lines[1:]]
    page = entries[start : start + n]
    page = page[: fit(page, PAGE_MAX_CHARS, json_chars)]
    more = start + len(page) < len(entries)
    return Outcome(
        data=ConversationPage(
            conversation=summary_of(cid, lines, now, idle_s),
            entries=page,
            next_cursor=str(start + len(page)) if more else None,
        )
    )


def _now(ctx: ConvContext) -> float:
    if ctx.hub is not None:
        return float(ctx.hub.clock())
    clock = ctx.conversation_clock
    return float(clock()) if clock is not None else time.time()


def _entry(line: Line) -> dict[str, Any]:
    """One entry of get_conversation: the line's object, its times in ISO 8601."""
    out = line.payload()
    at = out.pop("at", None)
    if isinstance(line, AskLine):
        out["until"] = iso(line.until)  # when the question stops waiting
        out.pop("owner", None)  # which process waits: internal to liveness
    return {"type": out.pop("t", None), "at": iso(float(at)) if isinstance(at, int | float) else None, **out}


def end_by_user(ctx: ConvContext, cid: str) -> Outcome[EndResult]:
    """The user's `conversations end ID`: close it with a digest (already ended: unchanged).

    Raises:
        NotFound: unknown or corrupt id.
    """
    store = ConversationStore(ctx.settings.index_dir)
    lines = store.read(cid)
    now = _now(ctx)
    if end_line(lines) is None:
        title, summary = digest(lines)
        store.append(
            cid, [EndLine(at=now, reason="user", title=title, summary=summary, summary_source="digest")]
        )
        lines = store.read(cid)
    return Outcome(
        data=EndResult(
            conversation=summary_of(cid, lines, now, ctx.settings.conversations_idle_minutes * 60.0)
        )
    )
