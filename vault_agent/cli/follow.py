"""`vault-agent messages`: recent messages from the records, or live from the server's SSE stream."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from typing import Any

from vault_agent.cli.request import START_HINT, _is_local, resolve_token
from vault_agent.config import Settings
from vault_agent.errors import ServerUnavailable, Unauthorized


def _line(event: dict[str, Any], as_json: bool) -> str:
    if as_json:
        return json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    at = str(event.get("at") or "")
    if event.get("type") == "reply":
        said = event.get("reply")
        return f"{at}  reply: {said}" if said is not None else f"{at}  no reply ({event.get('reason')})"
    if event.get("type") == "question":  # waits for the person: say how to answer it
        return (
            f"{at}  question, waiting until {event.get('expires_at')}: answer with {event.get('answer_with')}"
        )
    flag = " (high)" if event.get("priority") == "high" else ""
    ask = " [asks]" if event.get("expect_reply") else ""
    return f"{at}{flag}{ask}  {event.get('text')}"


def recent_messages(settings: Settings, limit: int, as_json: bool) -> None:
    """Print the newest `limit` messages of all conversations, oldest first."""
    from vault_agent.conversations.lines import MessageLine
    from vault_agent.conversations.store import ConversationStore, iso

    store = ConversationStore(settings.index_dir)
    found: list[dict[str, Any]] = []
    for cid, lines in store.read_many(reversed(store.ids())):
        msgs = [
            {
                "type": "message",
                "conversation_id": cid,
                "seq": ln.seq,
                "at": iso(ln.at),
                "priority": ln.priority,
                "expect_reply": ln.expect_reply,
                "text": ln.text,
            }
            for ln in lines
            if isinstance(ln, MessageLine)
        ]
        found = msgs + found
        if len(found) >= limit:
            break
    for event in found[-limit:] if limit > 0 else []:
        sys.stdout.write(_line(event, as_json) + "\n")
    sys.stdout.flush()


def follow_messages(settings: Settings, as_json: bool) -> None:
    """Print each message event of the server's `/messages/stream` until interrupted.

    Raises:
        ServerUnavailable: no server answers. Unauthorized: the token is refused.
    """
    from vault_agent.server_address import server_url

    base = server_url(settings).rstrip("/")
    headers = {"Accept": "text/event-stream"}
    token = resolve_token(settings, base)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(base + "/messages/stream", headers=headers)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({})) if _is_local(base) else None
    open_url = opener.open if opener is not None else urllib.request.urlopen
    try:
        resp = open_url(request, timeout=None)
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            raise Unauthorized(
                "the server refused the token; pass --token or set VAULT_AGENT_TOKEN"
            ) from None
        raise ServerUnavailable(f"the server at {base} answered HTTP {exc.code}; {START_HINT}") from None
    except (urllib.error.URLError, OSError):
        raise ServerUnavailable(f"no vault-agent server answers at {base}; {START_HINT}") from None
    with resp:
        for raw in resp:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line.startswith("data: "):
                sys.stdout.write(_line(json.loads(line[6:]), as_json) + "\n")
                sys.stdout.flush()
