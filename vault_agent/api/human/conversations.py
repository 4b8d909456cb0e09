"""Human output of `get-conversation` (one conversation, or the list)."""

from __future__ import annotations

import shlex
from typing import Any


def render_conversations(body: Any) -> str:
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
        return "\n".join(out + _more(data))
    listed = [
        f"{r['id']}  {r['status']:<5}  {r['tool_calls']:>3} calls {r['writes']:>3} writes  {r.get('title') or ''}"
        for r in rows
    ]
    return "\n".join(listed + _more(data)) or "no conversations"


def _more(data: dict[str, Any]) -> list[str]:
    cursor = data.get("next_cursor")
    return [f"-- more: add --cursor {shlex.quote(cursor)}"] if isinstance(cursor, str) else []


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
        files = e.get("files")
        count = len(files) if isinstance(files, list) else files
        return f"the user's undo of {count} file(s): {e.get('outcome') or 'done'}"
    if kind == "ask":
        return "waiting for the user's reply (vault-agent conversations reply)"
    return str({k: v for k, v in e.items() if k not in ("type", "at")})
