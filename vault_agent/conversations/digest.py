"""What a record amounts to: its summary row, and the deterministic digest used as a
title and summary when neither the agent nor the client's model supplied one."""

from __future__ import annotations

from vault_agent.conversations.lines import (
    CallLine,
    EndLine,
    Line,
    MessageLine,
    ReplyLine,
    StartLine,
    WriteLine,
)
from vault_agent.conversations.records import ConversationSummary, SummarySource
from vault_agent.conversations.store import iso

MAX_PATHS_LISTED = 10


def last_activity(lines: list[Line]) -> float:
    return max((line.at for line in lines), default=0.0)


def end_line(lines: list[Line]) -> EndLine | None:
    return next((line for line in lines if isinstance(line, EndLine)), None)


def count(lines: list[Line], kind: type[Line]) -> int:
    """How many lines of one kind a record holds."""
    return sum(isinstance(line, kind) for line in lines)


def summary_of(cid: str, lines: list[Line], now: float, idle_s: float) -> ConversationSummary:
    """The listing row of one record; an unended record idle past the window reads as ended."""
    start = lines[0]
    assert isinstance(start, StartLine)  # the store reads no record without one
    end = end_line(lines)
    ended_at: str | None = None
    reason: str | None = None
    title = summary = source = None
    if end is not None:
        ended_at, reason = iso(end.at), end.reason
        title, summary, source = end.title, end.summary, end.summary_source
    elif now - last_activity(lines) > idle_s:
        ended_at, reason = iso(last_activity(lines) + idle_s), "idle"
        (title, summary), source = digest(lines), "digest"  # ended by the clock: nobody wrote one
    return ConversationSummary(
        id=cid,
        client=start.client or "unknown",
        started_at=iso(start.at),
        ended_at=ended_at,
        status="ended" if ended_at is not None else "open",
        end_reason=reason,
        title=title,
        summary=summary,
        summary_source=_source(source),
        messages=count(lines, MessageLine),
        replies=count(lines, ReplyLine),
        tool_calls=count(lines, CallLine),
        writes=count(lines, WriteLine),
    )


def _source(value: str | None) -> SummarySource | None:
    match value:
        case "agent" | "sampling" | "digest":
            return value
    return None


def touched_paths(lines: list[Line]) -> tuple[list[str], list[str]]:
    """(notes read or named by tool calls, notes written), each sorted and de-duplicated."""
    named: set[str] = set()
    written: set[str] = set()
    for line in lines:
        match line:
            case CallLine(paths=paths):
                named.update(paths)
            case WriteLine(path=path):
                written.add(path)
    return sorted(named - written), sorted(written)


def _listed(paths: list[str]) -> str:
    shown = ", ".join(paths[:MAX_PATHS_LISTED])
    more = len(paths) - MAX_PATHS_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def digest(lines: list[Line]) -> tuple[str, str]:
    """A deterministic (title, summary): counts, notes touched, writes, first message."""
    read, written = touched_paths(lines)
    calls, messages = count(lines, CallLine), count(lines, MessageLine)
    if written:
        title = f"Changed {len(written)} note{'s' if len(written) != 1 else ''}: {_listed(written[:3])}"
    elif read:
        title = f"Read {len(read)} note{'s' if len(read) != 1 else ''}: {_listed(read[:3])}"
    else:
        title = (
            f"{calls} tool call{'s' if calls != 1 else ''}, {messages} message{'s' if messages != 1 else ''}"
        )
    parts = [f"{calls} tool calls, {count(lines, WriteLine)} writes, {messages} messages to the user."]
    if written:
        parts.append(f"Written: {_listed(written)}.")
    if read:
        parts.append(f"Consulted: {_listed(read)}.")
    first = next((line for line in lines if isinstance(line, MessageLine)), None)
    if first is not None:
        parts.append(f"First message: {first.text[:200]}")
    return title[:200], " ".join(parts)
