"""What a record amounts to: its summary row, and the deterministic digest used as a
title and summary when neither the agent nor the client's model supplied one."""

from __future__ import annotations

from typing import Any

from vault_agent.conversations.records import ConversationSummary
from vault_agent.conversations.store import Line, iso

MAX_PATHS_LISTED = 10


def _num(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def last_activity(lines: list[Line]) -> float:
    return max((_num(line.get("at")) for line in lines), default=0.0)


def end_line(lines: list[Line]) -> Line | None:
    return next((line for line in lines if line.get("t") == "end"), None)


def summary_of(cid: str, lines: list[Line], now: float, idle_s: float) -> ConversationSummary:
    """The listing row of one record; an unended record idle past the window reads as ended."""
    start = lines[0]
    end = end_line(lines)
    kinds = [line.get("t") for line in lines]
    ended_at: str | None = None
    reason: str | None = None
    if end is not None:
        ended_at, reason = iso(_num(end.get("at"))), str(end.get("reason"))
    elif now - last_activity(lines) > idle_s:
        ended_at, reason = iso(last_activity(lines) + idle_s), "idle"
    source = end.get("summary_source") if end is not None else None
    title, summary = _text(end, "title"), _text(end, "summary")
    if end is None and reason == "idle":
        (title, summary), source = digest(lines), "digest"  # ended by the clock: nobody wrote one
    return ConversationSummary(
        id=cid,
        client=str(start.get("client") or "unknown"),
        started_at=iso(_num(start.get("at"))),
        ended_at=ended_at,
        status="ended" if ended_at is not None else "open",
        end_reason=reason,
        title=title,
        summary=summary,
        summary_source=source if source in ("agent", "sampling", "digest") else None,
        messages=kinds.count("message"),
        replies=kinds.count("reply"),
        tool_calls=kinds.count("call"),
        writes=kinds.count("write"),
    )


def _text(line: Line | None, key: str) -> str | None:
    value = line.get(key) if line is not None else None
    return value if isinstance(value, str) else None


def touched_paths(lines: list[Line]) -> tuple[list[str], list[str]]:
    """(notes read or named by tool calls, notes written), each sorted and de-duplicated."""
    named: set[str] = set()
    written: set[str] = set()
    for line in lines:
        if line.get("t") == "call":
            paths = line.get("paths")
            if isinstance(paths, list):
                named.update(p for p in paths if isinstance(p, str))
        elif line.get("t") == "write" and isinstance(line.get("path"), str):
            written.add(str(line["path"]))
    return sorted(named - written), sorted(written)


def _listed(paths: list[str]) -> str:
    shown = ", ".join(paths[:MAX_PATHS_LISTED])
    more = len(paths) - MAX_PATHS_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def digest(lines: list[Line]) -> tuple[str, str]:
    """A deterministic (title, summary): counts, notes touched, writes, first message."""
    read, written = touched_paths(lines)
    kinds = [line.get("t") for line in lines]
    calls, messages = kinds.count("call"), kinds.count("message")
    if written:
        title = f"Changed {len(written)} note{'s' if len(written) != 1 else ''}: {_listed(written[:3])}"
    elif read:
        title = f"Read {len(read)} note{'s' if len(read) != 1 else ''}: {_listed(read[:3])}"
    else:
        title = (
            f"{calls} tool call{'s' if calls != 1 else ''}, {messages} message{'s' if messages != 1 else ''}"
        )
    parts = [f"{calls} tool calls, {kinds.count('write')} writes, {messages} messages to the user."]
    if written:
        parts.append(f"Written: {_listed(written)}.")
    if read:
        parts.append(f"Consulted: {_listed(read)}.")
    first = next((line for line in lines if line.get("t") == "message"), None)
    if first is not None and isinstance(first.get("text"), str):
        parts.append(f"First message: {str(first['text'])[:200]}")
    return title[:200], " ".join(parts)
