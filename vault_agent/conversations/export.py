"""A conversation as a Markdown note (`vault-agent conversations export ID --to FOLDER`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from vault_agent.conversations.hub import ConvContext
from vault_agent.conversations.records import ConversationPage, ConversationSummary
from vault_agent.errors import Conflict


def _entry_line(e: dict[str, Any]) -> str:
    kind, at = e.get("type"), str(e.get("at") or "")[11:19]
    if kind == "message":
        flag = " (high)" if e.get("priority") == "high" else ""
        return f"- {at} **agent**{flag}: {e.get('text')}"
    if kind == "reply":
        said = e.get("reply")
        return f"- {at} **user**: {said}" if said is not None else f"- {at} *no reply ({e.get('reason')})*"
    if kind == "call":
        paths = ", ".join(f"`{p}`" for p in e.get("paths") or [])
        return f"- {at} `{e.get('tool')}` {paths} → {e.get('outcome')} ({e.get('ms')} ms)"
    if kind == "write":
        before = str(e.get("before_sha") or "new")[:12]
        return f"- {at} wrote `{e.get('path')}` ({before} → {str(e.get('after_sha'))[:12]})"
    if kind == "undo":
        outcome = e.get("outcome") or "done"  # records before per-file outcomes had none
        return f"- {at} the user's undo of this conversation's writes: {outcome}"
    if kind == "ask":
        return f"- {at} *waiting for the user's reply until {str(e.get('until') or '')[11:19]}*"
    if kind == "end":
        return f"- {at} ended ({e.get('reason')})"
    return f"- {at} {kind}"


def to_markdown(row: ConversationSummary, entries: list[dict[str, Any]]) -> str:
    """Frontmatter (id, times, client, counts) + summary + one bullet per entry."""
    title = (row.title or f"Conversation {row.id}").replace("\n", " ")
    front = [
        "---",
        f"conversation_id: {row.id}",
        f"client: {row.client!r}",
        f"started: {row.started_at}",
        f"ended: {row.ended_at or 'open'}",
        f"summary_source: {row.summary_source or 'none'}",
        f"tool_calls: {row.tool_calls}",
        f"writes: {row.writes}",
        f"messages: {row.messages}",
        "---",
        "",
        f"# {title}",
        "",
    ]
    body = [row.summary or "", "", "## Record", ""] + [_entry_line(e) for e in entries]
    return "\n".join(front + body).rstrip("\n") + "\n"


def write_export(ctx: ConvContext, cid: str, folder: Path) -> Path:
    """Write conversation `cid` as `<folder>/<cid>.md` (never overwriting); returns the file.

    Raises:
        NotFound: unknown id. Conflict: the file already exists.
    """
    from vault_agent.conversations.tools import ENTRIES_MAX, get_conversation

    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = get_conversation(ctx, cid, ENTRIES_MAX, cursor).data
        assert isinstance(page, ConversationPage)
        entries.extend(page.entries)
        cursor = page.next_cursor
        if cursor is None:
            break
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{cid}.md"
    if target.exists():
        raise Conflict(f"'{target.name}' already exists in that folder; remove it or choose another folder")
    tmp = folder / f".{cid}.md.tmp"
    tmp.write_text(to_markdown(page.conversation, entries), encoding="utf-8")
    os.replace(tmp, target)
    return target
